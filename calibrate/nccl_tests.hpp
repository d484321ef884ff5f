#pragma once
/// nccl-tests results (github.com/NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf,
/// reduce_scatter_perf, sendrecv_perf) and the link profile they calibrate.
///
/// parasim's collective model is alpha–beta (sim/collectives.hpp): a ring all-reduce of S bytes over
/// n ranks takes 2(n−1)·α + 2(n−1)/n · S / (B · e(S)), with B the link's line rate and e(S) its
/// efficiency at S. nccl-tests reports, per size S, the time t and the bus bandwidth
/// busbw = factor · S / t with the same factor (2(n−1)/n for all-reduce, (n−1)/n for all-gather and
/// reduce-scatter, 1 for send/receive; nccl-tests doc/PERFORMANCE.md). An NVLS all-reduce (NVLink
/// SHARP, sim/collectives/nvls.cpp) takes α + (n+1)/n · S / (B · e(S)): one latency, and (n+1)/n · S
/// over each port. So, with t the faster of a row's out-of-place and in-place times:
///  - α = t / steps at the smallest size (steps: 2(n−1), n − 1, n − 1, 1 for the ring; 1 for NVLS),
///    when moving that size at the base link's line rate would take at most 1% of t; a log that
///    starts at larger sizes cannot measure α, which then stays the base link's;
///  - e(S) = bytes(S) / (t − steps·α) / B at every size whose time exceeds the latency (bytes:
///    factor · S for the ring, (n+1)/n · S for NVLS), so the model gives back the measured time at
///    each measured size; the curve carries what α–β cannot (NCCL's protocol changes with size).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/sweep.hpp"
#include "sim/collectives/names.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

enum class NcclTest { AllReduce, AllGather, ReduceScatter, SendRecv };
[[nodiscard]] std::string_view to_string(NcclTest t);  ///< "all_reduce", ...
[[nodiscard]] std::optional<NcclTest> nccl_test_from_string(std::string_view s);
/// The collective kind a test times, as the cost model names it.
[[nodiscard]] sim::CollectiveKind collective_kind(NcclTest t);

/// One result row (the out-of-place columns).
struct NcclTestsRow {
  double bytes = 0;           ///< nccl-tests' size column (parasim's size convention for the collective)
  double time_s = 0;            ///< out-of-place
  double in_place_time_s = 0;   ///< 0 when the log has no in-place columns
  double bus_bytes_per_s = 0;
  std::size_t line = 0;       ///< 1-based line in the log
  /// The faster of the two timings of the same collective: the one less disturbed.
  [[nodiscard]] double best_time_s() const { return in_place_time_s > 0 ? std::min(time_s, in_place_time_s) : time_s; }
};

struct NcclTestsLog {
  NcclTest test = NcclTest::AllReduce;
  /// The highest rank number of the "#  Rank ..." lines plus one (ranks count from 0; a published
  /// excerpt may print only the last rank's line).
  std::int64_t ranks = 0;
  std::int64_t rank_lines = 0;  ///< "#  Rank ..." lines printed
  std::int64_t hosts = 0;   ///< distinct host names among them
  std::string device;       ///< the first printed rank's device name (printable ASCII: calibrate/source_text.hpp)
  std::vector<NcclTestsRow> rows;
  /// α from the fastest row rather than the smallest size: set by calibrate --backend mpi, whose
  /// polled waits end on a sleep's boundary, so that a small size can take longer than a larger one
  /// and a later row would otherwise come out faster than the latency (above the line rate).
  bool latency_from_fastest_row = false;
  /// How each row's time was taken, for the profile's sources: set by calibrate --backend mpi ("each
  /// call timed on a rank arriving 200 us after the others"), empty for a log nccl-tests printed.
  std::string timing;
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
  bool latency_from_log = true;  ///< false: the smallest size was too large to measure α (the base link's)
  NcclTestsRow smallest;    ///< the row α comes from
  std::vector<Sample> bus;  ///< bytes → bus bytes per second
};

/// The algorithm whose model a log is fitted with: the ring (sim::CollectiveAlgorithm::Ring) or NVLS
/// (sim::CollectiveAlgorithm::Nvls, all-reduce only).
/// Fits α and the bus bandwidths (NVLS: the per-port rates (n+1)/n · S / (t − α)) as described above;
/// `base`, when given, decides whether the smallest size can measure α (else α is its latency).
/// Throws InputError (naming `file` and the row's line) when no row's time exceeds the latency, or
/// when NVLS is asked of another collective than all_reduce.
[[nodiscard]] NcclFit fit_nccl_tests(const NcclTestsLog& log, const std::string& file,
                                     sim::CollectiveAlgorithm algorithm = sim::CollectiveAlgorithm::Ring,
                                     const sim::LinkProfile* base = nullptr);

/// `base` (the link class being calibrated) with the fitted latency and efficiency curve in place,
/// its line rate kept, each with a source naming what measured it: `measured_by` when given (a
/// measurement of parasim's own, e.g. "MPI_Allreduce by `parasim calibrate --backend mpi`"), else
/// the nccl-tests binary and `file`. Throws InputError (file and line) when a size's bus bandwidth is
/// above the line rate by more than 2%: the log then measured more than one such link per device
/// (several GPUs per node in a multi-node test share NVLink and the NICs), or an in-network
/// reduction (NVLS) whose link the ring's cannot stand for. `algorithm` Nvls fits the NVLS model:
/// the link calibrated is then an NVLS link (`--link nvlink4-sharp`), the one a cluster's
/// intra_node.nvls_link names.
[[nodiscard]] sim::LinkProfile calibrated_link(const sim::LinkProfile& base, const NcclTestsLog& log, const std::string& file,
                                               std::string_view measured_by = {},
                                               sim::CollectiveAlgorithm algorithm = sim::CollectiveAlgorithm::Ring);

/// `link` (already fitted, e.g. to an all-reduce) with a curve of its own for the collective of
/// `log` (all_gather, reduce_scatter or sendrecv): each size's bus bandwidth (nccl-tests' factor)
/// with the link's latency over the collective's ring steps taken off, at most the line rate, over
/// the line rate; a source naming `measured_by`. Sizes all latency are left out; with none left the
/// link is returned as it was.
[[nodiscard]] sim::LinkProfile with_collective_curve(const sim::LinkProfile& link, const NcclTestsLog& log, std::string_view measured_by);

}  // namespace parasim::calibrate
