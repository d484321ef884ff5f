#pragma once
/// Internals of the simgrid backend (simgrid_engine.hpp): one SimGrid simulation in the calling
/// process. It creates SimGrid's process-global engine, so only a child process calls it. It is built
/// into libparasim_simgrid.so (common/plugin.hpp), the one part of parasim that links SimGrid, which
/// the parent loads before it forks (simgrid_plugin()).
#include <cstdint>
#include <atomic>
#include <span>
#include <string>

#include "sim/cluster.hpp"
#include "sim/collectives.hpp"
#include "sim/interference.hpp"
#include "sim/task_graph.hpp"

namespace parasim::sim::simgrid_detail {

/// Where the run writes what it found (the caller's memory, shared with the parent process).
struct Output {
  std::span<std::int64_t> start_ps;   ///< per task
  std::span<std::int64_t> finish_ps;  ///< per task
  std::int64_t makespan_ps = 0;
  std::int64_t activities = 0;
  std::int64_t communications = 0;
  std::int64_t synchronisations = 0;  ///< semaphore acquisitions (a collective handed to a runner, a finish handed back)
  double run_cpu_s = 0;   ///< CPU time of SimGrid's run (the platform built), for benchmarks
  double run_wall_s = 0;  ///< wall time of the same
  /// Where the run counts its finished tasks for the parent's progress (memory shared with it),
  /// every 4,096 tasks; null: not counted.
  std::atomic<std::uint64_t>* finished = nullptr;
};

/// Builds the platform and the actors and runs the simulation to its end. Throws InternalError when
/// a task never starts. Precondition: no SimGrid engine exists in this process yet.
void run_here(const TaskGraph& graph, const Cluster& cluster, std::span<const CollectiveFlows> flows,
              std::span<const double> device_speed_flops, const Interference& interference, Output& out);

/// What libparasim_simgrid.so provides.
struct SimgridPlugin {
  int version = 1;  ///< kSimgridPluginVersion of the build that made it
  decltype(&run_here) run = nullptr;
};

inline constexpr int kSimgridPluginVersion = 1;

/// The loaded library's table, loading it on the first call (thread-safe). Throws PlanError saying
/// why when it cannot be loaded (the `--backend simgrid` runs need it).
[[nodiscard]] const SimgridPlugin& simgrid_plugin();

}  // namespace parasim::sim::simgrid_detail
