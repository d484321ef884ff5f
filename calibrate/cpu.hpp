#pragma once
/// CPU microbenchmarks: single-precision GEMMs through OpenBLAS (cblas_sgemm), and the memory-bound
/// and softmax kernels of `parasim execute` (exec/kernels.hpp) on one thread, as its compute stream
/// runs them; and the device profile they calibrate. A CPU's datasheet peak is rarely
/// known for the machine at hand, so the calibrated peak is the fastest GEMM measured and the GEMM
/// curve is relative to it: at every measured size the cost model then predicts the measured time.
/// Every size is timed by its median run (sweep.hpp, median_seconds), as `parasim execute` reports
/// the median step: what a kernel typically takes on a shared machine, not its luckiest run.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "calibrate/sweep.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

/// `from`, `from`·√2, `from`·2, ... up to `to` (within rounding).
[[nodiscard]] std::vector<double> root2_steps(double from, double to);

struct CpuOptions {
  /// Square GEMM sizes n (FLOPs 2n³), fp32.
  std::vector<std::int64_t> gemm_sizes{64, 128, 256, 512, 1024, 2048};
  /// Bytes a pass of the executor's memory-bound kernel moves (half read, half written), from
  /// cache-resident to main memory, by factors of √2 (256 KiB to 256 MiB): a cache's edge is a cliff
  /// in the rate, and the curve between two sizes is a straight line in log-size, so the sizes are
  /// close enough that a cliff falls between neighbours, not across a span of four.
  std::vector<double> memory_bytes = root2_steps(1 << 18, 1 << 28);
  /// Where two neighbouring sizes' rates differ by more than this fraction, the sweep times their
  /// geometric midpoint too, at most `refinements` times over (√2 steps become 2^(1/8) at a cliff).
  double refine_above = 0.10;
  int refinements = 2;
  /// Elements of the softmax that measures the vector rate (rows of 1024), and how many FLOPs the
  /// model counts per element (models/ops.hpp, kSoftmaxFlops).
  double softmax_elements = 1 << 20;
  double softmax_flops_per_element = 5;
  /// Parameters of the Adam update that measures the optimizer rate (12 FLOPs each as the model
  /// counts them: sim/work/work_cost.cpp).
  double optimizer_parameters = 1 << 22;
  /// Thin GEMMs: one of m, n and k at each of these sizes, the other two `thin_other` (each of the
  /// three orientations timed), for the factor the thin dim costs against the square curve. Powers
  /// of two, as a layer's dims are: on an AVX-512 Xeon, dims between them that are not multiples of
  /// 16 (11, 23, 45, 91, 181) ran 3–20% below the power of two beneath them and 8–44% below the one
  /// above (the register tile's remainder), so √2 steps would bend the curve for every aligned dim
  /// between.
  std::vector<std::int64_t> thin_dims{8, 16, 32, 64, 128, 256};
  std::int64_t thin_other = 1024;
  /// Shapes the sweeps do not measure, timed (median) to check the calibrated curves on them: GEMMs
  /// (m, n, k) of the shapes a transformer's layers run — not square, between the sweep's sizes —
  /// and memory passes between the sweep's byte counts. A memory pass that falls on this machine's
  /// last level cache's edge — from a quarter to four times its size (sysfs) moved — is skipped
  /// there: on the development machine's 32 MiB L3 a 48 MiB pass's time moved by up to 12% from run
  /// to run with where its two arrays fell in the cache, and a 12 MiB pass's by 11–16% in two CI runs
  /// of three, the L3 being shared with the host's other tenants (calibrate/README.md).
  std::vector<std::array<std::int64_t, 3>> held_out_gemms{{512, 1536, 512}, {512, 512, 2048}, {256, 3072, 768}, {1024, 96, 384}};
  std::vector<double> held_out_memory_bytes{3 << 18, 3 << 20, 3 << 22, 3 << 26};
  /// OpenBLAS threads for the GEMMs (0: every core) — as many as each rank of `parasim execute` uses.
  unsigned threads = 0;
  /// Weights read again out of cache (sim/weight_reuse.hpp): a GEMM streaming a weight of k × n
  /// floats past `weight_reuse_rows` rows (ResNet-18's layer4 convolution on 2 images of 2 × 2
  /// pixels: 8 × 4608 · 4608 × 512, a 9.4 MB weight), timed back to back and after each of these
  /// byte counts of other memory was written between calls.
  std::int64_t weight_reuse_rows = 8, weight_reuse_k = 4608, weight_reuse_n = 512;
  std::vector<double> weight_reuse_between{1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 27, 1 << 28};
  int weight_reuse_repeats = 15;
  /// Activations read again out of cache (sim/weight_reuse.hpp): a pass of the executor's
  /// memory-bound kernel moving this many bytes (half read, half written: a 128 KiB activation of
  /// ResNet-18's first stage on 2 images each way), timed back to back and after each of
  /// `weight_reuse_between` bytes written between calls, one operand then cold and the other read or
  /// written again just before. It has no arithmetic to hide a miss behind, as the GEMM has: on this
  /// project's 2-core VM a 512 KiB pass ran 17 us back to back and 36-48 us after one to ten 512³
  /// GEMMs between.
  double memory_reuse_bytes = 1 << 18;
  /// Each size is timed until its runs took this long together (at least twice).
  double min_seconds_per_size = 0.05;
  /// Called, untimed, before each size's turn in a sweep (and each repeat of the weight reuse
  /// timings): `parasim calibrate --backend mpi` passes a barrier of its ranks, so that every rank of
  /// the host times the same kernel at the same moment and the curves are the host's with all of its
  /// ranks running (DeviceProfile::shared_host). It must be called as often on every rank, so a
  /// sweep measured with it sets `refinements` to 0 (where the memory curve is refined follows each
  /// rank's own rates). Empty: the sweep runs alone.
  std::function<void()> in_step;
};

