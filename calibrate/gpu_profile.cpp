#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "calibrate/gpu.hpp"
#include "calibrate/source_text.hpp"
#include "common/error.hpp"

namespace parasim::calibrate {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<std::string> profile_device_for(const std::string& cuda_name) {
  const std::string n = lower(cuda_name);
  auto has = [&](const char* part) { return n.find(part) != std::string::npos; };
  if (has("a100")) return has("40gb") ? "a100-40gb" : "a100-80gb";
  if (has("h200")) return "h200";
  if (has("h100")) return "h100-sxm";
  if (has("b200")) return "b200";
  if (has("v100")) return "v100";
  return std::nullopt;
}

sim::DeviceProfile calibrated_gpu(const sim::DeviceProfile& base, const CudaMeasurement& m, const std::string& what) {
  PARASIM_CHECK(!m.gemm.empty() && !m.copy.empty(), "a GPU measurement has GEMM and copy samples");
  const auto peak = base.peak_for(models::DType::F16);
  if (!peak) throw InputError(what, 0, 0, "", "the profile device \"" + base.name + "\" has no fp16 peak to measure GEMMs against");
  const double bandwidth = base.memory_bandwidth_bytes_per_s;
  auto check = [&](const std::vector<Sample>& samples, double limit, const char* figure) {
    for (const Sample& s : samples)
      if (s.rate_per_s > limit)
        throw InputError(what, 0, 0, "",
                         "measured " + fixed(s.rate_per_s / 1e12, 3) + " T/s of " + figure + ", above " + base.name + "'s datasheet " +
                             fixed(limit / 1e12, 3) + ": the GPU (" + m.device_name + ") is not a " + base.name + "; name its profile device with --device");
  };
  check(m.gemm, *peak, "fp16 GEMM FLOPs");
  check(m.copy, bandwidth, "device-memory bytes");
  sim::DeviceProfile d = base;
  const std::string where = "measured by `parasim calibrate --backend cuda` on " + m.device_name;
  d.description = base.description + "; calibrated on " + m.device_name;
  d.gemm_efficiency = efficiency_curve(m.gemm, *peak);
  // The executor's memory-bound kernel where this build has it (what its memory-bound passes run),
  // else the copy engine's rate.
  // Passes small enough for L2 can beat device memory: they count at the datasheet bandwidth, and
  // only those of 256 MiB or more (beyond any L2) say whether the GPU is the profile's device.
  const bool kernel = !m.memory.empty();
  std::vector<Sample> memory;
  for (Sample s : m.memory) {
    if (s.size >= double(256 << 20)) check(std::vector<Sample>{s}, bandwidth, "device-memory bytes");
    s.rate_per_s = std::min(s.rate_per_s, bandwidth);
    memory.push_back(s);
  }
  d.memory_efficiency = efficiency_curve(kernel ? memory : m.copy, bandwidth);
  if (m.softmax_flops_per_s > 0) d.softmax_flops_per_s = m.softmax_flops_per_s;
  d.kernel_launch_overhead_s = m.launch_overhead_s;
  // A thin GEMM's factor against the square curve just set (calibrate/sweep.hpp), where measured,
  // over the factor of the sweep's widest dim: at half the other two that GEMM is no longer thin,
  // so it stands for the square shapes within the same sweep, and a change of the GPU's clock
  // between the square and the thin sweeps (a GPU slows as it heats under long GEMMs) cancels out.
  // Seen on an H100 SXM: 4096 x 8192 x 8192 at 0.855 of the square curve, and every thin dim of
  // 256 or more within 0.86 to 0.93.
  std::string thin_text;
  if (!m.thin.empty()) {
    auto [curve, text] = thin_gemm_curve(d, models::DType::F16, m.thin, m.thin_other);
    const double widest = curve.points.back().second;
    PARASIM_CHECK(widest > 0, "a thin-GEMM factor is positive");
    for (auto& point : curve.points) point.second = std::min(1.0, point.second / widest);
    d.gemm_thin_efficiency = std::move(curve);
    thin_text = std::move(text) + "; each over the widest's (" + std::to_string(m.thin.back().dim) + ", not thin against " + std::to_string(m.thin_other) +
                "): " + fixed(widest, 3);
  }
  d.memory_capacity_bytes = m.memory_capacity_bytes;
  std::string gemm, copy;
  for (const Sample& s : m.gemm)
    gemm += (gemm.empty() ? "" : ", ") + std::to_string(std::llround(std::cbrt(s.size / 2))) + "^3 -> " + fixed(s.rate_per_s / 1e12, 1);
  for (const Sample& s : kernel ? memory : m.copy) copy += (copy.empty() ? "" : ", ") + bytes_text(s.size) + " -> " + fixed(s.rate_per_s / 1e9, 0);
  d.sources["gemm_efficiency"] = where + ": cublasGemmEx fp16 (fp32 accumulation) of n^3 over the datasheet fp16 peak, each enqueued back to back, " + gemm + " TFLOP/s";
  d.sources["memory_efficiency"] = where + (kernel ? ": parasim execute's memory-bound kernel (bf16, 16-byte vectors)" : ": cudaMemcpy device to device") +
                                   " over the datasheet bandwidth, by bytes read + written, " + copy + " GB/s";
  if (m.softmax_flops_per_s > 0)
    d.sources["softmax_flops_per_s"] = where + ": parasim execute's softmax kernel (a block a row) over bf16 rows of 2048, 5 FLOPs an element as the model counts a softmax's, " +
                                      fixed(m.softmax_flops_per_s / 1e12, 3) + " TFLOP/s";
  if (!thin_text.empty())
    d.sources["gemm_thin_efficiency"] = where + ": cublasGemmEx fp16 with one of m, n, k thin and the other two " + std::to_string(m.thin_other) +
                                        ", the square curve's time over the measured, averaged over the three orientations: " + thin_text;
  d.sources["kernel_launch_overhead_s"] = where + (m.memory.empty() ? ": the fastest 1-byte device-to-device cudaMemcpyAsync" : ": the fastest one-element pass of the executor's memory-bound kernel") +
                                          ", enqueued back to back (the time each takes among others)";
  d.sources["memory_capacity_bytes"] = where + ": cudaMemGetInfo total";
  return d;
}

RankInterference slowest_rank(const std::vector<RankInterference>& ranks) {
  PARASIM_CHECK(!ranks.empty(), "an interference measurement has at least one rank");
  const RankInterference* compute = &ranks.front();
  const RankInterference* collective = &ranks.front();
  // a/b < c/d as a·d < c·b: the times are positive.
  for (const RankInterference& r : ranks) {
    if (r.gemm_alone_s * compute->gemm_beside_s < compute->gemm_alone_s * r.gemm_beside_s) compute = &r;
    if (r.collective_alone_s * collective->collective_beside_s < collective->collective_alone_s * r.collective_beside_s) collective = &r;
  }
  return {compute->gemm_alone_s, compute->gemm_beside_s, collective->collective_alone_s, collective->collective_beside_s};
}

sim::DeviceProfile calibrated_interference(const sim::DeviceProfile& base, const std::vector<InterferenceMeasurement>& measured, const std::string& what) {
  if (measured.empty()) throw InputError(what, 0, 0, "", "no interference measurement");
  for (const InterferenceMeasurement& m : measured)
    for (const double t : {m.gemm_alone_s, m.gemm_beside_s, m.collective_alone_s, m.collective_beside_s})
      if (!(t > 0)) throw InputError(what, 0, 0, "", "an interference measurement with a time of " + fixed(t * 1e6, 3) + " us");
  auto compute_of = [](const InterferenceMeasurement& m) { return std::min(1.0, m.gemm_alone_s / m.gemm_beside_s); };
  auto communication_of = [](const InterferenceMeasurement& m) { return std::min(1.0, m.collective_alone_s / m.collective_beside_s); };
  // Each kind's measurements by size. A kind measured at one size has that size's rates at every
  // size; one measured at several has its rates by size (sim/interference.hpp), and as its one rate
  // the measurement nearest 16 MiB in log2 (the size a single measurement is taken at, a gradient
  // bucket's order of size).
  std::map<NcclTest, std::map<double, const InterferenceMeasurement*>> by_kind;
  for (const InterferenceMeasurement& m : measured)
    if (!by_kind[m.collective].emplace(m.collective_bytes, &m).second)
      throw InputError(what, 0, 0, "", "two interference measurements of " + std::string(to_string(m.collective)) + " at " + bytes_text(m.collective_bytes));
  auto one_of = [](const std::map<double, const InterferenceMeasurement*>& sizes) {
    const InterferenceMeasurement* nearest = sizes.begin()->second;
    for (const auto& [bytes, m] : sizes)
      if (std::abs(std::log2(std::max(bytes, 1.0)) - 24) < std::abs(std::log2(std::max(nearest->collective_bytes, 1.0)) - 24)) nearest = m;
    return nearest;
  };
  sim::DeviceProfile d = base;
  auto set_class = [&](std::size_t k, const std::map<double, const InterferenceMeasurement*>& sizes) {
    d.interference.compute[k] = compute_of(*one_of(sizes));
    d.interference.communication[k] = communication_of(*one_of(sizes));
    d.interference.compute_by_size[k] = {};
    d.interference.communication_by_size[k] = {};
    if (sizes.size() < 2) return;
    for (const auto& [bytes, m] : sizes) {
      d.interference.compute_by_size[k].points.emplace_back(bytes, compute_of(*m));
      d.interference.communication_by_size[k].points.emplace_back(bytes, communication_of(*m));
    }
  };
  // The kind that stands for the classes none names: the all-reduce, else the first measured.
  const NcclTest standing = by_kind.count(NcclTest::AllReduce) ? NcclTest::AllReduce : measured.front().collective;
  // The NCCL classes come first in the rate tables (sim/interference.hpp), indexed by CollectiveKind.
  for (std::size_t k = 0; k <= static_cast<std::size_t>(sim::CollectiveKind::SendRecv); ++k) set_class(k, by_kind.at(standing));
  for (const auto& [test, sizes] : by_kind) set_class(static_cast<std::size_t>(collective_kind(test)), sizes);
  // Rates of 1 on both sides (neither slowed the other) are no interference: the profile then has
  // no such figure, and no source for one.
  if (d.interference.none()) {
    d.sources.erase("interference");
    return d;
  }
  const InterferenceMeasurement& first = measured.front();
  std::string text = "measured by `" + first.command + "` on " + std::to_string(first.ranks) + " x " + first.device_name + ": " + first.gemm_text + " " +
                     std::to_string(first.gemm_n) + "^3 on every rank";
  for (const InterferenceMeasurement& m : measured)
    text += "; " + std::string(to_string(m.collective)) + ": the GEMM took " + fixed(m.gemm_alone_s * 1e3, 3) + " ms alone and " + fixed(m.gemm_beside_s * 1e3, 3) +
            " ms beside a " + bytes_text(m.collective_bytes) + " " + m.collective_text + " (compute keeps " + fixed(compute_of(m), 3) + "), the collective " +
            fixed(m.collective_alone_s * 1e3, 3) + " ms alone and " + fixed(m.collective_beside_s * 1e3, 3) + " ms beside the GEMMs (communication keeps " +
            fixed(communication_of(m), 3) + ")";
  std::vector<std::string> unmeasured;
  for (std::size_t k = 0; k <= static_cast<std::size_t>(sim::CollectiveKind::SendRecv); ++k) {
    const bool named = std::any_of(measured.begin(), measured.end(), [&](const InterferenceMeasurement& m) { return static_cast<std::size_t>(collective_kind(m.collective)) == k; });
    if (!named) unmeasured.push_back(sim::interference_class_names()[k]);
  }
  if (!unmeasured.empty()) {
    text += "; " + std::string(to_string(standing)) + " stands for ";
    for (std::size_t i = 0; i < unmeasured.size(); ++i) text += (i == 0 ? "" : i + 1 == unmeasured.size() ? " and " : ", ") + unmeasured[i];
  }
  if (base.sources.count("interference")) text += "; Transformer Engine's rates and the channel count as before: " + base.sources.at("interference");
  d.sources["interference"] = text;
  return d;
}

}  // namespace parasim::calibrate
