#pragma once
/// How big a plan's TaskGraph will be, known before lowering it: the task count, the (task, device)
/// queue entries and the memory the lowering and the engine will hold — so a scenario too large for
/// the machine is refused up front instead of running until the machine swaps.
///
/// The estimate counts the step's work (sim/work/work.hpp), the same description the lowering
/// instantiates: every item of every chunk program, multiplied by the micro-batches and by the
/// devices (or collective groups) of the chunk's stage, and the gradient buckets, the optimizer step
/// and the parameter gathers. The cost is O(operators + edges), independent of the device and
/// micro-batch counts: a millisecond for a transformer, however large the cluster.
///
/// It is an upper bound on the lowered task count (a collective the lowering finds unnecessary is
/// still counted), exact for the plans tests/sim/task_estimate_test.cpp compares against.
#include <cstdint>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

struct TaskEstimateOptions {
  /// Count one data-parallel replica only, as the lowering does when it uses its replica shortcut
  /// (identical replicas simulated once). Set it only when the lowering will take the shortcut.
  bool one_data_parallel_replica = false;
};

/// The size of a TaskGraph before it exists. Counts are exact integers in 64 bits (a plan may ask
/// for more tasks than a TaskGraph can index; that is what the estimate is for).
struct TaskEstimate {
  std::uint64_t tasks = 0;          ///< tasks (compute segments, collectives, sends, optimizer steps)
  std::uint64_t queue_entries = 0;  ///< (task, device stream) pairs: a collective is queued on every member
  std::uint64_t dependencies = 0;   ///< dependency edges (estimated: one per queue entry, one per send received)
  std::uint64_t memory_bytes = 0;   ///< peak heap bytes of lowering and simulating the graph (kLoweringBytes, kEngineBytes)
  bool operator==(const TaskEstimate&) const = default;
};

/// Heap bytes one phase of a simulation holds at its peak, per task, per queue entry and per
/// dependency (the derivation, array by array, is in task_estimate.cpp).
struct PhaseBytes {
  std::uint64_t per_task = 0;
  std::uint64_t per_queue_entry = 0;
  std::uint64_t per_dependency = 0;
};
/// The lowering, as it lays out the per-resource queues (sim/lower.cpp, TaskGraphBuilder::finish_in_id_order).
inline constexpr PhaseBytes kLoweringBytes{31, 20, 4};
/// The analytical engine running the finished TaskGraph (sim/engine/fifo_engine.cpp).
inline constexpr PhaseBytes kEngineBytes{51, 4, 8};
/// TaskEstimate::memory_bytes = the larger phase × kMemorySlackNumerator / kMemorySlackDenominator:
/// a quarter more for what the arrays do not show (allocator headers and rounding, the tables, the
/// summary and the trace writer).
inline constexpr std::uint64_t kMemorySlackNumerator = 5;
inline constexpr std::uint64_t kMemorySlackDenominator = 4;

/// The largest task count, queue entry count and dependency count a TaskGraph can index (its ids
/// and CSR offsets are 32-bit).
inline constexpr std::uint64_t kMaxTaskGraphIndex = UINT32_MAX - 1;

/// Estimates the TaskGraph sim::lower would build for `plan` on `graph`. Precondition: the plan was
/// made for the graph (strategies::make_plan). Pure; never allocates more than O(operators).
[[nodiscard]] TaskEstimate estimate_task_graph(const models::Graph& graph, const strategies::Plan& plan,
                                               const TaskEstimateOptions& options = {});

}  // namespace parasim::sim
