#pragma once
/// Simulating a federated scenario ("federated", strategies/federated.hpp): one client's local step
/// is the scenario's plan on its cluster, simulated once; the rounds over the sampled clients are
/// then drawn by sim/federated.hpp.
#include "common/progress_sink.hpp"
#include "scenarios/scenario.hpp"
#include "sim/federated.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {

/// What sim/federated.hpp needs of scenario `s` whose client step simulated to `client_step`
/// (`graph` and `plan` the client's): the step, the model's bytes each way (the gradient
/// reduction's dtype), the samples a step, and the server's passes (on a device of the cluster's
/// kind) from the cost model.
[[nodiscard]] sim::FederatedInputs federated_inputs(const Scenario& s, const sim::Profile& profile, const sim::Result& client_step,
                                                    const models::Graph& graph, const strategies::Plan& plan);

/// Simulates federated scenario `s`: the client's step on `profile` with `backend` (`options` as
/// for a step), then spec.rounds rounds. The Result is the client's step, with Result::federated
/// the rounds' figures. Precondition: `s` came from the loader with a federated section.
[[nodiscard]] sim::Simulation simulate_federated_scenario(const Scenario& s, const sim::Profile& profile, sim::Backend backend,
                                                          const sim::LowerOptions& options = {}, ProgressSink* progress = nullptr);

}  // namespace parasim::scenarios
