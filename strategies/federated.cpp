#include "strategies/federated.hpp"

#include <sstream>

#include "strategies/name_table.hpp"

namespace parasim::strategies {
namespace {

constexpr std::pair<Distribution::Kind, const char*> kDistributions[] = {
    {Distribution::Kind::Constant, "constant"}, {Distribution::Kind::LogNormal, "lognormal"}, {Distribution::Kind::Uniform, "uniform"}};
constexpr std::pair<FederatedAlgorithm, const char*> kAlgorithms[] = {{FederatedAlgorithm::FedAvg, "fedavg"}, {FederatedAlgorithm::FedOpt, "fedopt"}};
constexpr std::pair<ServerOptimizer, const char*> kServerOptimizers[] = {
    {ServerOptimizer::Mean, "mean"}, {ServerOptimizer::SGDMomentum, "sgd-momentum"}, {ServerOptimizer::Adam, "adam"}, {ServerOptimizer::Yogi, "yogi"}};

std::string number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

std::string_view to_string(Distribution::Kind k) { return name_table::name_of(k, kDistributions); }
const std::vector<std::string>& distribution_names() {
  static const auto v = name_table::names(kDistributions);
  return v;
}
std::optional<Distribution::Kind> distribution_from_string(std::string_view s) { return name_table::lookup(s, kDistributions); }

std::string describe(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::Constant: return number(d.value);
    case Distribution::Kind::LogNormal: return "lognormal (median " + number(d.value) + ", σ " + number(d.sigma) + ")";
    case Distribution::Kind::Uniform: return "uniform [" + number(d.low) + ", " + number(d.high) + "]";
  }
  return number(d.value);
}

double server_state_passes(ServerOptimizer o) {
  switch (o) {
    case ServerOptimizer::Mean: return 2;
    case ServerOptimizer::SGDMomentum: return 5;
    case ServerOptimizer::Adam:
    case ServerOptimizer::Yogi: return 7;
  }
  return 2;
}

std::string_view to_string(FederatedAlgorithm a) { return name_table::name_of(a, kAlgorithms); }
std::string_view to_string(ServerOptimizer o) { return name_table::name_of(o, kServerOptimizers); }
const std::vector<std::string>& federated_algorithm_names() {
  static const auto v = name_table::names(kAlgorithms);
  return v;
}
const std::vector<std::string>& server_optimizer_names() {
  static const auto v = name_table::names(kServerOptimizers);
  return v;
}
std::optional<FederatedAlgorithm> federated_algorithm_from_string(std::string_view s) { return name_table::lookup(s, kAlgorithms); }
std::optional<ServerOptimizer> server_optimizer_from_string(std::string_view s) { return name_table::lookup(s, kServerOptimizers); }

}  // namespace parasim::strategies
