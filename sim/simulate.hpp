#pragma once
/// One entry point for every backend: lower the plan, run an engine, summarise into a Result. The
/// phases around the engine are in sim/summarize.hpp, included here for callers that run them one
/// by one.
#include <span>
#include <string>
#include <string_view>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/links.hpp"
#include "sim/lower.hpp"
#include "sim/profile.hpp"
#include "sim/result.hpp"
#include "sim/summarize.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

enum class Backend { Analytical, SimGrid };
[[nodiscard]] std::string_view to_string(Backend b);

struct Simulation {
  LoweredStep step;
  Timeline timeline;
  std::vector<CollectiveEstimate> collectives;  ///< per TaskGraph collective: its time and algorithm
  /// Per task, when it finished (the simgrid backend: a collective's time depends on the traffic
  /// beside it; either backend under interference). Empty when every task finished at start +
  /// task_duration_ps.
  std::vector<std::int64_t> finish_ps;
  LinkUsage links;                  ///< link-level figures, with the busy tracks of the busiest links
  std::int64_t simgrid_activities = 0;  ///< SimGrid activities the simgrid backend created (0 for analytical)
  Result result;
};

/// When task `t` of the simulation finished, in picoseconds. `collective_ps[i]`: the closed-form
/// duration of collective i (used when the simulation has no finish times of its own).
[[nodiscard]] inline std::int64_t task_finish_ps(const Simulation& s, std::span<const Picoseconds> collective_ps, TaskId t) {
  return s.finish_ps.empty() ? s.timeline.start_ps[t] + task_duration_ps(s.step.tasks, collective_ps, t) : s.finish_ps[t];
}

/// The interference of `tasks` on `cluster`: every device's rates from its kind's profile entry, and
/// each collective's share of the in-node SM cost (InterferenceRates, nccl_channels_across_nodes).
[[nodiscard]] Interference step_interference(const TaskGraph& tasks, const Cluster& cluster, const Profile& profile);

/// Lowers and simulates one step with `backend`, and adds the link-level figures and the topology
/// notes (sim/topology_notes.hpp) to the Result. Throws PlanError when a figure it needs is missing.
/// `progress`, when given, hears each phase (lowering, simulating with the count of finished tasks
/// under the analytical engine, summarising) as it begins and ends.
[[nodiscard]] Simulation simulate(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                                  Backend backend = Backend::Analytical, const LowerOptions& options = {}, ProgressSink* progress = nullptr);

}  // namespace parasim::sim
