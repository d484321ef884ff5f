#pragma once
/// The event loop every analytical simulation runs: a pure function of a TaskGraph and the duration
/// of each collective. One FIFO queue per resource (device stream); a task starts when it is at the
/// head of every queue it occupies and all its dependencies have finished; events are ordered by
/// (time, task id), so the same input gives the same timeline. Deadlock-free lowering is checked:
/// a task that can never start is reported as an InternalError naming it.
#include <cstdint>
#include <span>
#include <vector>

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

/// Runs the event loop. `collective_ps[i]` is the duration of TaskGraph::collectives[i].
[[nodiscard]] Timeline simulate_fifo(const TaskGraph& graph, std::span<const Picoseconds> collective_ps);

}  // namespace parasim::sim
