#include "reports/html_timeline.hpp"

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "reports/format.hpp"
#include "sim/lower.hpp"

namespace parasim::reports {
namespace {

/// The `count` of `n` items a timeline keeps when it cannot show them all: evenly spaced, the first
/// and the last included (precondition: 1 ≤ count < n).
std::vector<std::size_t> evenly_spaced(std::size_t n, std::size_t count) {
  std::vector<std::size_t> picked;
  if (count == 1) return {0};
  for (std::size_t i = 0; i < count; ++i) picked.push_back((i * (n - 1) + (count - 1) / 2) / (count - 1));
  return picked;
}

/// The phase a task belongs to: a bar is a run of one micro-batch's tasks of one phase. Recompute
/// shares the backward's phase because full recomputation interleaves with it layer by layer.
int phase(sim::Category c) {
  switch (c) {
    case sim::Category::Forward: return 0;
    case sim::Category::Recompute:
    case sim::Category::Backward: return 1;
    case sim::Category::Optimizer: return 2;
    case sim::Category::TensorComm:
    case sim::Category::PipelineComm:
    case sim::Category::ExpertComm: return 3;
    case sim::Category::GradientComm: return 4;
    case sim::Category::DataLoad: return 5;
  }
  return 0;
}

}  // namespace

PipelineTimeline pipeline_timeline(const sim::Simulation& simulation, const TimelineOptions& options) {
  const sim::TaskGraph& g = simulation.step.tasks;
  const sim::Timeline& tl = simulation.timeline;
  PARASIM_CHECK(options.max_devices >= 1 && options.max_bars >= 1, "a timeline needs max_devices >= 1 and max_bars >= 1");
  PARASIM_CHECK(tl.start_ps.size() == g.task_count(), "the timeline belongs to the task graph");
  PARASIM_CHECK(simulation.collectives.size() == g.collectives.size(), "the collective estimates belong to the task graph");

  std::map<std::int64_t, std::int64_t> stage_of;
  for (const auto& d : simulation.result.per_device) stage_of.emplace(d.device, d.stage);
  std::vector<std::int64_t> devices = simulation.step.simulated_devices;
  if (devices.empty())
    for (std::int64_t d = 0; d < g.devices; ++d) devices.push_back(d);
  std::sort(devices.begin(), devices.end());
  // The lowest-numbered simulated device of each stage (a device the result does not place is its own "stage -1").
  std::map<std::int64_t, std::int64_t> device_of_stage;
  for (const std::int64_t d : devices) {
    const auto it = stage_of.find(d);
    device_of_stage.emplace(it == stage_of.end() ? -1 : it->second, d);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> shown(device_of_stage.begin(), device_of_stage.end());
  std::string note;
  const auto limit = static_cast<std::size_t>(options.max_devices);
  if (shown.size() > limit) {
    std::vector<std::pair<std::int64_t, std::int64_t>> kept;
    for (const std::size_t i : evenly_spaced(shown.size(), limit)) kept.push_back(shown[i]);
    note = "showing " + std::to_string(kept.size()) + " of " + std::to_string(shown.size()) +
           " pipeline stages (evenly spaced, the first and the last included)";
    shown = std::move(kept);
  }

  std::vector<Picoseconds> collective_ps;
  collective_ps.reserve(simulation.collectives.size());
  for (const auto& c : simulation.collectives) collective_ps.push_back(c.time);

  PipelineTimeline out;
  out.step_ps = tl.makespan.count;
  std::vector<TimelineBar> bars;
  const std::size_t streams = g.stream_count();
  std::vector<sim::TaskId> row_tasks;
  for (std::size_t k = 0; k < shown.size(); ++k) {
    const auto [stage, device] = shown[k];
    const std::string name = (stage >= 0 ? "stage " + std::to_string(stage) + " · " : std::string()) + "device " + std::to_string(device);
    out.rows.push_back(name + " · compute");
    out.rows.push_back(name + " · communication");
    for (int row = 0; row < 2; ++row) {
      // The row's tasks in start order; within a stream (FIFO) that is its issue order, and tasks of
      // several streams starting together keep the streams' order.
      row_tasks.clear();
      for (std::size_t s = 0; s < streams; ++s)
        if ((g.streams[s] == sim::Stream::Compute) == (row == 0))
          for (const sim::TaskId t : g.queue_of(static_cast<std::size_t>(device) * streams + s)) row_tasks.push_back(t);
      std::stable_sort(row_tasks.begin(), row_tasks.end(), [&](sim::TaskId a, sim::TaskId b) { return tl.start_ps[a] < tl.start_ps[b]; });
      const std::size_t row_begin = bars.size();
      for (const sim::TaskId t : row_tasks) {
        const std::int64_t start = tl.start_ps[t];
        const std::int64_t duration = sim::task_duration_ps(g, collective_ps, t);
        PARASIM_CHECK(start >= 0 && duration >= 0, "task " + std::to_string(t) + " has a negative start or duration");
        const auto category = static_cast<std::size_t>(g.category[t]);
        TimelineBar* last = bars.size() > row_begin ? &bars.back() : nullptr;
        if (last == nullptr || last->micro_batch != g.micro_batch[t] || phase(last->category) != phase(g.category[t])) {
          bars.push_back(TimelineBar{static_cast<std::int32_t>(2 * k) + row, start, start, g.category[t], g.micro_batch[t], 0, {}});
          last = &bars.back();
        }
        last->end_ps = std::max(last->end_ps, start + duration);
        last->busy_ps[category] += duration;
        ++last->tasks;
        // The first category with the most busy time names the bar (a backward run holds its recomputation).
        for (std::size_t c = 0; c < last->busy_ps.size(); ++c)
          if (last->busy_ps[c] > last->busy_ps[static_cast<std::size_t>(last->category)] ||
              (last->busy_ps[c] == last->busy_ps[static_cast<std::size_t>(last->category)] && c < static_cast<std::size_t>(last->category)))
            last->category = static_cast<sim::Category>(c);
      }
      // Runs that take no time draw nothing.
      bars.erase(std::remove_if(bars.begin() + static_cast<std::ptrdiff_t>(row_begin), bars.end(),
                                [](const TimelineBar& b) {
                                  return std::all_of(b.busy_ps.begin(), b.busy_ps.end(), [](std::int64_t ps) { return ps == 0; });
                                }),
                 bars.end());
    }
  }

  out.bars_total = static_cast<std::int64_t>(bars.size());
  if (out.bars_total > options.max_bars) {
    // Keep the bars that start first, so the picture is the whole pipeline over the first part of the step.
    std::stable_sort(bars.begin(), bars.end(), [](const TimelineBar& a, const TimelineBar& b) { return a.start_ps < b.start_ps; });
    const std::int64_t cut_ps = bars[static_cast<std::size_t>(options.max_bars)].start_ps;
    bars.resize(static_cast<std::size_t>(options.max_bars));
    std::stable_sort(bars.begin(), bars.end(), [](const TimelineBar& a, const TimelineBar& b) { return a.row < b.row; });
    if (!note.empty()) note += "; ";
    note += "showing the first " + std::to_string(options.max_bars) + " of " + std::to_string(out.bars_total) +
            " bars (those that start first, up to " + significant(static_cast<double>(cut_ps) * 1e-12, 4) + " s of the " +
            significant(static_cast<double>(out.step_ps) * 1e-12, 4) + " s step)";
  }
  out.bars = std::move(bars);
  out.note = std::move(note);
  return out;
}

}  // namespace parasim::reports
