#pragma once
/// The event loop every analytical simulation runs: a pure function of a TaskGraph and the duration
/// of each collective. One FIFO queue per resource (device stream); a task starts when it is at the
/// head of every queue it occupies and all its dependencies have finished. Deadlock-free lowering is
/// checked: a task that can never start is reported as an InternalError naming it.
///
/// Two implementations give the same timeline:
///  - simulate_fifo processes tasks in dataflow order: because every resource is FIFO and every
///    duration is fixed, a task's start is exactly max(finish of its dependencies, finish of its
///    predecessor in each of its queues), so no time-ordered event queue is needed — O(tasks + edges).
///    When every queue follows the task ids (TaskGraph::queues_follow_ids, as the lowering makes
///    them), that order is simply the ids: one pass with no successor lists;
///  - simulate_fifo_events is the textbook discrete-event loop with a (time, task id) priority queue;
///    the tests run both and compare, and it is the model for backends whose durations depend on
///    what else is in flight.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "common/progress_sink.hpp"
#include "common/sim_time.hpp"
#include "sim/task_graph.hpp"

namespace parasim::sim {

/// When every task started; finish = start + duration (a collective's from the durations table).
struct Timeline {
  std::vector<std::int64_t> start_ps;
  Picoseconds makespan;
  bool operator==(const Timeline&) const = default;
};

/// Duration of task t: its own for compute/copy/load, the table's for a collective.
[[nodiscard]] inline std::int64_t task_duration_ps(const TaskGraph& g, std::span<const Picoseconds> collective_ps, TaskId t) {
  return g.kind[t] == TaskKind::Collective ? collective_ps[g.owner[t]].count : g.duration_ps[t];
}

/// When task `t` can start in a pass over the ids: the latest of its dependencies' finishes
/// (`finish_ps`, by task) and of the times its resources free (`free_at`, by resource) on `devices`,
/// the devices it occupies. Inline: both one-pass engines call it for every task.
[[nodiscard]] inline std::int64_t earliest_start(const TaskGraph& g, TaskId t, const std::int64_t* finish_ps, const std::int64_t* free_at,
                                                std::span<const std::int64_t> devices) {
  std::int64_t start = 0;
  for (std::uint32_t k = g.dep_begin[t]; k < g.dep_begin[t + 1]; ++k) start = std::max(start, finish_ps[g.deps[k]]);
  const std::size_t streams = g.stream_count(), stream = g.stream[t];
  for (const std::int64_t d : devices) start = std::max(start, free_at[static_cast<std::size_t>(d) * streams + stream]);
  return start;
}

/// Refuses (PlanError, exit 3) a step whose tasks, run one after another and each slowed to
/// `slowest_rate` of its speed, would take longer than the picosecond clock holds: no start or finish
/// can then overflow, since a timeline never exceeds that sum. One pass over the tasks.
void check_time_range(const TaskGraph& graph, std::span<const Picoseconds> collective_ps, double slowest_rate = 1);

/// Runs the simulation. `collective_ps[i]` is the duration of TaskGraph::collectives[i]. `progress`,
/// when given, hears the count of finished tasks every 262,144 tasks (the caller begins and ends
/// its phase).
[[nodiscard]] Timeline simulate_fifo(const TaskGraph& graph, std::span<const Picoseconds> collective_ps, ProgressSink* progress = nullptr);
/// The same timeline from a time-ordered event loop (slower; the reference).
[[nodiscard]] Timeline simulate_fifo_events(const TaskGraph& graph, std::span<const Picoseconds> collective_ps);

}  // namespace parasim::sim
