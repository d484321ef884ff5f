// Federated scenarios (scenarios/federated.hpp): what the section reads into and the faults it is
// refused for, each at its field.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "scenarios/federated.hpp"
#include "scenarios/loader.hpp"
#include "tests/scenarios/scenario_error.hpp"
#include "sim/profile.hpp"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {

/// One client: a 2-layer transformer on one A100. Line 3 model, 4 training, 5 cluster, 6 federated.
struct Text {
  std::string model = R"("model": { "transformer": { "layers": 2, "hidden": 256, "heads": 4, "vocab": 1000 }, "seq_len": 128 },)";
  std::string training = R"("training": { "global_batch": 4, "micro_batch": 1, "precision": "fp32" },)";
  std::string cluster = R"("cluster": { "device": "a100-80gb", "nodes": 1, "devices_per_node": 1 },)";
  std::string federated = R"("federated": { "clients": 20, "clients_per_round": 5, "rounds": 10 })";
  [[nodiscard]] std::string str() const {
    return "{\n  \"name\": \"t\",\n  " + model + "\n  " + training + "\n  " + cluster + "\n  " + federated + "\n}\n";
  }
};

std::string error_of(const std::string& text) { return parasim::testing::scenario_error(text); }

}  // namespace

TEST_CASE("federated: the section's fields, defaults, and a simulated run", "[scenarios][federated]") {
  Text t;
  scenarios::Scenario s = scenarios::parse_scenario(t.str(), "s.json");
  REQUIRE(s.federated.has_value());
  CHECK(s.federated->algorithm == strategies::FederatedAlgorithm::FedAvg);
  CHECK(s.federated->server_optimizer == strategies::ServerOptimizer::Mean);
  CHECK(s.federated->population == 20);
  CHECK(s.federated->per_round == 5);
  CHECK(s.federated->local_steps == 10);
  t.federated = R"("federated": { "algorithm": "fedopt", "speed": { "kind": "lognormal", "median": 1, "sigma": 0.5 }, "deadline_s": 60, "seed": 3 })";
  s = scenarios::parse_scenario(t.str(), "s.json");
  CHECK(s.federated->server_optimizer == strategies::ServerOptimizer::Adam);  // FedOpt's default
  CHECK(s.federated->speed.kind == strategies::Distribution::Kind::LogNormal);
  CHECK(s.federated->speed.sigma == 0.5);
  CHECK(s.federated->deadline_s == 60);
  CHECK(s.federated->seed == 3);

  // The run: the client's step, then the rounds; the figures name the seed and the distributions.
  const sim::Simulation r = scenarios::simulate_federated_scenario(s, sim::datasheet_profile(), sim::Backend::Analytical);
  REQUIRE(r.result.federated.has_value());
  const auto& f = *r.result.federated;
  CHECK(f.seed == 3);
  CHECK(f.speed == "lognormal (median 1, σ 0.5)");
  CHECK(f.client_step_s == r.result.step_time_s);
  CHECK(f.round_p50_s <= f.round_p99_s);
  CHECK(f.round_p99_s <= 60 + 1);  // the deadline bounds each round (then the aggregation, well under a second)
  // The same scenario again: the same figures.
  CHECK(scenarios::simulate_federated_scenario(s, sim::datasheet_profile(), sim::Backend::Analytical).result.federated == r.result.federated);
}

TEST_CASE("federated: bad input is refused at its field", "[scenarios][federated]") {
  Text t;
  SECTION("a sample larger than the population") {
    t.federated = R"("federated": { "clients": 10, "clients_per_round": 20 })";
    CHECK(error_of(t.str()) ==
          "s.json:6:54: at /federated/clients_per_round: found 20, expected at most the population of 10 clients (a round samples without replacement)");
  }
  SECTION("a distribution with invalid parameters") {
    t.federated = R"("federated": { "speed": { "kind": "lognormal", "median": 1, "sigma": -1 } })";
    CHECK(error_of(t.str()) == "s.json:6:72: at /federated/speed/sigma: found integer -1, expected a number from 0 to 10");
    t.federated = R"("federated": { "upload_mbps": { "kind": "uniform", "low": 10, "high": 5 } })";
    CHECK(error_of(t.str()) == "s.json:6:73: at /federated/upload_mbps/high: found integer 5, expected at least low (10)");
    t.federated = R"("federated": { "availability": { "kind": "constant", "value": 1.5 } })";
    CHECK(error_of(t.str()) == "s.json:6:65: at /federated/availability/value: found number 1.5, expected a probability from 0 to 1");
    t.federated = R"("federated": { "speed": { "kind": "constant", "median": 1 } })";
    CHECK_THAT(error_of(t.str()), Contains("at /federated/speed/median: a constant distribution has no \"median\""));
    t.federated = R"("federated": { "speed": { "kind": "lognormal", "median": 1 } })";
    CHECK_THAT(error_of(t.str()), Contains("at /federated/speed: a lognormal distribution needs \"sigma\""));
  }
  SECTION("a server optimizer FedAvg does not have") {
    t.federated = R"("federated": { "server_optimizer": "yogi" })";
    CHECK_THAT(error_of(t.str()), Contains("at /federated/server_optimizer: found \"yogi\", expected \"mean\" for fedavg"));
  }
  SECTION("both local-update and federated") {
    t.federated = R"("federated": {}, "local_update": {})";
    CHECK_THAT(error_of(t.str()), Contains("at /federated: a scenario is local-update training or federated training, not both"));
  }
  SECTION("too many transfers to simulate") {
    t.federated = R"("federated": { "clients": 20000, "clients_per_round": 10000, "rounds": 100 })";
    CHECK_THAT(error_of(t.str()), Contains("at /federated/rounds: clients_per_round² × rounds is 10000000000"));
  }
}
