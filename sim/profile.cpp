#include "sim/profile.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace parasim::sim {

double EfficiencyCurve::at(double size) const {
  PARASIM_CHECK(!points.empty(), "an efficiency curve needs at least one point");
  if (!(size > points.front().first)) return points.front().second;  // also catches NaN and size <= 0
  if (size >= points.back().first) return points.back().second;
  // Piecewise linear in log2(size): efficiency curves span sizes from kilobytes to terabytes, and
  // the published microbenchmarks sample them at powers of two.
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& [x1, y1] = points[i];
    if (size > x1) continue;
    const auto& [x0, y0] = points[i - 1];
    const double t = (std::log2(size) - std::log2(x0)) / (std::log2(x1) - std::log2(x0));
    return y0 + t * (y1 - y0);
  }
  return points.back().second;
}

std::optional<double> DeviceProfile::peak_for(models::DType dtype) const {
  auto it = peak_flops_per_s.find(dtype);
  if (it == peak_flops_per_s.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> DeviceProfile::attention_kernels() const {
  std::vector<std::string> kernels;
  for (const auto& a : attention_efficiency)
    if (std::find(kernels.begin(), kernels.end(), a.implementation) == kernels.end()) kernels.push_back(a.implementation);
  return kernels;
}

const EfficiencyCurve& DeviceProfile::gemm_curve(models::DType dtype) const {
  auto it = gemm_efficiency_by_dtype.find(dtype);
  return it == gemm_efficiency_by_dtype.end() ? gemm_efficiency : it->second;
}

std::vector<std::string> figure_names(const DeviceProfile& device) {
  std::vector<std::string> names;
  for (const auto& [dtype, peak] : device.peak_flops_per_s)
    names.push_back("peak_flops_per_s." + std::string(models::to_string(dtype)));
  for (const auto& [dtype, curve] : device.gemm_efficiency_by_dtype)
    names.push_back("gemm_efficiency_by_dtype." + std::string(models::to_string(dtype)));
  if (!device.attention_efficiency.empty()) names.emplace_back("attention_efficiency");
  for (const char* n : {"memory_bandwidth_bytes_per_s", "memory_capacity_bytes", "memory_reserved_bytes", "gemm_efficiency",
                        "memory_efficiency", "kernel_launch_overhead_s"})
    names.emplace_back(n);
  if (device.softmax_flops_per_s > 0) names.emplace_back("softmax_flops_per_s");
  if (device.rank_spread.ranks > 0) names.emplace_back("rank_spread");
  if (device.shared_host.ranks > 0) names.emplace_back("shared_host");
  if (device.optimizer_flops_per_s > 0) names.emplace_back("optimizer_flops_per_s");
  if (device.optimizer_bytes_per_s > 0) {
    names.emplace_back("optimizer_bytes_per_s");
    names.emplace_back("optimizer_memory_efficiency");
  }
  if (device.weight_reuse_bytes_per_s > 0) {
    names.emplace_back("weight_reuse_bytes_per_s");
    names.emplace_back("weight_reuse_efficiency");
  }
  if (device.weight_reuse_backward_bytes_per_s > 0) {
    names.emplace_back("weight_reuse_backward_bytes_per_s");
    names.emplace_back("weight_reuse_backward_efficiency");
  }
  if (device.memory_reuse_bytes_per_s > 0) {
    names.emplace_back("memory_reuse_bytes_per_s");
    names.emplace_back("memory_reuse_efficiency");
    names.emplace_back("memory_reuse_read_efficiency");
  }
  if (!device.interference.none()) names.emplace_back("interference");
  if (device.convolution != "winograd") names.emplace_back("convolution");
  if (!device.gemm_thin_efficiency.points.empty()) names.emplace_back("gemm_thin_efficiency");
  if (!device.gemm_thin_efficiency_by_dim[0].points.empty()) names.emplace_back("gemm_thin_efficiency_by_dim");
  if (!device.gemm_thin_backward_efficiency.points.empty()) names.emplace_back("gemm_thin_backward_efficiency");
  return names;
}

std::vector<std::string> figure_names(const LinkProfile& link) {
  std::vector<std::string> names{"bandwidth_bytes_per_s", "latency_s", "efficiency"};
  if (!link.protocols.empty()) names.emplace_back("protocols");
  for (const auto& [kind, curve] : link.collective_efficiency) names.push_back("collective_efficiency." + std::string(to_string(kind)));
  return names;
}

const DeviceProfile& Profile::device(const std::string& name) const {
  auto it = devices.find(name);
  PARASIM_CHECK(it != devices.end(), "device \"" + name + "\" is not in profile \"" + this->name + "\"");
  return it->second;
}

const LinkProfile& Profile::link(const std::string& name) const {
  auto it = links.find(name);
  PARASIM_CHECK(it != links.end(), "link \"" + name + "\" is not in profile \"" + this->name + "\"");
  return it->second;
}

}  // namespace parasim::sim
