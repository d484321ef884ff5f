#pragma once
/// The outer step of local-update training (strategies/local_update.hpp): H inner steps on every
/// replica, then the synchronisation of the pseudo-gradients over the WAN, simulated as a task graph
/// on the whole cluster by the same engines as a step.
///
/// Each inner step is one task of the replica's simulated step time (the ordinary plan's lowering,
/// simulated once per distinct replica by the caller, not unrolled H times here). One device per
/// replica stands for its replica on the WAN: every replica's pseudo-gradient leaves its site
/// through the site's one WAN link, which is the narrowest hop, so one collective of the whole
/// pseudo-gradient between one device of each replica loads it as the replica's devices together
/// would (a note says so when a device's own network port is narrower than the WAN). Around the
/// collective, the memory-bound passes of the outer step (pseudo-gradient, compression, outer
/// optimizer) run on the replicas' compute.
///
/// DiLoCo: after inner step H the replicas compute their pseudo-gradients, all-reduce them and apply
/// the outer optimizer before inner step H + 1. Streaming DiLoCo: fragment f (of F) synchronises after
/// inner step ⌊(f + 1)·H / F⌋ of each outer step, its all-reduce in flight during the next τ inner
/// steps, merged before the one after them; fragments share the WAN in order. Three outer steps are
/// simulated and the steady state read between the ends of the first and the last.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/result.hpp"
#include "strategies/local_update.hpp"

namespace parasim::sim {

enum class Backend;  ///< defined with its names in sim/simulate.hpp

/// One replica in the outer simulation.
struct OuterReplica {
  std::int64_t device = 0;  ///< the device that stands for it on the WAN
  double inner_step_s = 0;  ///< its simulated inner step
  /// The outer step's passes over its parameters (whole model: each fragment takes its share),
  /// before and after the synchronisation.
  double before_s = 0, after_s = 0;
};

struct OuterProblem {
  strategies::LocalUpdateSpec spec;  ///< replicas resolved (> 0)
  std::vector<OuterReplica> replicas;
  double wire_bytes = 0;  ///< one replica's whole pseudo-gradient as sent (compression applied)
};

/// What the outer simulation gives.
struct OuterRun {
  double outer_step_s = 0;  ///< steady state: H inner steps and the synchronisations
  /// Inner-step compute over the outer step, mean over the replicas.
  double compute_utilisation = 0;
  /// Bytes over the WAN per outer step: all WAN links together, both directions; and per site link,
  /// one direction (the most loaded).
  double wan_bytes = 0;
  double wan_bytes_per_site = 0;
  /// The busiest WAN link's time with traffic in flight over the outer step.
  double wan_utilisation = 0;
  std::int64_t tasks = 0;
};

/// Simulates three outer steps of `problem` on `cluster` (its sites and WAN) with `backend`.
[[nodiscard]] OuterRun simulate_outer(const OuterProblem& problem, const Cluster& cluster, Backend backend);

/// The least WAN bandwidth per site (bytes/s, per direction) at which the mean compute utilisation
/// reaches `target` (in (0, 1)), by bisection on the simulated outer step (relative precision 1e-3);
/// 0 when even a WAN of no transfer time cannot reach it (the latency, the outer step's own passes or
/// a straggling replica leave too little), and then `reachable` is false.
struct BandwidthNeed {
  double bytes_per_s = 0;
  bool reachable = false;
};
[[nodiscard]] BandwidthNeed wan_bandwidth_for(const OuterProblem& problem, const Cluster& cluster, Backend backend, double target);

/// The time a step of `result` takes with its synchronisation: a local update's time per inner step
/// (its outer step over H), else the step time.
[[nodiscard]] double time_per_step_s(const Result& result);
/// The devices the run uses: a local update's replicas' together (its Result's own are one
/// replica's), else the Result's.
[[nodiscard]] std::int64_t devices_in_run(const Result& result);

/// Bytes over the WAN in a simulated step: every WAN link, both directions (0 without a WAN).
[[nodiscard]] double wan_bytes(const Result& result);

}  // namespace parasim::sim
