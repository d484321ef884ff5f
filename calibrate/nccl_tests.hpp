#pragma once
/// nccl-tests results (github.com/NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf,
/// reduce_scatter_perf, sendrecv_perf) and the link profile they calibrate.
///
/// parasim's collective model is alpha–beta (sim/collectives.hpp): a ring all-reduce of S bytes over
/// n ranks takes 2(n−1)·α + 2(n−1)/n · S / (B · e(S)), with B the link's line rate and e(S) its
/// efficiency at S. nccl-tests reports, per size S, the time t and the bus bandwidth
/// busbw = factor · S / t with the same factor (2(n−1)/n for all-reduce, (n−1)/n for all-gather and
/// reduce-scatter, 1 for send/receive; nccl-tests doc/PERFORMANCE.md). So the fit is:
///  - α = t / steps at the smallest size, whose bandwidth term is negligible (steps: 2(n−1),
///    n − 1, n − 1, 1);
///  - e(S) = factor · S / (t − steps·α) / B at every size whose time is at least half bandwidth,
///    so the model gives back the measured time at each measured size.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/sweep.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

enum class NcclTest { AllReduce, AllGather, ReduceScatter, SendRecv };
[[nodiscard]] std::string_view to_string(NcclTest t);  ///< "all_reduce", ...
[[nodiscard]] std::optional<NcclTest> nccl_test_from_string(std::string_view s);

/// One result row (the out-of-place columns).
struct NcclTestsRow {
  double bytes = 0;           ///< nccl-tests' size column (parasim's size convention for the collective)
  double time_s = 0;
  double bus_bytes_per_s = 0;
  std::size_t line = 0;       ///< 1-based line in the log
};

struct NcclTestsLog {
  NcclTest test = NcclTest::AllReduce;
  std::int64_t ranks = 0;   ///< "#  Rank ..." lines
  std::int64_t hosts = 0;   ///< distinct host names among them
  std::string device;       ///< the first rank's device name (printable ASCII: calibrate/source_text.hpp)
  std::vector<NcclTestsRow> rows;
};

/// Reads nccl-tests output. The collective comes from the log's "# Collective test starting: X_perf"
/// line or from `test` (which must agree when both are there). NCCL_DEBUG lines and anything else
/// that is neither a comment nor a result row are skipped. Throws InputError naming `file`, the line
/// and the column: no table header, a result row with a missing or malformed field, no ranks, fewer
/// than two ranks, no result rows, an unknown collective.
[[nodiscard]] NcclTestsLog parse_nccl_tests(std::string_view text, const std::string& file, std::optional<NcclTest> test = std::nullopt);

/// The fitted latency and bus bandwidths (less the latency), by bytes.
struct NcclFit {
  double latency_s = 0;
  NcclTestsRow smallest;    ///< the row α comes from
  std::vector<Sample> bus;  ///< bytes → bus bytes per second
};

/// Fits α and the bandwidth-bound sizes' bus bandwidths as described above. Throws InputError
/// (naming `file` and the row's line) when every row is latency-bound.
[[nodiscard]] NcclFit fit_nccl_tests(const NcclTestsLog& log, const std::string& file);

/// `base` (the link class being calibrated) with the fitted latency and efficiency curve in place,
/// its line rate kept, each with a source naming what measured it: `measured_by` when given (a
/// measurement of parasim's own, e.g. "MPI_Allreduce by `parasim calibrate --backend mpi`"), else
/// the nccl-tests binary and `file`. Throws InputError (file and line) when a size's bus bandwidth is
/// above the line rate by more than 2%: the log then measured more than one such link per device
/// (several GPUs per node in a multi-node test share NVLink and the NICs).
[[nodiscard]] sim::LinkProfile calibrated_link(const sim::LinkProfile& base, const NcclTestsLog& log, const std::string& file,
                                               std::string_view measured_by = {});

}  // namespace parasim::calibrate
