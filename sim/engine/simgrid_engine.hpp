#pragma once
/// The `simgrid` backend: the TaskGraph the analytical engine runs, run on SimGrid 3.32 (S4U) so
/// that concurrent traffic shares links max-min fairly (flow level, not packet level).
///
/// - Platform: a host per device (at its profile speed × speed factor); one SimGrid link per
///   direction of every link of sim/topology.hpp that some flow crosses, at its raw bandwidth.
/// - Compute, copy and load tasks keep the durations the cost model gave them at lowering; the
///   dataflow walk over the device streams times them (simgrid_run.cpp), SimGrid times the network.
///   Under interference (sim/interference.hpp) a compute task runs in SimGrid instead, as an
///   execution on its device's host, whose speed drops to the compute rate while a collective is
///   in flight on the device; while the device computes, the links only it drives (its port, and
///   its own NIC on a node with a NIC per device) carry the communication rate of their bandwidth,
///   so a collective crossing them slows as its devices compute.
/// - A collective runs the flows of its algorithm (sim/collectives.hpp, collective_flows, for the
///   algorithm the closed form chose), phase after phase; a phase ends when its last flow does.
/// - Every device stream is one ordered queue whose tasks start in issue order (FIFO), each once its
///   dependencies have finished; a collective starts when every member's stream has reached it,
///   and a runner actor plays its flows in SimGrid.
/// - The network model is plain max-min sharing (CM02 without TCP corrections; see
///   simgrid_run.cpp for why and how flows become SimGrid communications).
///
/// SimGrid's engine is process-global and its clock carries over from one run to the next, so
/// each simulation runs in a child process (fork) and hands its timeline back through shared
/// memory: two scenarios can be simulated in one parasim process and the caller keeps no global
/// state. Deterministic: the same inputs give the same timeline.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/collectives.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/interference.hpp"
#include "common/progress_sink.hpp"
#include "sim/task_graph.hpp"

namespace parasim::sim {

/// What a SimGrid run produced.
struct SimGridRun {
  Timeline timeline;                    ///< start of every task, and the makespan
  std::vector<std::int64_t> finish_ps;  ///< per task: when it finished (a collective's time depends on its neighbours)
  /// SimGrid activities the run created: communications, sleeps (latencies, waits for a
  /// collective's start) and semaphore acquisitions.
  std::int64_t activities = 0;
  std::int64_t communications = 0;    ///< of which communications
  std::int64_t synchronisations = 0;  ///< of which semaphore acquisitions
  /// CPU and wall time of SimGrid's run in the child process (platform built), for benchmarks only:
  /// they vary from run to run and never enter a Result.
  double run_cpu_s = 0;
  double run_wall_s = 0;
};

/// Runs `graph` on `cluster` under SimGrid. `flows[i]` are the flows of TaskGraph::collectives[i]
/// (collective_flows of its resolved algorithm); `device_speed_flops[d]` the compute speed of
/// device d, FLOP/s; `interference`: the rates of each device (none: overlap is free). Throws
/// InternalError when the child process fails (its reason included) or a task can never start (a
/// lowering bug: it names the task).
/// `progress`, when given, hears the count of finished tasks about every 0.2 s while SimGrid runs
/// (the caller begins and ends its phase, with the task count as its total).
[[nodiscard]] SimGridRun simulate_simgrid(const TaskGraph& graph, const Cluster& cluster, std::span<const CollectiveFlows> flows,
                                          std::span<const double> device_speed_flops, const Interference& interference = {},
                                          ProgressSink* progress = nullptr);

}  // namespace parasim::sim