struct CpuMeasurement {
  std::string cpu;   ///< the processor, from /proc/cpuinfo where readable
  std::string blas;  ///< the BLAS library and its configuration
  std::string pages;  ///< the pages its large buffers got and what the process keeps of freed memory (exec::host_pages, exec::freed_memory)
  unsigned threads = 1;        ///< OpenBLAS threads of the GEMMs
  std::vector<Sample> gemm;    ///< FLOPs → FLOP/s
  std::vector<Sample> memory;  ///< bytes moved → bytes/s, the memory-bound kernel on one thread
  double softmax_flops_per_s = 0;  ///< the softmax's FLOPs (as the model counts them) per second
  double optimizer_flops_per_s = 0;  ///< Adam's update: 12 FLOPs a parameter (as the model counts them) per second
  /// SGD with momentum's in-place update (exec::momentum_update): bytes in play (12 a parameter) →
  /// bytes moved a second (20 a parameter, as the model counts them), at the memory sweep's sizes.
  std::vector<Sample> optimizer_update;
  double call_overhead_s = 0;  ///< a 1×1×1 GEMM call: the fixed cost of a kernel
  double memory_capacity_bytes = 0;  ///< physical memory of the machine
  /// Thin GEMMs' median times: (thin dim, seconds with it as m, as n, as k).
  std::vector<std::pair<std::int64_t, std::array<double, 3>>> thin;
  /// The executor's backward pair (dX = dY·Wᵀ, dW = Xᵀ·dY) of the thin GEMMs with the thin dim as m,
  /// timed in the sweep's interleaved rounds: (thin dim, median seconds of the pair).
  std::vector<std::pair<std::int64_t, double>> thin_backward;
  std::int64_t thin_other = 1024;  ///< the other two dims of the thin GEMMs
  /// Held-out shapes' median times: GEMMs (m, n, k) and memory passes (bytes).
  std::vector<std::pair<std::array<std::int64_t, 3>, double>> held_out_gemm;
  std::vector<std::pair<double, double>> held_out_memory;
  /// Held-out memory passes not timed, being on the last level cache's edge (CpuOptions).
  std::vector<double> held_out_memory_skipped;
  double last_level_cache_bytes = 0;  ///< from sysfs; 0 where unknown
  /// The weight reuse GEMM (CpuOptions): its weight's bytes, its median time back to back, and its
  /// median time after each count of bytes written between calls (bytes, seconds).
  std::array<std::int64_t, 3> weight_reuse_shape{0, 0, 0};  ///< m, n, k
  double weight_reuse_bytes = 0, weight_reuse_warm_s = 0;
  std::vector<std::pair<double, double>> weight_reuse;
  /// The same for the backward's two GEMMs on that weight (dX = dY·Wᵀ, dW = Xᵀ·dY into a gradient of
  /// the weight's size), timed together.
  double weight_reuse_backward_warm_s = 0;
  std::vector<std::pair<double, double>> weight_reuse_backward;
  /// The memory reuse pass (CpuOptions): its bytes moved, its median time back to back, and its
  /// median time after each count of bytes written between calls (bytes, seconds), its input read
  /// again before the call (`memory_reuse`: the output cold) or its output written again
  /// (`memory_reuse_read`: the input cold).
  double memory_reuse_bytes = 0, memory_reuse_warm_s = 0;
  std::vector<std::pair<double, double>> memory_reuse, memory_reuse_read;
};

