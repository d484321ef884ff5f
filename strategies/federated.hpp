#pragma once
/// Federated training across devices (the scenario's "federated"): a population of clients, each a
/// machine like the scenario's cluster running its plan, of which a sample trains every round: the
/// server sends them the model, each takes `local_steps` steps on its own data and sends its update
/// back, and the server aggregates the updates it receives — FedAvg (McMahan et al. 2017,
/// arXiv:1602.05629: the mean, weighted by samples) or FedOpt (Reddi et al. 2021, arXiv:2003.00295:
/// the mean taken as a pseudo-gradient by a server optimizer, SGD with momentum, Adam or Yogi).
/// Clients differ: their speed, bandwidth and availability are drawn from stated distributions with
/// a seed, and a round deadline drops the ones that do not report in time.
///
/// No JSON here: scenarios/decode.cpp reads the scenario's section into these values.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::strategies {

/// A distribution clients' figures are drawn from: a constant, a log-normal given by its median and
/// the standard deviation σ of its logarithm (median · e^(σ·N(0,1))), or a uniform over [low, high].
struct Distribution {
  enum class Kind { Constant, LogNormal, Uniform };
  Kind kind = Kind::Constant;
  double value = 1;   ///< Constant: the value; LogNormal: the median
  double sigma = 0;   ///< LogNormal
  double low = 0, high = 0;  ///< Uniform
  bool operator==(const Distribution&) const = default;
};
[[nodiscard]] std::string_view to_string(Distribution::Kind k);  ///< "constant", "lognormal", "uniform"
[[nodiscard]] const std::vector<std::string>& distribution_names();
[[nodiscard]] std::optional<Distribution::Kind> distribution_from_string(std::string_view s);
/// "lognormal (median 1, σ 0.5)", "uniform [0.5, 1]", "1".
[[nodiscard]] std::string describe(const Distribution& d);

enum class FederatedAlgorithm { FedAvg, FedOpt };
/// FedOpt's server optimizers (Reddi et al. 2021, Algorithm 2): SGD with momentum (FedAvgM), Adam,
/// Yogi. FedAvg's server takes the mean (a server learning rate of 1, no state).
enum class ServerOptimizer { Mean, SGDMomentum, Adam, Yogi };
/// The fp32 arrays a server optimizer reads or writes per parameter in its step (Reddi et al. 2021,
/// Algorithm 2): the mean reads the sum and writes the weights (2); momentum reads the update, the
/// momentum and the weights and writes the last two (5); Adam and Yogi, two moments (7).
[[nodiscard]] double server_state_passes(ServerOptimizer o);
[[nodiscard]] std::string_view to_string(FederatedAlgorithm a);  ///< "fedavg", "fedopt"
[[nodiscard]] std::string_view to_string(ServerOptimizer o);     ///< "mean", "sgd-momentum", "adam", "yogi"
[[nodiscard]] const std::vector<std::string>& federated_algorithm_names();
[[nodiscard]] const std::vector<std::string>& server_optimizer_names();
[[nodiscard]] std::optional<FederatedAlgorithm> federated_algorithm_from_string(std::string_view s);
[[nodiscard]] std::optional<ServerOptimizer> server_optimizer_from_string(std::string_view s);

struct FederatedSpec {
  FederatedAlgorithm algorithm = FederatedAlgorithm::FedAvg;
  ServerOptimizer server_optimizer = ServerOptimizer::Mean;  ///< FedOpt's; Mean for FedAvg
  std::int64_t population = 1000;  ///< clients
  std::int64_t per_round = 100;    ///< clients sampled each round, without replacement
  std::int64_t local_steps = 10;   ///< each client's optimizer steps a round (its plan's steps)
  /// Each client's compute speed over the scenario's cluster (a client at 0.5 takes twice the
  /// simulated step); each client's upload and download bandwidth in Mbit/s; the probability a
  /// sampled client responds at all (clipped to [0, 1]). Drawn once per client from the seed.
  Distribution speed{Distribution::Kind::Constant, 1, 0, 0, 0};
  Distribution upload_mbps{Distribution::Kind::Constant, 10, 0, 0, 0};
  Distribution download_mbps{Distribution::Kind::Constant, 50, 0, 0, 0};
  Distribution availability{Distribution::Kind::Constant, 1, 0, 0, 0};
  /// The server's link, shared by every transfer in one direction (max-min fair, each transfer at
  /// most its client's bandwidth), in Gbit/s.
  double server_gbps = 10;
  /// Seconds after the round starts by which a client's update must have arrived; 0: none (the
  /// server waits for every responding client).
  double deadline_s = 0;
  std::int64_t rounds = 100;  ///< rounds simulated (Monte-Carlo over the sample and the availability)
  std::uint64_t seed = 1;
  /// Samples to train on in all (each client's local steps × its batch, summed): the report gives
  /// the wall time to them. 0: not asked.
  double target_samples = 0;
  bool operator==(const FederatedSpec&) const = default;
};

}  // namespace parasim::strategies
