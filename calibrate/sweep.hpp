#pragma once
/// Measured sweeps and the efficiency curves fitted to them. A microbenchmark times one operation
/// at several sizes; the rates it achieves, over a peak, become an EfficiencyCurve of the profile
/// (sim/profile.hpp), so the cost model predicts at each measured size the time that was measured.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/profile.hpp"

namespace parasim::calibrate {

/// One size of a sweep: the size in the unit of the curve it feeds (FLOPs of a GEMM, bytes a
/// memory-bound kernel moves, bytes of a collective) and the rate achieved at it, per second.
struct Sample {
  double size = 0;
  double rate_per_s = 0;
  bool operator==(const Sample&) const = default;
};

/// The curve through (size, rate / peak) for every sample, sorted by size; where a size repeats,
/// its fastest sample. Preconditions (checked, InternalError): at least one sample, sizes and rates
/// positive, no rate above `peak_per_s`.
[[nodiscard]] sim::EfficiencyCurve efficiency_curve(std::span<const Sample> samples, double peak_per_s);

/// The sizes and rates of a sweep, as a source sentence: "64^3 -> 12.3, 128^3 -> 45.6 GFLOP/s" (each
/// rate over `unit`, two decimals; each size as `size_text` writes it).
[[nodiscard]] std::string listing(std::span<const Sample> samples, double unit, const char* unit_name, const std::function<std::string(double)>& size_text);

/// Thin GEMMs' times: one of m, n and k at `dim`, the other two a calibration's `other`, timed with
/// the thin dim as m, as n and as k (a layer's forward, data-gradient and weight-gradient GEMMs).
struct ThinGemm {
  std::int64_t dim = 0;
  std::array<double, 3> seconds{};
};

/// The thin-GEMM factor curve (DeviceProfile::gemm_thin_efficiency) by thin dim: at each, the time
/// `device`'s square curve gives the GEMM's FLOPs in `dtype` over the measured time, averaged over
/// the three orientations (or of `orientation` alone: 0 the thin dim as m, 1 as n, 2 as k), at most 1;
/// and its listing for the profile's source ("64 -> 0.512, ...").
[[nodiscard]] std::pair<sim::EfficiencyCurve, std::string> thin_gemm_curve(const sim::DeviceProfile& device, models::DType dtype,
                                                                           std::span<const ThinGemm> thin, std::int64_t other,
                                                                           std::optional<std::size_t> orientation = std::nullopt);

/// The fastest rate among the samples. Precondition: at least one sample.
[[nodiscard]] double best_rate(std::span<const Sample> samples);

/// The shortest wall time of `run`, in seconds, over at least `min_repeats` runs and until the runs
/// together took at least `min_total_s` (so short operations are timed many times).
[[nodiscard]] double best_seconds(const std::function<void()>& run, int min_repeats, double min_total_s);

/// The median wall time of `run`, in seconds, over at least `min_repeats` runs and until the runs
/// together took at least `min_total_s` (how a step's kernels are measured: the typical run, not the
/// luckiest). `in_step`, where given, is called once before the runs (CpuOptions::in_step).
[[nodiscard]] double median_seconds(const std::function<void()>& run, int min_repeats, double min_total_s, const std::function<void()>& in_step = {});

/// The median wall time of each of `runs`, timed in `rounds` rounds: each round times every run in
/// turn, after one untimed run (its operands back in the caches), until its runs in that round took
/// `min_total_s / rounds` (at least once), and a run's median is over all its rounds. Interleaved so a drift of the machine's speed (another process,
/// the clock) falls on every size alike, not on the sizes measured last: the held-out checks of a
/// calibration compare sizes measured in one sweep. `in_step`, where given, is called before each
/// run's turn in a round (before its untimed run), untimed, rounds × runs times whatever the times: under `calibrate --backend mpi` a
/// barrier, so every rank of the host times the same kernel at the same moment (CpuOptions::in_step).
[[nodiscard]] std::vector<double> interleaved_medians(std::span<const std::function<void()>> runs, int rounds, double min_total_s,
                                                      const std::function<void()>& in_step = {});

}  // namespace parasim::calibrate
