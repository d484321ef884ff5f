#include "calibrate/cpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "calibrate/source_text.hpp"
#include "exec/host_memory.hpp"
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

/// The last level cache's size in bytes from sysfs (cpu0's highest cache level), 0 where unknown.
/// sysconf(_SC_LEVEL3_CACHE_SIZE) is not used: on the development machine's AMD EPYC glibc reports
/// 384 MiB, the whole package's, where sysfs reports the 32 MiB this core shares.
double last_level_cache_bytes() {
  double bytes = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_in(dir + "level"), size_in(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_in >> level) || !(size_in >> size) || size.empty()) continue;
    double value = 0;
    try {
      value = std::stod(size);
    } catch (const std::exception&) {
      continue;
    }
    const char unit = size.back();
    value *= unit == 'K' ? 1024.0 : unit == 'M' ? 1024.0 * 1024 : unit == 'G' ? 1024.0 * 1024 * 1024 : 1.0;
    if (level > best_level && value > 0) best_level = level, bytes = value;
  }
  return bytes;
}

/// A held-out GEMM's price (sim/cost_model.hpp): an untransposed m × n × k fp32 GEMM reads its
/// operands and writes its product.
double gemm_price(const sim::DeviceProfile& d, std::int64_t m, std::int64_t n, std::int64_t k) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double bytes = 4.0 * static_cast<double>(m * k + k * n + m * n);
  return sim::gemm_kernel_seconds(d, models::DType::F32, flops, bytes, flops, 1, static_cast<double>(m), static_cast<double>(n), static_cast<double>(k));
}

/// A thin-GEMM curve closed at the square: a GEMM whose smallest dim is `square` is the square sweep's
/// square³, factor 1 by definition; without that point the curve would hold its widest thin dim's
/// factor for every wider GEMM, squares included (EfficiencyCurve::at keeps its last point). The
/// point is added to `text`, the curve's listing, too.
void close_at_square(sim::EfficiencyCurve& curve, std::string& text, std::int64_t square) {
  if (!curve.points.empty() && curve.points.back().first >= static_cast<double>(square)) return;
  curve.points.emplace_back(static_cast<double>(square), 1.0);
  text += ", " + std::to_string(square) + " -> 1 (the square)";
}

/// A memory-bound pass's price: `bytes` moved, no FLOPs counted.
double memory_price(const sim::DeviceProfile& d, double bytes) {
  return sim::kernel_seconds(d, models::OpClass::MemoryBound, models::DType::F32, 0, bytes, 0, 1);
}

}  // namespace

std::vector<double> root2_steps(double from, double to) {
  std::vector<double> out;
  for (int k = 0; from * std::pow(2.0, k / 2.0) <= to * (1 + 1e-9); ++k) out.push_back(std::round(from * std::pow(2.0, k / 2.0)));
  return out;
}

std::vector<double> refinement_midpoints(std::span<const Sample> sorted, double refine_above) {
  std::vector<double> midpoints;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const double hi = std::max(sorted[i].rate_per_s, sorted[i - 1].rate_per_s), lo = std::min(sorted[i].rate_per_s, sorted[i - 1].rate_per_s);
    const double mid = std::round(std::sqrt(sorted[i].size * sorted[i - 1].size) / 8) * 8;  // whole floats each way
    if (hi > (1 + refine_above) * lo && mid > sorted[i - 1].size && mid < sorted[i].size) midpoints.push_back(mid);
  }
  return midpoints;
}

bool on_cache_edge(double bytes, double last_level_cache_bytes) {
  return last_level_cache_bytes > 0 && bytes >= last_level_cache_bytes / 4 && bytes < 4 * last_level_cache_bytes;
}

