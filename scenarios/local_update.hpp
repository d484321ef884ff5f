#pragma once
/// The scenarios a local-update scenario ("local_update", strategies/local_update.hpp) stands on:
/// each replica's own (its share of the nodes, its share of the batch, the scenario's plan), and the
/// synchronous data-parallel run on the same devices that it is compared with.
#include <cstdint>
#include <optional>
#include <string>

#include "common/progress_sink.hpp"
#include "scenarios/scenario.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {

/// The replica count of `s`'s local update: as written, else one per site of the cluster's WAN (one
/// site without a WAN). Precondition: s.local_update.
[[nodiscard]] std::int64_t replica_count(const Scenario& s);

/// Why the replicas cannot be laid out on `s`'s cluster and batch, as a pointer and a message, or
/// nothing: fewer than two, a count that does not split the nodes into whole replicas, replicas that
/// would straddle sites (the count must be a multiple of the sites), a global batch they do not split,
/// more fragments than inner steps. Precondition: s.local_update.
struct LocalUpdateProblem {
  std::string pointer;
  std::string message;
};
[[nodiscard]] std::optional<LocalUpdateProblem> local_update_problem(const Scenario& s);

/// Replica `r`'s own scenario: nodes/k consecutive nodes of the cluster (their node groups and
/// stragglers, renumbered; no WAN), global_batch/k samples per inner step, the same plan, no local
/// update and no what-ifs. Precondition: local_update_problem(s) found nothing, 0 <= r < k.
[[nodiscard]] Scenario replica_scenario(const Scenario& s, std::int64_t r);

/// The synchronous data-parallel run on the same devices: `s` without its local update, the plan's
/// data-parallel degree (when written) times the replica count. Precondition: as replica_scenario.
[[nodiscard]] Scenario synchronous_scenario(const Scenario& s);

/// The parameters one device of `plan` holds that the outer step passes over: the most of any
/// stage, sharded over the data-parallel ranks as ZeRO shards the inner optimizer's state.
[[nodiscard]] double outer_parameters_per_device(const sim::Result& inner, const strategies::Plan& plan);

/// Simulates local-update scenario `s` on `profile` with `backend`: each distinct replica's inner
/// step (the ordinary lowering of its plan, `options` as for a step), the outer steps on the whole
/// cluster (sim/local_update.hpp) with the WAN bandwidth that reaches 95% compute utilisation, and
/// synchronous data parallelism on the same devices. Returns the slowest replica's simulation: its
/// Result is that replica's inner step, its memory with the outer optimizer's state, and
/// Result::local_update the outer figures. Precondition: `s` came from the loader with a local update.
[[nodiscard]] sim::Simulation simulate_local_update(const Scenario& s, const sim::Profile& profile, sim::Backend backend,
                                                    const sim::LowerOptions& options = {}, ProgressSink* progress = nullptr);

}  // namespace parasim::scenarios
