#pragma once
/// `parasim calibrate --from-csv FILE`: kernel timings measured elsewhere (a profiler's export, a
/// vendor's benchmark, another framework's microbenchmarks) fitted into a device's curves, as
/// `--backend cpu|cuda` fit their own sweeps.
///
/// The file: comma-separated, a header row naming its columns in any order, then one row per timed
/// kernel; blank lines and lines starting with '#' are skipped. Columns:
///   kernel   "gemm" or "memory" (required)
///   seconds  the kernel's time, one call (a median is what the built-in sweeps use), 1e-12 to 1e6 (required)
///   dtype    gemm: the compute dtype, "fp32", "tf32", "bf16", "fp16", "fp8", ... (required for gemm)
///   m, n, k  gemm: the product's shape, 2·m·n·k FLOPs (required for gemm)
///   bytes    memory: the bytes the kernel reads and writes together (required for memory)
/// A cell a row's kernel does not use may be empty. At most 100,000 rows.
///
/// The fit: each GEMM dtype's peak is its fastest row (FLOPs / second), its curve the rate of each
/// FLOP count over that peak (a FLOP count timed more than once keeps its fastest); the memory
/// bandwidth is the fastest memory row, its curve by bytes likewise. The device keeps every figure
/// the file does not time. A dtype with rows gets a curve of its own (`gemm_efficiency_by_dtype`),
/// and the first dtype of the file (or fp32 where present) the default `gemm_efficiency` too.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/dtype.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

struct KernelTiming {
  enum class Kernel { Gemm, Memory } kernel = Kernel::Gemm;
  models::DType dtype = models::DType::F32;
  std::int64_t m = 0, n = 0, k = 0;
  double bytes = 0;
  double seconds = 0;
  std::size_t line = 0;  ///< 1-based line in the file
};

/// Reads the file's rows. Throws InputError naming `file`, the line and the column: no header, an
/// unknown or repeated column, a missing required column, a row with too many or too few cells, a
/// cell that is not what its column holds, no rows, more than 100,000 rows.
[[nodiscard]] std::vector<KernelTiming> parse_kernel_csv(std::string_view text, const std::string& file);

/// `base` with the figures the rows time in place, each with a source naming `file`.
[[nodiscard]] sim::DeviceProfile calibrated_from_csv(const sim::DeviceProfile& base, const std::vector<KernelTiming>& rows, const std::string& file);

}  // namespace parasim::calibrate
