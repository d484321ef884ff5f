#pragma once
/// The pipeline timeline report.html draws for one simulated step: one device per pipeline stage
/// (the lowest-numbered simulated device of each), two rows each — its compute stream, and its
/// communication streams (tensor, data, expert, pipeline, loader) together — and on each row a bar
/// per run of consecutive tasks of one micro-batch in one phase: its forward, its backward (with the
/// recomputation interleaved in it), the optimizer, its activation communication (tensor, pipeline,
/// expert), gradient communication, data loading. That is the classic pipeline diagram, one box per
/// micro-batch and pass, and it keeps a step of millions of tasks to a few bars per micro-batch; a
/// bar is coloured by the category that kept it busy longest and lists its time by category.
/// Further, at most `max_devices` stages are shown (evenly spaced, the first and the last included)
/// and at most `max_bars` bars (those that start first); `note` then says what was left out.
/// Deterministic: the same Simulation gives the same timeline.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulate.hpp"

namespace parasim::reports {

/// One bar: a run of tasks of one micro-batch and phase on one row.
struct TimelineBar {
  std::int32_t row = 0;           ///< index into PipelineTimeline::rows
  std::int64_t start_ps = 0;      ///< start of the run's first task
  std::int64_t end_ps = 0;        ///< the latest end of the run's tasks
  sim::Category category = sim::Category::Forward;  ///< the category with the most busy time (the first on a tie)
  std::int32_t micro_batch = -1;  ///< -1 when the tasks are not tied to one
  std::int64_t tasks = 0;         ///< tasks in the run
  /// Sum of the durations of the run's tasks, by category (their sum can exceed end − start on the
  /// communication row, where streams overlap, and fall short of it where the run has gaps).
  std::array<std::int64_t, sim::kCategoryCount> busy_ps{};
  bool operator==(const TimelineBar&) const = default;
};

struct PipelineTimeline {
  std::vector<std::string> rows;  ///< "stage 0 · device 0 · compute", "stage 0 · device 0 · communication", ...
  std::vector<TimelineBar> bars;  ///< ordered by (row, start)
  std::int64_t step_ps = 0;       ///< the step's makespan, where the chart's time axis ends
  std::int64_t bars_total = 0;    ///< bars before the max_bars cap
  std::string note;               ///< what was left out (stages, bars), or empty when nothing was
  bool operator==(const PipelineTimeline&) const = default;
};

struct TimelineOptions {
  std::int64_t max_devices = 8;  ///< stages shown, ≥ 1
  std::int64_t max_bars = 10000;  ///< bars kept, ≥ 1
};

/// The timeline of `simulation`. Preconditions (checked, InternalError): the timeline and collective
/// estimates belong to the simulation's task graph; options within range.
[[nodiscard]] PipelineTimeline pipeline_timeline(const sim::Simulation& simulation, const TimelineOptions& options = {});

}  // namespace parasim::reports