CpuMeasurement measure_cpu(const CpuOptions& options) {
  PARASIM_CHECK(!options.in_step || options.refinements == 0, "a sweep in step with other ranks has no refinements (CpuOptions::in_step)");
  CpuMeasurement m;
  m.cpu = source_text(cpu_model());
  m.blas = exec::blas_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  m.pages = exec::host_pages() + ", " + exec::freed_memory();
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
    std::vector<exec::HostVector<float>> operands;
    operands.reserve(3 * shapes.size() + 5 * options.thin_dims.size());  // the runs keep pointers into them
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
    // The backward pair of each thin-m GEMM as the executor runs a layer's (exec/kernels.cpp): with
    // the forward Y = X·W of X d × o and W o × o, dX = dY·Wᵀ, then dW = Xᵀ·dY. Interleaved with the
    // sweep, so the host's drift falls on it as on the forward GEMMs it is compared with.
    for (const std::int64_t d : options.thin_dims) {
      const auto rows = static_cast<std::size_t>(d * o), square = static_cast<std::size_t>(o * o);
      for (const std::size_t floats : {rows, square, rows, rows, square}) operands.emplace_back(floats, 0.5f);
      float *x = operands[operands.size() - 5].data(), *w = operands[operands.size() - 4].data(), *dy = operands[operands.size() - 3].data(),
            *dx = operands[operands.size() - 2].data(), *dw = operands[operands.size() - 1].data();
      runs.emplace_back([=] {
        exec::sgemm(false, true, d, o, o, dy, w, dx);
        exec::sgemm(true, false, o, o, d, x, dy, dw);
      });
    }
    const std::vector<double> s = interleaved_medians(runs, kRounds, options.min_seconds_per_size, options.in_step);
    for (std::size_t j = 0; j < options.thin_dims.size(); ++j) m.thin_backward.emplace_back(options.thin_dims[j], s[shapes.size() + j]);
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
    // Weights out of cache: the same GEMM back to back, then after `between` bytes of a pool were
    // written (a float every 64-byte line) between calls, each count's median over its repeats.
    const std::int64_t rows = options.weight_reuse_rows, kk = options.weight_reuse_k, nn = options.weight_reuse_n;
    PARASIM_CHECK(rows >= 1 && kk >= 1 && nn >= 1 && options.weight_reuse_repeats >= 1, "the weight reuse GEMM has a shape and repeats");
    exec::HostVector<float> x(static_cast<std::size_t>(rows * kk), 1.0f / 64), weight(static_cast<std::size_t>(kk * nn), 1.0f / 64),
        y(static_cast<std::size_t>(rows * nn), 1.0f / 64), dx(static_cast<std::size_t>(rows * kk), 0.0f),
        gradient(static_cast<std::size_t>(kk * nn), 0.0f);
    double largest = 0;
    for (const double b : options.weight_reuse_between) largest = std::max(largest, b);
    exec::HostVector<float> pool(static_cast<std::size_t>(largest / sizeof(float)) + 16, 0.0f);
    std::size_t at = 0;  // where the next write goes: each call's bytes follow the last call's, round the pool
    bool backward = false, pass = false;
    int warm_operand = -1;  // the memory pass's operand touched again before timing: 0 the input, 1 the output
    const std::size_t pass_floats = static_cast<std::size_t>(std::max(1.0, options.memory_reuse_bytes / 8));
    exec::HostVector<float> pass_in(pass_floats, 1.0f / 64), pass_out(pass_floats, 0.0f);
    auto call = [&] {
      if (pass) {
        exec::stream_pass(pass_in.data(), pass_out.data(), pass_floats);
      } else if (!backward) {
        exec::sgemm(false, false, rows, nn, kk, x.data(), weight.data(), y.data());
      } else {
        exec::sgemm(false, true, rows, kk, nn, y.data(), weight.data(), dx.data());   // dX = dY·Wᵀ
        exec::sgemm(true, false, kk, nn, rows, x.data(), y.data(), gradient.data());  // dW = Xᵀ·dY
      }
    };
    auto timed = [&](double between) {
      std::vector<double> times;
      for (int r = 0; r < options.weight_reuse_repeats; ++r) {
        if (options.in_step) options.in_step();
        for (double written = 0; written < between; written += 64) {
          pool[at] += 1.0f;
          at = (at + 16) % pool.size();
        }
        // The memory pass meets one operand cold and the other just touched, as the executor's
        // element-wise passes do (their input just written by its producer, their output last
        // written a step before; or the other way round): the input read, or the output written,
        // again before the timed call.
        if (pass && warm_operand == 0) {
          float sum = 0;
          for (std::size_t i = 0; i < pass_floats; i += 16) sum += pass_in[i];
          pass_out[0] = sum * 0.0f;
        } else if (pass && warm_operand == 1) {
          for (std::size_t i = 0; i < pass_floats; i += 16) pass_out[i] = 0.0f;
        }
        const auto t0 = std::chrono::steady_clock::now();
        call();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(times.begin(), times.end());
      return times[(times.size() - 1) / 2];
    };
    call();
    m.weight_reuse_shape = {rows, nn, kk};
    m.weight_reuse_bytes = static_cast<double>(kk * nn) * sizeof(float);
    m.weight_reuse_warm_s = timed(0);
    for (const double between : options.weight_reuse_between) m.weight_reuse.emplace_back(between, timed(between));
    backward = true;
    call();
    m.weight_reuse_backward_warm_s = timed(0);
    for (const double between : options.weight_reuse_between) m.weight_reuse_backward.emplace_back(between, timed(between));
    pass = true;
    call();
    m.memory_reuse_bytes = static_cast<double>(pass_floats) * 8;
    m.memory_reuse_warm_s = timed(0);
    warm_operand = 0;  // the output written cold
    for (const double between : options.weight_reuse_between) m.memory_reuse.emplace_back(between, timed(between));
    warm_operand = 1;  // the input read cold
    for (const double between : options.weight_reuse_between) m.memory_reuse_read.emplace_back(between, timed(between));
  }
  {
    float a = 1, b = 1, c = 0;
    m.call_overhead_s = best_seconds([&] { exec::sgemm(false, false, 1, 1, 1, &a, &b, &c); }, 1000, 0.01);
  }

  // The executor's own memory-bound and softmax kernels, on this thread, as its compute stream
  // runs them (its other threads are the communication streams').
  exec::Scratch scratch;
  auto time_passes = [&](const std::vector<double>& sizes) {
    std::vector<std::function<void()>> runs;
    for (const double bytes : sizes) {
      PARASIM_CHECK(bytes >= 8, "a memory pass moves at least one float each way");
      exec::stream_pass(bytes, scratch);  // first touch
      runs.emplace_back([bytes, &scratch] { exec::stream_pass(bytes, scratch); });
    }
    return interleaved_medians(runs, kRounds, options.min_seconds_per_size, options.in_step);
  };
  {
    // Held-out passes stay off the last level cache's edge (options.held_out_memory_bytes).
    m.last_level_cache_bytes = last_level_cache_bytes();
    std::vector<double> held_out;
    for (const double bytes : options.held_out_memory_bytes) {
      if (on_cache_edge(bytes, m.last_level_cache_bytes)) {
        m.held_out_memory_skipped.push_back(bytes);
      } else {
        held_out.push_back(bytes);
      }
    }
    // The held-out passes are timed in the sweep's order of size, each after its smaller neighbour
    // as the sweep's own sizes are: appended after the 256 MiB pass, a 768 KiB pass found the last
    // level cache full of that pass's dirty lines, which its one untimed run does not write back,
    // and read 10–25% slower than the 724 KiB and 1 MiB around it (2-core AMD EPYC VM, 2026-11-28);
    // the check missed it in three calibrations of five. Not warmed longer: that made the sweep's
    // small passes faster than the executor's, which follow other kernels (calibrate/README.md).
    std::vector<std::pair<double, bool>> sizes;  // bytes, held out
    for (const double bytes : options.memory_bytes) sizes.emplace_back(bytes, false);
    for (const double bytes : held_out) sizes.emplace_back(bytes, true);
    std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> bytes_in_order;
    for (const auto& [bytes, held] : sizes) bytes_in_order.push_back(bytes);
    const std::vector<double> s = time_passes(bytes_in_order);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!sizes[i].second) {
        m.memory.push_back({sizes[i].first, sizes[i].first / s[i]});
      } else {
        m.held_out_memory.push_back({sizes[i].first, s[i]});
      }
    }
    // Where two neighbours' rates differ by more than options.refine_above (a cache's edge between
    // them), the geometric midpoint is timed and joins the sweep, up to options.refinements times:
    // the curve is a straight line in log-size between its points, and across a cliff that line
    // is wrong by up to the cliff's height.
    for (int level = 0; level < options.refinements; ++level) {
      std::sort(m.memory.begin(), m.memory.end(), [](const Sample& a, const Sample& b) { return a.size < b.size; });
      const std::vector<double> midpoints = refinement_midpoints(m.memory, options.refine_above);
      if (midpoints.empty()) break;
      const std::vector<double> s2 = time_passes(midpoints);
      for (std::size_t i = 0; i < midpoints.size(); ++i) m.memory.push_back({midpoints[i], midpoints[i] / s2[i]});
    }
    std::sort(m.memory.begin(), m.memory.end(), [](const Sample& a, const Sample& b) { return a.size < b.size; });
  }
  {
    const double bytes = options.softmax_elements * 8;
    exec::softmax_pass(bytes, 1024, scratch);
    const double s = median_seconds([&] { exec::softmax_pass(bytes, 1024, scratch); }, 5, options.min_seconds_per_size, options.in_step);
    m.softmax_flops_per_s = options.softmax_flops_per_element * options.softmax_elements / s;
  }
  {
    const auto n = static_cast<std::size_t>(std::max(1.0, options.optimizer_parameters));
    exec::HostVector<float> state(4 * n, 1.0f / 64);
    float* p = state.data();
    const double s = median_seconds([&] { exec::adam_update(p, p + n, p + 2 * n, p + 3 * n, n); }, 5, options.min_seconds_per_size, options.in_step);
    m.optimizer_flops_per_s = 12.0 * static_cast<double>(n) / s;
  }
  {
    // The in-place update at the memory sweep's sizes of what it keeps in play (parameters,
    // gradients, momentum: 12 bytes a parameter), in interleaved rounds as the memory passes are;
    // the model counts its bytes moved as 20 a parameter (4 of gradient read, 8 of parameters and 8
    // of momentum read and written).
    double largest = 0;
    for (const double bytes : options.memory_bytes) largest = std::max(largest, bytes);
    const auto most = static_cast<std::size_t>(std::max(1.0, largest / 12));
    exec::HostVector<float> state(3 * most, 1.0f / 64);
    float *p = state.data(), *g = p + most, *v = g + most;
    std::vector<std::function<void()>> runs;
    std::vector<std::size_t> counts;
    for (const double bytes : options.memory_bytes) {
      counts.push_back(static_cast<std::size_t>(std::max(1.0, bytes / 12)));
      runs.emplace_back([p, g, v, n = counts.back()] { exec::momentum_update(p, g, v, n); });
    }
    const std::vector<double> s = interleaved_medians(runs, kRounds, options.min_seconds_per_size, options.in_step);
    for (std::size_t i = 0; i < counts.size(); ++i)
      m.optimizer_update.push_back({12.0 * static_cast<double>(counts[i]), 20.0 * static_cast<double>(counts[i]) / s[i]});
  }
  return m;
}

sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m) {
  PARASIM_CHECK(!m.gemm.empty() && !m.memory.empty(), "a CPU measurement has GEMM and memory samples");
  sim::DeviceProfile d = base;
  const double peak = best_rate(m.gemm), bandwidth = best_rate(m.memory);
  const std::string where = "measured by `parasim calibrate --backend cpu` on " + m.cpu + " (GEMMs on " + std::to_string(m.threads) +
                            " threads, " + m.blas + "; memory-bound kernels on one; buffers on " + (m.pages.empty() ? std::string("the host's pages") : m.pages) + "; each size's median time)";
  d.description = base.description + "; calibrated on " + m.cpu;
  d.peak_flops_per_s = {{models::DType::F32, peak}};
  d.gemm_efficiency = efficiency_curve(m.gemm, peak);
  d.memory_bandwidth_bytes_per_s = bandwidth;
  d.memory_efficiency = efficiency_curve(m.memory, bandwidth);
  d.softmax_flops_per_s = m.softmax_flops_per_s;
  d.convolution = "im2col-gemm";
  d.optimizer_flops_per_s = m.optimizer_flops_per_s;
  if (!m.optimizer_update.empty()) {
    d.optimizer_bytes_per_s = best_rate(m.optimizer_update);
    d.optimizer_memory_efficiency = efficiency_curve(m.optimizer_update, d.optimizer_bytes_per_s);
  }
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
  if (!m.optimizer_update.empty()) {
    d.sources["optimizer_bytes_per_s"] = where + ": the fastest size of the sweep of parasim execute's in-place SGD-with-momentum update (20 bytes moved a parameter), " +
                                         fixed(d.optimizer_bytes_per_s / 1e9, 2) + " GB/s";
    d.sources["optimizer_memory_efficiency"] = where + ": that update over the fastest, by bytes in play (12 a parameter), " + listing(m.optimizer_update, 1e9, "GB/s", bytes_text);
  }
  // Weights out of cache: the GEMM's weight bytes over its warm time, and its warm time over its
  // time by the bytes written between calls (at most 1: noise may time a cold call faster).
  // A rate (the weight's bytes over the warm time) and a curve (the warm time over the time after
  // `between` bytes written, at most 1), with the listing of the times for the curve's source.
  auto reuse_curve = [](double bytes, double warm_s, const std::vector<std::pair<double, double>>& samples, double& rate, sim::EfficiencyCurve& curve) {
    rate = bytes / warm_s;
    curve.points.clear();
    std::string text;
    for (const auto& [between, seconds] : samples) {
      curve.points.emplace_back(between, std::min(1.0, warm_s / seconds));
      // Milliseconds for a GEMM, microseconds for a pass shorter than one.
      text += std::string(text.empty() ? "" : ", ") + bytes_text(between) + " -> " +
              (warm_s < 1e-3 ? fixed(seconds * 1e6, 2) + " us" : fixed(seconds * 1e3, 3) + " ms");
    }
    return text;
  };
  if (m.weight_reuse_warm_s > 0 && !m.weight_reuse.empty()) {
    const std::string text = reuse_curve(m.weight_reuse_bytes, m.weight_reuse_warm_s, m.weight_reuse, d.weight_reuse_bytes_per_s, d.weight_reuse_efficiency);
    d.sources["weight_reuse_bytes_per_s"] = where + ": cblas_sgemm " + std::to_string(m.weight_reuse_shape[0]) + " x " + std::to_string(m.weight_reuse_shape[1]) + " x " +
                                            std::to_string(m.weight_reuse_shape[2]) + " (a " + fixed(m.weight_reuse_bytes / 1e6, 1) +
                                            " MB weight) back to back, " + fixed(m.weight_reuse_warm_s * 1e3, 3) + " ms: its weight bytes over that time";
    d.sources["weight_reuse_efficiency"] = where + ": the same GEMM's time back to back over its time after other memory was written between calls (a float every 64-byte line), by the bytes written: " + text;
  }
  if (m.weight_reuse_backward_warm_s > 0 && !m.weight_reuse_backward.empty()) {
    const std::string text = reuse_curve(m.weight_reuse_bytes, m.weight_reuse_backward_warm_s, m.weight_reuse_backward, d.weight_reuse_backward_bytes_per_s,
                                         d.weight_reuse_backward_efficiency);
    d.sources["weight_reuse_backward_bytes_per_s"] = where + ": that GEMM's backward pair (dX = dY·W^T, dW = X^T·dY) back to back, " +
                                                     fixed(m.weight_reuse_backward_warm_s * 1e3, 3) + " ms: the weight's bytes over that time";
    d.sources["weight_reuse_backward_efficiency"] = where + ": the backward pair's time back to back over its time after other memory was written between calls, by the bytes written: " + text;
  }
  if (m.memory_reuse_warm_s > 0 && !m.memory_reuse.empty() && !m.memory_reuse_read.empty()) {
    // Back to back, each byte is touched again after the pass's own bytes moved: the warm time is
    // each curve at that distance (Mattson et al. 1970, as sim/weight_reuse.hpp reads distances).
    auto from_warm = [&](sim::EfficiencyCurve& curve) {
      if (m.memory_reuse_bytes < curve.points.front().first) curve.points.insert(curve.points.begin(), {m.memory_reuse_bytes, 1.0});
    };
    const std::string written = reuse_curve(m.memory_reuse_bytes, m.memory_reuse_warm_s, m.memory_reuse, d.memory_reuse_bytes_per_s, d.memory_reuse_efficiency);
    const std::string read =
        reuse_curve(m.memory_reuse_bytes, m.memory_reuse_warm_s, m.memory_reuse_read, d.memory_reuse_bytes_per_s, d.memory_reuse_read_efficiency);
    from_warm(d.memory_reuse_efficiency);
    from_warm(d.memory_reuse_read_efficiency);
    d.sources["memory_reuse_bytes_per_s"] = where + ": parasim execute's memory-bound kernel moving " + bytes_text(m.memory_reuse_bytes) +
                                            " (half read, half written) back to back, " + fixed(m.memory_reuse_warm_s * 1e6, 2) + " us: its bytes over that time";
    const std::string how = ": that pass's time back to back over its time after other memory was written between calls (a float every 64-byte line), ";
    d.sources["memory_reuse_efficiency"] = where + how + "its input read again just before (the output written cold), by the bytes written: " + written;
    d.sources["memory_reuse_read_efficiency"] = where + how + "its output written again just before (the input read cold), by the bytes written: " + read;
  }
  // The thin-GEMM factor at each thin dim: the square curve's time for the GEMM's FLOPs over the
  // measured time, averaged over the three orientations (the thin dim as m, n or k: a layer's
  // forward, data-gradient and weight-gradient GEMMs), at most 1.
  if (!m.thin.empty()) {
    std::vector<ThinGemm> thin;
    for (const auto& [dim, seconds] : m.thin) thin.push_back({dim, seconds});
    // The average over the three orientations, and each orientation's own (the thin dim as m, as n,
    // as k), each closed at the square.
    auto with_square = [&](std::optional<std::size_t> orientation) {
      auto [curve, text] = thin_gemm_curve(d, models::DType::F32, thin, m.thin_other, orientation);
      close_at_square(curve, text, m.thin_other);
      return std::pair{curve, text};
    };
    const auto [curve, listing_text] = with_square(std::nullopt);
    std::string by_dim_text;
    for (std::size_t o = 0; o < 3; ++o) {
      const auto [own, text] = with_square(o);
      d.gemm_thin_efficiency_by_dim[o] = own;
      by_dim_text += std::string(o == 0 ? "" : "; ") + "mnk"[o] + " thin: " + text;
    }
    d.gemm_thin_efficiency = curve;
    d.sources["gemm_thin_efficiency"] = where + ": cblas_sgemm with one of m, n, k thin and the other two " + std::to_string(m.thin_other) +
                                        ", the square curve's time over the measured, averaged over the three orientations: " + listing_text;
    d.sources["gemm_thin_efficiency_by_dim"] = where + ": the same GEMMs (untransposed), each orientation's own: " + by_dim_text;
  }
  // The backward pair's factor at each thin m: the square curve's time for its two GEMMs' FLOPs over
  // the pair's measured time, at most 1, as the forward's above; the square's 1 at thin_other.
  if (!m.thin_backward.empty()) {
    std::vector<Sample> factors;
    std::string text;
    for (const auto& [dim, seconds] : m.thin_backward) {
      const double flops = 2.0 * static_cast<double>(dim) * static_cast<double>(m.thin_other) * static_cast<double>(m.thin_other);
      const double square_s = 2 * sim::kernel_seconds(d, models::OpClass::Gemm, models::DType::F32, flops, 0, flops, 1);
      const double factor = std::min(1.0, square_s / seconds);
      factors.push_back({static_cast<double>(dim), factor});
      text += (text.empty() ? "" : ", ") + std::to_string(dim) + " -> " + fixed(factor, 3);
    }
    d.gemm_thin_backward_efficiency = efficiency_curve(factors, 1.0);
    close_at_square(d.gemm_thin_backward_efficiency, text, m.thin_other);
    d.sources["gemm_thin_backward_efficiency"] = where + ": the backward pair (dX = dY·W^T, dW = X^T·dY) of the thin GEMMs with m thin and n = k = " +
                                                 std::to_string(m.thin_other) + ", the square curve's time for its two GEMMs over the pair's measured: " + text;
  }
  // Held-out shapes, predicted as the cost model times an executed plan's kernels
  // (sim/cost_model.hpp, kernel_seconds): a GEMM reads its operands and writes its product. A
  // calibrated base's checks were of its own figures, which these replace.
  d.held_out.clear();
  for (const auto& [shape, s] : m.held_out_gemm) {
    const auto [mm, nn, kk] = shape;
    d.held_out.push_back({"gemm", std::to_string(mm) + "x" + std::to_string(nn) + "x" + std::to_string(kk), s, gemm_price(d, mm, nn, kk)});
  }
  for (const auto& [bytes, s] : m.held_out_memory) d.held_out.push_back({"memory", bytes_text(bytes), s, memory_price(d, bytes)});
  return d;
}

