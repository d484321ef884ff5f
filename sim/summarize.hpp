#pragma once
/// What sim::simulate (sim/simulate.hpp) does around the engine, for callers that run the phases one
/// by one: the closed-form time of every collective of a task graph, their flows for the simgrid
/// backend, and the Result of a simulated step (its time by category per device, memory, traffic).
/// summarize.cpp also defines TimeBreakdown's compute_s and exposed_comm_s (sim/result.hpp): they
/// split time between compute and communication as the summary does.
#include <span>
#include <vector>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/collectives.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/lower.hpp"
#include "sim/profile.hpp"
#include "sim/result.hpp"
#include "sim/task_graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

enum class Backend;  ///< defined with its names in sim/simulate.hpp

/// Closed-form time of every collective of the task graph on the cluster.
[[nodiscard]] std::vector<CollectiveEstimate> estimate_collectives(const TaskGraph& tasks, const Cluster& cluster);

/// The Result of a simulated step (shared by every backend). `finish_ps`: per task, when it finished;
/// empty when each finished at its start + its duration (a collective's from `collectives`).
[[nodiscard]] Result summarize(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                               const LoweredStep& step, const Timeline& timeline, const std::vector<CollectiveEstimate>& collectives,
                               Backend backend, std::span<const std::int64_t> finish_ps = {});

/// What the input pipeline read and moved in the step and how long its loaders took (the verdict
/// is left to sim/input_verdict.hpp, which simulates again).
[[nodiscard]] InputFigures input_figures(const LoaderCosts& lc);

/// The flows of every collective of the task graph, for the algorithm its estimate chose.
[[nodiscard]] std::vector<CollectiveFlows> collective_flows_of(const TaskGraph& tasks, const Cluster& cluster,
                                                               const std::vector<CollectiveEstimate>& collectives);

}  // namespace parasim::sim
