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
#include "sim/cost_model.hpp"

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

std::vector<double> root2_steps(double from, double to) {
  std::vector<double> out;
  for (int k = 0; from * std::pow(2.0, k / 2.0) <= to * (1 + 1e-9); ++k) out.push_back(std::round(from * std::pow(2.0, k / 2.0)));
  return out;
}

CpuMeasurement measure_cpu(const CpuOptions& options) {
  CpuMeasurement m;
  m.cpu = source_text(cpu_model());
  m.blas = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  m.thin_other = options.thin_other;
  m.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  exec::set_blas_threads(static_cast<int>(m.threads));
  m.memory_capacity_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));

  // The sweep's GEMMs (n³) and the held-out shapes, timed in interleaved rounds (sweep.hpp).
  // Fifteen rounds: a load that comes and goes over seconds (another process on a shared machine)
  // then falls on every size of the sweep and every held-out shape alike.
  constexpr int kRounds = 15;
  {
    std::vector<std::array<std::int64_t, 3>> shapes;
    for (const std::int64_t n : options.gemm_sizes) shapes.push_back({n, n, n});
    const std::int64_t o = options.thin_other;
    for (const std::int64_t d : options.thin_dims) {
      shapes.push_back({d, o, o});
      shapes.push_back({o, d, o});
      shapes.push_back({o, o, d});
    }
    shapes.insert(shapes.end(), options.held_out_gemms.begin(), options.held_out_gemms.end());
    std::vector<std::vector<float>> operands;
    std::vector<std::function<void()>> runs;
    for (const auto& [mm, nn, kk] : shapes) {
      PARASIM_CHECK(mm >= 1 && nn >= 1 && kk >= 1, "GEMM shapes are positive");
      operands.emplace_back(static_cast<std::size_t>(mm * kk), 1.0f);
      operands.emplace_back(static_cast<std::size_t>(kk * nn), 0.5f);
      operands.emplace_back(static_cast<std::size_t>(mm * nn), 0.0f);
    }
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const auto [mm, nn, kk] = shapes[i];
      float *a = operands[3 * i].data(), *b = operands[3 * i + 1].data(), *c = operands[3 * i + 2].data();
      runs.emplace_back([=] { exec::sgemm(false, false, mm, nn, kk, a, b, c); });
    }
    const std::vector<double> s = interleaved_medians(runs, kRounds, options.min_seconds_per_size);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const double flops = 2.0 * static_cast<double>(shapes[i][0]) * static_cast<double>(shapes[i][1]) * static_cast<double>(shapes[i][2]);
      const std::size_t squares = options.gemm_sizes.size(), thin_end = squares + 3 * options.thin_dims.size();
      if (i < squares) {
        m.gemm.push_back({flops, flops / s[i]});
      } else if (i < thin_end) {
        if ((i - squares) % 3 == 0) m.thin.push_back({options.thin_dims[(i - squares) / 3], {s[i], s[i + 1], s[i + 2]}});
      } else {
        m.held_out_gemm.push_back({shapes[i], s[i]});
      }
    }
  }
  {
    float a = 1, b = 1, c = 0;
    m.call_overhead_s = best_seconds([&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1); }, 1000, 0.01);
  }

  // The executor's own memory-bound and softmax kernels, on this thread, as its compute stream
  // runs them (its other threads are the communication streams').
  exec::Scratch scratch;
  {
    std::vector<double> sizes = options.memory_bytes;
    sizes.insert(sizes.end(), options.held_out_memory_bytes.begin(), options.held_out_memory_bytes.end());
    std::vector<std::function<void()>> runs;
    for (const double bytes : sizes) {
      PARASIM_CHECK(bytes >= 8, "a memory pass moves at least one float each way");
      exec::stream_pass(bytes, scratch);  // first touch
      runs.emplace_back([bytes, &scratch] { exec::stream_pass(bytes, scratch); });
    }
    const std::vector<double> s = interleaved_medians(runs, kRounds, options.min_seconds_per_size);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (i < options.memory_bytes.size()) {
        m.memory.push_back({sizes[i], sizes[i] / s[i]});
      } else {
        m.held_out_memory.push_back({sizes[i], s[i]});
      }
    }
  }
  {
    const double bytes = options.softmax_elements * 8;
    exec::softmax_pass(bytes, 1024, scratch);
    const double s = median_seconds([&] { exec::softmax_pass(bytes, 1024, scratch); }, 5, options.min_seconds_per_size);
    m.softmax_flops_per_s = options.softmax_flops_per_element * options.softmax_elements / s;
  }
  {
    const auto n = static_cast<std::size_t>(std::max(1.0, options.optimizer_parameters));
    std::vector<float> state(4 * n, 1.0f / 64);
    float* p = state.data();
    const double s = median_seconds([&] { exec::adam_update(p, p + n, p + 2 * n, p + 3 * n, n); }, 5, options.min_seconds_per_size);
    m.optimizer_flops_per_s = 12.0 * static_cast<double>(n) / s;
  }
  return m;
}

sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m) {
  PARASIM_CHECK(!m.gemm.empty() && !m.memory.empty(), "a CPU measurement has GEMM and memory samples");
  sim::DeviceProfile d = base;
  const double peak = best_rate(m.gemm), bandwidth = best_rate(m.memory);
  const std::string where = "measured by `parasim calibrate --backend cpu` on " + m.cpu + " (GEMMs on " + std::to_string(m.threads) +
                            " threads, " + m.blas + "; memory-bound kernels on one; each size's median time)";
  d.description = base.description + "; calibrated on " + m.cpu;
  d.peak_flops_per_s = {{models::DType::F32, peak}};
  d.gemm_efficiency = efficiency_curve(m.gemm, peak);
  d.memory_bandwidth_bytes_per_s = bandwidth;
  d.memory_efficiency = efficiency_curve(m.memory, bandwidth);
  d.softmax_flops_per_s = m.softmax_flops_per_s;
  d.convolution = "im2col-gemm";
  d.optimizer_flops_per_s = m.optimizer_flops_per_s;
  d.memory_capacity_bytes = m.memory_capacity_bytes;
  d.memory_reserved_bytes = m.memory_capacity_bytes / 10;
  d.kernel_launch_overhead_s = m.call_overhead_s;
  auto cube = [](double flops) { return std::to_string(static_cast<long long>(std::llround(std::cbrt(flops / 2)))) + "^3"; };
  d.sources = {
      {"peak_flops_per_s.fp32", where + ": the fastest size of the cblas_sgemm sweep, " + fixed(peak / 1e9, 2) + " GFLOP/s"},
      {"gemm_efficiency", where + ": cblas_sgemm of n^3 (2n^3 FLOPs) over the fastest, " + listing(m.gemm, 1e9, "GFLOP/s", cube)},
      {"memory_bandwidth_bytes_per_s", where + ": the fastest size of the sweep of parasim execute's memory-bound kernel (y = x/2 + 1/128 over floats), " + fixed(bandwidth / 1e9, 2) + " GB/s"},
      {"memory_efficiency", where + ": that kernel over the fastest, by bytes moved (half read, half written), " + listing(m.memory, 1e9, "GB/s", bytes_text)},
      {"memory_capacity_bytes", where + ": physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE)"},
      {"memory_reserved_bytes", "assumption: a tenth of the measured capacity for the operating system and the runtime"},
      {"kernel_launch_overhead_s", where + ": the fastest 1x1x1 cblas_sgemm call"},
  };
  d.sources["convolution"] =
      "parasim execute's CPU convolution (exec/kernels.cpp): the patch matrix written by im2col, then one cblas_sgemm; no Winograd";
  if (m.softmax_flops_per_s > 0)
    d.sources["softmax_flops_per_s"] = where + ": parasim execute's softmax kernel over rows of 1024 floats, 5 FLOPs an element as the model counts a softmax's, " +
                                      fixed(m.softmax_flops_per_s / 1e9, 2) + " GFLOP/s";
  if (m.optimizer_flops_per_s > 0)
    d.sources["optimizer_flops_per_s"] = where + ": parasim execute's Adam update of " + "4,194,304 parameters, 12 FLOPs each as the model counts an optimizer step's, " + fixed(m.optimizer_flops_per_s / 1e9, 2) + " GFLOP/s";
  // The thin-GEMM factor at each thin dim: the square curve's time for the GEMM's FLOPs over the
  // measured time, averaged over the three orientations (the thin dim as m, n or k: a layer's
  // forward, data-gradient and weight-gradient GEMMs), at most 1.
  if (!m.thin.empty()) {
    std::vector<Sample> factors;
    std::string listing_text;
    for (const auto& [dim, seconds] : m.thin) {
      double sum = 0;
      for (const double s : seconds) {
        const double f = 2.0 * static_cast<double>(dim) * static_cast<double>(m.thin_other) * static_cast<double>(m.thin_other);
        sum += std::min(1.0, sim::kernel_seconds(d, models::OpClass::Gemm, models::DType::F32, f, 0, f, 1) / s);
      }
      const double factor = sum / static_cast<double>(seconds.size());
      factors.push_back({static_cast<double>(dim), factor});
      listing_text += (listing_text.empty() ? "" : ", ") + std::to_string(dim) + " -> " + fixed(factor, 3);
    }
    d.gemm_thin_efficiency = efficiency_curve(factors, 1.0);
    d.sources["gemm_thin_efficiency"] = where + ": cblas_sgemm with one of m, n, k thin and the other two " + std::to_string(m.thin_other) +
                                        ", the square curve's time over the measured, averaged over the three orientations: " + listing_text;
  }
  // Held-out shapes, predicted as the cost model times an executed plan's kernels
  // (sim/cost_model.hpp, kernel_seconds): a GEMM reads its operands and writes its product.
  for (const auto& [shape, s] : m.held_out_gemm) {
    const auto [mm, nn, kk] = shape;
    const double flops = 2.0 * static_cast<double>(mm) * static_cast<double>(nn) * static_cast<double>(kk);
    const double bytes = 4.0 * static_cast<double>(mm * kk + kk * nn + mm * nn);
    d.held_out.push_back({"gemm", std::to_string(mm) + "x" + std::to_string(nn) + "x" + std::to_string(kk), s,
                          sim::kernel_seconds(d, models::OpClass::Gemm, models::DType::F32, flops, bytes, flops, 1,
                                              static_cast<double>(std::min({mm, nn, kk})))});
  }
  for (const auto& [bytes, s] : m.held_out_memory)
    d.held_out.push_back({"memory", bytes_text(bytes), s, sim::kernel_seconds(d, models::OpClass::MemoryBound, models::DType::F32, 0, bytes, 0, 1)});
  return d;
}

}  // namespace parasim::calibrate
