#include "calibrate/cpu.hpp"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "calibrate/source_text.hpp"
#include "exec/kernels.hpp"
#include "common/error.hpp"

namespace parasim::calibrate {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
  }
  return "unknown processor";
}

/// The sizes and rates of a sweep, as a source sentence: "64^3 → 12.3, 128^3 → 45.6 GFLOP/s".
std::string listing(const std::vector<Sample>& samples, double unit, const char* unit_name, const std::function<std::string(double)>& size_text) {
  std::string out;
  for (const Sample& s : samples) out += (out.empty() ? "" : ", ") + size_text(s.size) + " -> " + fixed(s.rate_per_s / unit, 2);
  return out + " " + unit_name;
}

}  // namespace

CpuMeasurement measure_cpu(const CpuOptions& options) {
  CpuMeasurement m;
  m.cpu = source_text(cpu_model());
  m.blas = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  m.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  exec::set_blas_threads(static_cast<int>(m.threads));
  m.memory_capacity_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));

  for (const std::int64_t n : options.gemm_sizes) {
    PARASIM_CHECK(n >= 1, "GEMM sizes are positive");
    const auto count = static_cast<std::size_t>(n * n);
    std::vector<float> a(count, 1.0f), b(count, 0.5f), c(count, 0.0f);
    const auto ni = static_cast<blasint>(n);
    const double s = best_seconds([&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni, b.data(), ni, 0.0f, c.data(), ni); },
                                  2, options.min_seconds_per_size);
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    m.gemm.push_back({flops, flops / s});
  }
  {
    float a = 1, b = 1, c = 0;
    m.call_overhead_s = best_seconds([&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1); }, 1000, 0.01);
  }

  // The executor's own memory-bound and softmax kernels, on this thread, as its compute stream
  // runs them (its other threads are the communication streams').
  exec::Scratch scratch;
  for (const double bytes : options.memory_bytes) {
    PARASIM_CHECK(bytes >= 8, "a memory pass moves at least one float each way");
    exec::stream_pass(bytes, scratch);  // first touch
    const double s = best_seconds([&] { exec::stream_pass(bytes, scratch); }, 3, options.min_seconds_per_size);
    m.memory.push_back({bytes, bytes / s});
  }
  {
    const double bytes = options.softmax_elements * 8;
    exec::softmax_pass(bytes, 1024, scratch);
    const double s = best_seconds([&] { exec::softmax_pass(bytes, 1024, scratch); }, 3, options.min_seconds_per_size);
    m.softmax_flops_per_s = options.softmax_flops_per_element * options.softmax_elements / s;
  }
  {
    const auto n = static_cast<std::size_t>(std::max(1.0, options.optimizer_parameters));
    std::vector<float> state(4 * n, 1.0f / 64);
    float* p = state.data();
    const double s = best_seconds([&] { exec::adam_update(p, p + n, p + 2 * n, p + 3 * n, n); }, 3, options.min_seconds_per_size);
    m.optimizer_flops_per_s = 12.0 * static_cast<double>(n) / s;
  }
  return m;
}

sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m) {
  PARASIM_CHECK(!m.gemm.empty() && !m.memory.empty(), "a CPU measurement has GEMM and memory samples");
  sim::DeviceProfile d = base;
  const double peak = best_rate(m.gemm), bandwidth = best_rate(m.memory);
  const std::string where = "measured by `parasim calibrate --backend cpu` on " + m.cpu + " (GEMMs on " + std::to_string(m.threads) +
                            " threads, " + m.blas + "; memory-bound kernels on one)";
  d.description = base.description + "; calibrated on " + m.cpu;
  d.peak_flops_per_s = {{models::DType::F32, peak}};
  d.gemm_efficiency = efficiency_curve(m.gemm, peak);
  d.memory_bandwidth_bytes_per_s = bandwidth;
  d.memory_efficiency = efficiency_curve(m.memory, bandwidth);
  d.softmax_flops_per_s = m.softmax_flops_per_s;
  d.optimizer_flops_per_s = m.optimizer_flops_per_s;
  d.memory_capacity_bytes = m.memory_capacity_bytes;
  d.memory_reserved_bytes = m.memory_capacity_bytes / 10;
  d.kernel_launch_overhead_s = m.call_overhead_s;
  auto cube = [](double flops) { return std::to_string(static_cast<long long>(std::llround(std::cbrt(flops / 2)))) + "^3"; };
  d.sources = {
      {"peak_flops_per_s.fp32", where + ": the fastest cblas_sgemm of the sweep, " + fixed(peak / 1e9, 2) + " GFLOP/s"},
      {"gemm_efficiency", where + ": cblas_sgemm of n^3 (2n^3 FLOPs) over the fastest, " + listing(m.gemm, 1e9, "GFLOP/s", cube)},
      {"memory_bandwidth_bytes_per_s", where + ": the fastest pass of parasim execute's memory-bound kernel (y = x/2 + 1/128 over floats), " + fixed(bandwidth / 1e9, 2) + " GB/s"},
      {"memory_efficiency", where + ": that kernel over the fastest, by bytes moved (half read, half written), " + listing(m.memory, 1e9, "GB/s", bytes_text)},
      {"memory_capacity_bytes", where + ": physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE)"},
      {"memory_reserved_bytes", "assumption: a tenth of the measured capacity for the operating system and the runtime"},
      {"kernel_launch_overhead_s", where + ": the fastest 1x1x1 cblas_sgemm call"},
  };
  if (m.softmax_flops_per_s > 0)
    d.sources["softmax_flops_per_s"] = where + ": parasim execute's softmax kernel over rows of 1024 floats, 5 FLOPs an element as the model counts a softmax's, " +
                                      fixed(m.softmax_flops_per_s / 1e9, 2) + " GFLOP/s";
  if (m.optimizer_flops_per_s > 0)
    d.sources["optimizer_flops_per_s"] = where + ": parasim execute's Adam update of " + "4,194,304 parameters, 12 FLOPs each as the model counts an optimizer step's, " + fixed(m.optimizer_flops_per_s / 1e9, 2) + " GFLOP/s";
  return d;
}

}  // namespace parasim::calibrate
