#pragma once
/// Compute–communication interference: the analytical engine when overlap has a price.
///
/// Collectives run as kernels on the devices whose streams they occupy, beside the compute kernels:
/// they take SMs and memory bandwidth from the GEMMs they overlap, and are slowed by them. The model
/// (a fluid one, piecewise-constant rates):
///  - a compute task progresses at rate 1, or, while collectives are in flight on its device, at the
///    smallest of their kinds' `compute` rates for that device;
///  - a collective (or send) progresses at rate 1, or, while any device it occupies runs a compute
///    task, at its kind's `communication` rate (the smallest over its devices).
/// A task's duration is its work at rate 1 (the cost model's figure); rates change only when a task
/// starts or ends, so the timeline is exact: each task's remaining work is advanced at every rate
/// change and its finish re-predicted. Queues and dependencies are as in simulate_fifo: FIFO streams,
/// a task starts once it heads each of its queues and its dependencies have finished.
///
/// With every rate 1 the timeline equals simulate_fifo's (the tests check it); the one-pass engine
/// is then the one to run (Interference::none).
#include <cstdint>
#include <span>
#include <vector>

#include "common/sim_time.hpp"
#include "sim/interference.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/task_graph.hpp"

namespace parasim::sim {

/// A timeline whose durations depend on what ran beside each task.
struct InterferedTimeline {
  Timeline timeline;
  std::vector<std::int64_t> finish_ps;  ///< per task
  /// Which engine produced it: the one pass over the ids (true) or the fluid event loop. Both give
  /// the same timeline wherever the one pass applies (the tests check it); only the cost differs.
  bool one_pass = false;
  bool operator==(const InterferedTimeline&) const = default;
};

/// Per device of `graph`: how much longer its compute tasks ran than their own durations (their
/// stretch under interference), from when each task started and finished (any backend's).
[[nodiscard]] std::vector<std::int64_t> compute_stretch_ps(const TaskGraph& graph, std::span<const std::int64_t> start_ps,
                                                           std::span<const std::int64_t> finish_ps);

/// Fills `x.at_size` with each collective of `graph`'s rates at its bytes, where some rate set of `x`
/// has rates by size (InterferenceRates::by_size); leaves it empty otherwise.
void size_rates(Interference& x, const TaskGraph& graph);

/// Simulates `graph` with the durations of simulate_fifo (`collective_ps[i]` for collective i) at the
/// rates of `interference` (one entry per device of the graph, or none at all: every rate 1; its rates
/// by size filled by size_rates). Deadlocks are reported as by
/// simulate_fifo. `progress` hears the count of finished tasks every 262,144 tasks.
[[nodiscard]] InterferedTimeline simulate_interference(const TaskGraph& graph, std::span<const Picoseconds> collective_ps,
                                                       const Interference& interference, ProgressSink* progress = nullptr);

}  // namespace parasim::sim
