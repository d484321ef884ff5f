#pragma once
/// Simulating a federated scenario ("federated", strategies/federated.hpp): one client's local step
/// is the scenario's plan on its cluster, simulated once; the rounds over the sampled clients are
/// then drawn by sim/federated.hpp.
#include "common/progress_sink.hpp"
#include "scenarios/scenario.hpp"
#include "sim/simulate.hpp"

namespace parasim::scenarios {

/// Simulates federated scenario `s`: the client's step on `profile` with `backend` (`options` as
/// for a step), then spec.rounds rounds. The Result is the client's step, with Result::federated
/// the rounds' figures. Precondition: `s` came from the loader with a federated section.
[[nodiscard]] sim::Simulation simulate_federated_scenario(const Scenario& s, const sim::Profile& profile, sim::Backend backend,
                                                          const sim::LowerOptions& options = {}, ProgressSink* progress = nullptr);

}  // namespace parasim::scenarios
