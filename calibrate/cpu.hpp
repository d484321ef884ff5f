#pragma once
/// CPU microbenchmarks: single-precision GEMMs through OpenBLAS (cblas_sgemm) and a STREAM-style
/// triad over every core, and the device profile they calibrate. A CPU's datasheet peak is rarely
/// known for the machine at hand, so the calibrated peak is the fastest GEMM measured and the GEMM
/// curve is relative to it: at every measured size the cost model then predicts the measured time.
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/sweep.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

struct CpuOptions {
  /// Square GEMM sizes n (FLOPs 2n³), fp32.
  std::vector<std::int64_t> gemm_sizes{64, 128, 256, 512, 1024, 2048};
  /// Bytes a triad pass moves (three arrays of doubles: two read, one written).
  std::vector<double> triad_bytes{1 << 24, 1 << 26, 1 << 28, double(1) * (1 << 29)};
  /// Threads for the triad (0: every core); OpenBLAS uses its own default for the GEMMs.
  unsigned threads = 0;
  /// Each size is timed until its runs took this long together (at least twice).
  double min_seconds_per_size = 0.05;
};

struct CpuMeasurement {
  std::string cpu;   ///< the processor, from /proc/cpuinfo where readable
  std::string blas;  ///< the BLAS library and its configuration
  unsigned threads = 1;
  std::vector<Sample> gemm;   ///< FLOPs → FLOP/s
  std::vector<Sample> triad;  ///< bytes moved → bytes/s
  double call_overhead_s = 0;  ///< a 1×1×1 GEMM call: the fixed cost of a kernel
  double memory_capacity_bytes = 0;  ///< physical memory of the machine
};

/// Runs the sweeps (a few seconds with the default options).
[[nodiscard]] CpuMeasurement measure_cpu(const CpuOptions& options = {});

/// `base` (the device entry being calibrated, e.g. the datasheet "host-cpu") with the measured
/// figures in place of its own: fp32 peak (the fastest GEMM; other dtypes dropped, as the CPU has
/// no faster path measured), GEMM and memory efficiency curves, memory bandwidth (the fastest
/// triad), capacity, the reserve (an assumed tenth of the capacity) and the per-kernel overhead,
/// each with a source naming the measurement. Its links stay as they were.
[[nodiscard]] sim::DeviceProfile calibrated_cpu(const sim::DeviceProfile& base, const CpuMeasurement& m);

}  // namespace parasim::calibrate
