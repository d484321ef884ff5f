#pragma once
/// Rounds of federated training across devices (strategies/federated.hpp), by Monte-Carlo over the
/// sampled clients and their availability, with a seed.
///
/// The population's figures are drawn once from the seed (per client in order: speed, upload and
/// download bandwidth, availability), then each round draws its sample (without replacement) and
/// which sampled clients respond. A round: the server sends the model to the responding clients,
/// each computes `local_steps` of its plan's step (the scenario's simulated step over its speed) and
/// sends its update back, and the server aggregates what arrived. Transfers in one direction share
/// the server's link max-min fairly, each at most its client's bandwidth (the sharing SimGrid's flow
/// model applies to a star), simulated as a fluid event by event. With a deadline the round ends at
/// the deadline when some sampled client has not reported by then (the server cannot tell a slow
/// client from a vanished one) and updates after it are dropped; without one it ends at the last
/// responding client's update. Then the aggregation: a memory-bound pass per update received and
/// the server optimizer's pass.
#include <cstdint>
#include <vector>

#include "strategies/federated.hpp"

namespace parasim::sim {

struct FederatedInputs {
  strategies::FederatedSpec spec;
  double client_step_s = 0;     ///< the plan's simulated step on the scenario's cluster (one client)
  double model_bytes = 0;       ///< sent to each client and back (its update) each round
  double samples_per_step = 0;  ///< a client's samples per local step (the plan's global batch)
  double aggregate_s_per_update = 0;  ///< the server's pass adding one update
  double server_update_s = 0;         ///< the server optimizer's pass
};

struct FederatedRun {
  std::vector<double> round_s;  ///< per round
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0;
  /// Of the sampled clients over every round: those that did not respond at all, and those whose
  /// update missed the deadline.
  double unavailable_fraction = 0, late_fraction = 0;
  double samples_per_round = 0;  ///< mean, of the updates aggregated
  double server_bytes_per_round = 0;  ///< mean, both directions
  /// The server link's busy share of the rounds, mean over both directions.
  double server_link_utilisation = 0;
};

/// One client of the population, as drawn from the seed: its speed over the scenario's cluster, its
/// upload and download bandwidth in bytes/s, the probability it responds when sampled.
struct FederatedClient {
  double speed = 1, upload = 0, download = 0, availability = 1;
};
/// The population simulate_federated draws first from spec.seed (exposed for tests and reports).
[[nodiscard]] std::vector<FederatedClient> draw_clients(const strategies::FederatedSpec& spec);

/// Simulates spec.rounds rounds. Preconditions (checked): per_round <= population, rates > 0.
[[nodiscard]] FederatedRun simulate_federated(const FederatedInputs& inputs);

/// When each of a star's transfers finishes: transfer i starts at start[i] with bytes[i] at most
/// cap[i] bytes/s, all sharing `capacity` bytes/s max-min fairly (water-filling) as they come and go.
/// Exposed for its test.
[[nodiscard]] std::vector<double> fluid_finish_times(const std::vector<double>& start, const std::vector<double>& bytes,
                                                     const std::vector<double>& cap, double capacity);

/// The q-quantile (0..1) of `values` by the nearest-rank method (the smallest value with at least
/// q of them at or below it). Precondition: not empty.
[[nodiscard]] double quantile(std::vector<double> values, double q);

}  // namespace parasim::sim