/// The geometric midpoints (rounded to whole floats each way) of the neighbours of a sweep sorted by
/// size whose rates differ by more than `refine_above` (0.1: the faster over 1.1 times the slower).
[[nodiscard]] std::vector<double> refinement_midpoints(std::span<const Sample> sorted, double refine_above);

/// Whether a memory pass of `bytes` lies on the edge of a last level cache of that size: from a
/// quarter to four times it (0: the size is unknown, no edge).
[[nodiscard]] bool on_cache_edge(double bytes, double last_level_cache_bytes);

/// Runs the sweeps (a few seconds with the default options).
[[nodiscard]] CpuMeasurement measure_cpu(const CpuOptions& options = {});

/// `base` (the device entry being calibrated, e.g. the datasheet "host-cpu") with the measured
/// figures in place of its own: fp32 peak (the fastest GEMM; other dtypes dropped, as the CPU has
/// no faster path measured), GEMM and memory efficiency curves, memory bandwidth (the fastest
/// memory-bound pass), the vector rate, capacity, the reserve (an assumed tenth of the capacity) and the per-kernel overhead,
/// each with a source naming the measurement; and the held-out checks: each held-out shape's
/// measured median beside the cost model's prediction from these figures. Its links stay as they were.
[[nodiscard]] sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m);

/// One kernel timed on this host now, beside `device`'s price of it.
struct HostCheck {
  std::string what;        ///< "512x512x512 fp32 sgemm", "64 MiB memory pass"
  double measured_s = 0;   ///< the median of the timed runs
  double predicted_s = 0;  ///< as the held-out shapes are predicted (calibrated_cpu)
};

/// `parasim execute`'s host check: a 512³ fp32 sgemm on the calling process's BLAS threads and a
/// 64 MiB pass of the executor's memory-bound kernel on this thread, each run untimed for `warm_s`
/// seconds and then timed `runs` times, beside what `device` prices them at. A host that moved since
/// it was calibrated moves every compute prediction with it. The untimed runs use the very buffers
/// timed: on this project's 2-core VM a 64 MiB pass over freshly touched memory took 5.9 ms, fell
/// to 3.3 ms over its first six passes and to 2.6-2.9 ms after 2 s of use, and memory left idle for
/// 2 s was slow again (docs/validation.md). The calibration's sweeps time memory in use; so must the
/// check.
[[nodiscard]] std::vector<HostCheck> host_check(const sim::DeviceProfile& device, int runs, double warm_s = 1.0);

}  // namespace parasim::calibrate
