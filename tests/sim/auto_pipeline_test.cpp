// Automatic inter-operator plans (sim/auto_pipeline.hpp): the stage cut of Alpa's dynamic programme
// over the layers' programs, checked against every cut by brute force, against the balanced cut the
// knobs make (by simulation), and Alpa's latency T against the simulated step; each stage sharded on
// its own; the search ranks these plans.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "scenarios/loader.hpp"
#include "sim/auto_pipeline.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {

/// GPT-3 1.3B (24 blocks; 26 graph layers with the embedding and the head) on one DGX A100, 64
/// sequences a step in micro-batches of 4 per data rank, a mesh data 2 × model 2 in 2 stages.
std::string gpt_pipeline(const std::string& extra) {
  return R"({ "name": "p", "model": { "preset": "gpt3-1.3b" },
  "training": { "global_batch": 64, "micro_batch": 4, "precision": "bf16", "optimizer": "adam" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "mesh": [ { "name": "data", "size": 2, "data": true }, { "name": "model", "size": 2 } ], "pp": 2)" +
         extra + " } }";
}

double simulated_step(const scenarios::Scenario& s) {
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  return sim::simulate(graph, plan, cluster, profile, sim::Backend::Analytical, sim::LowerOptions{}).result.step_time_s;
}

}  // namespace

TEST_CASE("auto-pipeline: the cut minimises Alpa's latency over every cut, and beats the balanced one", "[auto-sharding]") {
  const scenarios::Scenario plain = scenarios::parse_scenario(gpt_pipeline(""), "p.json");
  const sim::Profile profile = scenarios::scenario_profile(plain);
  const sim::Cluster cluster = sim::build_cluster(plain.cluster, profile);
  const models::Graph graph = scenarios::build_model(plain);
  const strategies::Plan plan = strategies::make_plan(graph, plain.training, plain.plan, cluster.device_count());
  const sim::AutoPipeline p = sim::auto_pipeline(graph, plan, cluster, profile.device(cluster.devices.front().kind), {});

  // The 24 blocks are alike: three programs (embedding, a block, the head) price 26 layers.
  CHECK(p.layer_programs == 3);
  REQUIRE(p.layer_seconds.size() == 26);
  for (std::size_t l = 2; l < 25; ++l) CHECK(p.layer_seconds[l] == p.layer_seconds[1]);
  CHECK(p.cut_chosen);
  CHECK(p.outcome() == "optimal");

  // Brute force: every two-stage cut [k, 26 − k], T = t_0 + t_1 + (m − 1)·max(t_0, t_1), the first
  // stage paying its boundary's send; m = 64 / (4 × 2) = 8.
  const double m = 8;
  double best = std::numeric_limits<double>::infinity();
  std::int64_t best_k = 0;
  for (std::size_t k = 1; k < 26; ++k) {
    double t0 = p.boundary_s[k - 1], t1 = 0;
    for (std::size_t l = 0; l < 26; ++l) (l < k ? t0 : t1) += p.layer_seconds[l];
    const double T = t0 + t1 + (m - 1) * std::max(t0, t1);
    if (T < best) best = T, best_k = static_cast<std::int64_t>(k);
  }
  CHECK(p.cut.stage_layers == std::vector<std::int64_t>{best_k, 26 - best_k});
  CHECK(p.cut.latency_s == Approx(best).epsilon(1e-12));
  // The head (a 50,257-word vocabulary) outweighs a block, so the first stage takes more blocks than
  // Megatron's equal split [13, 13] (the embedding and 12 blocks; 12 blocks and the head).
  CHECK(best_k > 13);

  // As a scenario: the plan carries the cut and each stage's sharding.
  const scenarios::Scenario automatic = scenarios::parse_scenario(gpt_pipeline(R"(, "auto_sharding": true)"), "p.json");
  CHECK(automatic.plan.stage_layers == p.cut.stage_layers);
  CHECK_THAT(automatic.plan.auto_sharding_report, Contains("cut by dynamic programming over 3 layer programs"));
  CHECK_THAT(automatic.plan.auto_sharding_report, Contains("stage 1 (layers " + std::to_string(best_k) + "–25)"));
  const scenarios::Scenario balanced =
      scenarios::parse_scenario(gpt_pipeline(R"(, "auto_sharding": true, "stage_layers": [13, 13])"), "p.json");
  CHECK_THAT(balanced.plan.auto_sharding_report, Contains("as the plan's stage_layers"));
  const double t_auto = simulated_step(automatic), t_balanced = simulated_step(balanced);
  INFO("automatic " << t_auto << " s, balanced " << t_balanced << " s, Alpa's T " << p.cut.latency_s << " s");
  CHECK(t_auto < t_balanced);
  // Alpa's latency is an estimate of the step without the gradient reductions and the optimizer:
  // within 10% of the simulation here (the reductions overlap the last backward passes).
  CHECK(p.cut.latency_s == Approx(t_auto).epsilon(0.10));
}

TEST_CASE("auto-pipeline: a model that fits no cut is refused, saying so", "[auto-sharding]") {
  // GPT-3 175B's 96 blocks (about 2.3 TB of weights and Adam state) on 8 GPUs in 2 stages of 4: no
  // cut fits 80 GB devices, however sharded.
  const std::string text = R"({ "name": "p", "model": { "preset": "gpt3-175b" },
  "training": { "global_batch": 8, "micro_batch": 1, "precision": "bf16", "optimizer": "adam" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "mesh": [ { "name": "model", "size": 4 } ], "pp": 2, "auto_sharding": true, "auto_sharding_time_limit_s": 5 } })";
  CHECK_THROWS_WITH(scenarios::parse_scenario(text, "p.json"), Contains("no cut of the 98 layers into 2 pipeline stages fits"));
}