std::vector<HostCheck> host_check(const sim::DeviceProfile& device, int runs, double warm_s) {
  PARASIM_CHECK(runs >= 1, "a host check times each kernel at least once");
  constexpr std::int64_t n = 512;            // a few milliseconds on one core: one of the sweep's squares
  constexpr double bytes = 64.0 * (1 << 20);  // beyond a core's L2, as a large layer's passes are
  exec::HostVector<float> a(static_cast<std::size_t>(n * n), 1.0f / 64), b(a), c(a.size(), 0.0f);
  const auto gemm = [&] { exec::sgemm(false, false, n, n, n, a.data(), b.data(), c.data()); };
  exec::Scratch scratch;
  const auto pass = [&] { exec::stream_pass(bytes, scratch); };
  gemm();  // untimed: loads OpenBLAS, warms the caches
  pass();  // untimed: first touch
  // Untimed for warm_s, the pass's buffers then as used as the calibration's (cpu.hpp).
  for (const auto begin = std::chrono::steady_clock::now(); std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() < warm_s;) {
    gemm();
    pass();
  }
  return {{"512x512x512 fp32 sgemm", median_seconds(gemm, runs, 0), gemm_price(device, n, n, n)},
          {"64 MiB memory pass", median_seconds(pass, runs, 0), memory_price(device, bytes)}};
}

}  // namespace parasim::calibrate
