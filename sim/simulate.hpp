#pragma once
/// One entry point for every backend: lower the plan, run an engine, summarise into a Result.
#include <string>
#include <string_view>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/lower.hpp"
#include "sim/profile.hpp"
#include "sim/result.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

enum class Backend { Analytical, SimGrid };
[[nodiscard]] std::string_view to_string(Backend b);

struct Simulation {
  LoweredStep step;
  Timeline timeline;
  std::vector<CollectiveEstimate> collectives;  ///< per TaskGraph collective: its time and algorithm
  Result result;
};

/// Closed-form time of every collective of the task graph on the cluster.
[[nodiscard]] std::vector<CollectiveEstimate> estimate_collectives(const TaskGraph& tasks, const Cluster& cluster);

/// The Result of a simulated step (shared by every backend).
[[nodiscard]] Result summarize(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                               const LoweredStep& step, const Timeline& timeline, const std::vector<CollectiveEstimate>& collectives,
                               Backend backend);

/// Lowers and simulates one step. Throws PlanError when a figure it needs is missing.
[[nodiscard]] Simulation simulate(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                                  Backend backend = Backend::Analytical, const LowerOptions& options = {});

}  // namespace parasim::sim
