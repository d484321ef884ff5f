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

  for (const double bytes : options.triad_bytes) {
    const auto n = static_cast<std::size_t>(bytes / (3 * sizeof(double)));
    PARASIM_CHECK(n >= m.threads, "triad arrays are at least one element per thread");
    std::vector<double> x(n), y(n), z(n);
    auto on_threads = [&](const std::function<void(std::size_t, std::size_t)>& work) {
      std::vector<std::thread> workers;
      for (unsigned k = 0; k < m.threads; ++k) workers.emplace_back(work, n * k / m.threads, n * (k + 1) / m.threads);
      for (auto& w : workers) w.join();
    };
    // Each thread first-touches its own part, so its pages sit near the core that streams them.
    on_threads([&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) x[i] = 0, y[i] = 1, z[i] = 2;
    });
    const double s = best_seconds(
        [&] {
          on_threads([&](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) x[i] = y[i] + 3.0 * z[i];
          });
        },
        2, options.min_seconds_per_size);
    const double moved = static_cast<double>(3 * n * sizeof(double));
    m.triad.push_back({moved, moved / s});
  }
  return m;
}

sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m) {
  PARASIM_CHECK(!m.gemm.empty() && !m.triad.empty(), "a CPU measurement has GEMM and triad samples");
  sim::DeviceProfile d = base;
  const double peak = best_rate(m.gemm), bandwidth = best_rate(m.triad);
  const std::string where = "measured by `parasim calibrate --backend cpu` on " + m.cpu + " (" + std::to_string(m.threads) + " threads, " + m.blas + ")";
  d.description = base.description + "; calibrated on " + m.cpu;
  d.peak_flops_per_s = {{models::DType::F32, peak}};
  d.gemm_efficiency = efficiency_curve(m.gemm, peak);
  d.memory_bandwidth_bytes_per_s = bandwidth;
  d.memory_efficiency = efficiency_curve(m.triad, bandwidth);
  d.memory_capacity_bytes = m.memory_capacity_bytes;
  d.memory_reserved_bytes = m.memory_capacity_bytes / 10;
  d.kernel_launch_overhead_s = m.call_overhead_s;
  auto cube = [](double flops) { return std::to_string(static_cast<long long>(std::llround(std::cbrt(flops / 2)))) + "^3"; };
  d.sources = {
      {"peak_flops_per_s.fp32", where + ": the fastest cblas_sgemm of the sweep, " + fixed(peak / 1e9, 2) + " GFLOP/s"},
      {"gemm_efficiency", where + ": cblas_sgemm of n^3 (2n^3 FLOPs) over the fastest, " + listing(m.gemm, 1e9, "GFLOP/s", cube)},
      {"memory_bandwidth_bytes_per_s", where + ": the fastest triad x = y + 3z over doubles, " + fixed(bandwidth / 1e9, 2) + " GB/s"},
      {"memory_efficiency", where + ": triad over the fastest, by bytes moved (two arrays read, one written), " + listing(m.triad, 1e9, "GB/s", bytes_text)},
      {"memory_capacity_bytes", where + ": physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE)"},
      {"memory_reserved_bytes", "assumption: a tenth of the measured capacity for the operating system and the runtime"},
      {"kernel_launch_overhead_s", where + ": the fastest 1x1x1 cblas_sgemm call"},
  };
  return d;
}

}  // namespace parasim::calibrate
