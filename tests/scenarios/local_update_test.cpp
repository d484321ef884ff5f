// Local-update scenarios (scenarios/local_update.hpp): what the section reads into, the faults it is
// refused for, the WAN bytes it predicts against synchronous data parallelism, and the shipped
// example's comparisons.
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "reports/comparison.hpp"
#include "reports/table.hpp"
#include "scenarios/loader.hpp"
#include "tests/scenarios/scenario_error.hpp"
#include "scenarios/local_update.hpp"
#include "sim/profile.hpp"
#include "sim/result_json.hpp"

using namespace parasim;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

/// Two sites of one node of one A100 each: a 2-layer transformer trained in fp32, 4 sequences a
/// step (2 a replica). One line per field group: line 3 model, 4 training, 5 cluster, 6 plan,
/// 7 local_update.
struct Text {
  std::string model = R"("model": { "transformer": { "layers": 2, "hidden": 256, "heads": 4, "vocab": 1000 }, "seq_len": 128 },)";
  std::string training = R"("training": { "global_batch": 4, "micro_batch": 1, "precision": "fp32" },)";
  std::string cluster = R"("cluster": { "device": "a100-80gb", "nodes": 2, "devices_per_node": 1, "wan": { "sites": 2 } },)";
  std::string plan = R"("plan": {},)";
  std::string local_update = R"("local_update": { "inner_steps": 10 })";
  [[nodiscard]] std::string str() const {
    return "{\n  \"name\": \"t\",\n  " + model + "\n  " + training + "\n  " + cluster + "\n  " + plan + "\n  " + local_update + "\n}\n";
  }
};

std::string error_of(const std::string& text) { return parasim::testing::scenario_error(text); }

sim::LocalUpdateFigures figures_of(const scenarios::Scenario& s) {
  const sim::Simulation r = scenarios::simulate_local_update(s, sim::datasheet_profile(), sim::Backend::Analytical);
  REQUIRE(r.result.local_update.has_value());
  return *r.result.local_update;
}

}  // namespace

TEST_CASE("local update: the section's fields and defaults", "[scenarios][local-update]") {
  Text t;
  scenarios::Scenario s = scenarios::parse_scenario(t.str(), "s.json");
  REQUIRE(s.local_update.has_value());
  CHECK(s.local_update->algorithm == strategies::LocalUpdateAlgorithm::DiLoCo);
  CHECK(s.local_update->inner_steps == 10);
  CHECK(s.local_update->fragments == 1);
  CHECK(s.local_update->overlap_steps == 0);
  CHECK(s.local_update->outer_optimizer == strategies::OuterOptimizer::Nesterov);
  CHECK(scenarios::replica_count(s) == 2);  // one per site
  // Each replica: one site's node, half the batch, no WAN.
  const scenarios::Scenario r1 = scenarios::replica_scenario(s, 1);
  CHECK(r1.cluster.nodes == 1);
  CHECK_FALSE(r1.cluster.wan.has_value());
  CHECK(r1.training.global_batch == 2);
  CHECK_FALSE(r1.local_update.has_value());

  t.local_update = R"("local_update": { "algorithm": "streaming-diloco", "inner_steps": 100, "outer_optimizer": { "kind": "sgd", "learning_rate": 1 },
    "compression": "top-k", "topk_fraction": 0.05, "target_tokens": 1e9 })";
  s = scenarios::parse_scenario(t.str(), "s.json");
  CHECK(s.local_update->fragments == 0);  // one per three layers, resolved on the model
  CHECK(s.local_update->overlap_steps == 1);
  CHECK(s.local_update->outer_optimizer == strategies::OuterOptimizer::SGD);
  CHECK(s.local_update->outer_learning_rate == 1.0);
  CHECK(s.local_update->compression == strategies::Compression::TopK);
  CHECK(s.local_update->topk_fraction == 0.05);
  CHECK(s.local_update->target_tokens == 1e9);
}

TEST_CASE("local update: bad input is refused at its field", "[scenarios][local-update]") {
  Text t;
  SECTION("no inner steps") {
    t.local_update = R"("local_update": { "inner_steps": 0 })";
    CHECK(error_of(t.str()) == "s.json:7:36: at /local_update/inner_steps: found integer 0, expected an integer >= 1");
  }
  SECTION("replicas that straddle sites") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": 6, "devices_per_node": 1, "wan": { "sites": 2 } },)";
    t.local_update = R"("local_update": { "replicas": 3 })";
    t.training = R"("training": { "global_batch": 6, "micro_batch": 1, "precision": "fp32" },)";
    CHECK(error_of(t.str()) ==
          "s.json:7:33: at /local_update/replicas: found 3 replicas on 2 sites, expected a multiple of the sites: a replica runs inside one site");
  }
  SECTION("one replica") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": 2, "devices_per_node": 1 },)";
    CHECK_THAT(error_of(t.str()), Contains("at /local_update: found 1 replicas (one per site), expected at least 2"));
  }
  SECTION("a batch the replicas do not split") {
    t.training = R"("training": { "global_batch": 3, "micro_batch": 1, "precision": "fp32" },)";
    CHECK(error_of(t.str()) ==
          "s.json:4:33: at /training/global_batch: found 3 samples, expected a multiple of the 2 replicas (one per site): each inner step every "
          "replica trains on its share");
  }
  SECTION("more fragments than inner steps") {
    t.local_update = R"("local_update": { "algorithm": "streaming-diloco", "inner_steps": 4, "fragments": 5 })";
    CHECK(error_of(t.str()) ==
          "s.json:7:85: at /local_update/fragments: found 5 fragments, expected at most the 4 inner steps: each fragment synchronises on its own inner step");
  }
  SECTION("fragments without streaming") {
    t.local_update = R"("local_update": { "fragments": 2 })";
    CHECK_THAT(error_of(t.str()), Contains("at /local_update/fragments: \"diloco\" synchronises the whole model at once"));
  }
  SECTION("sites that do not split the nodes") {
    t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": 3, "devices_per_node": 1, "wan": { "sites": 2 } },)";
    CHECK_THAT(error_of(t.str()), Contains("at /cluster/wan/sites: found 2 sites, expected a count that splits the cluster's 3 nodes evenly"));
  }
  SECTION("an unknown key") {
    t.local_update = R"("local_update": { "inner_step": 10 })";
    CHECK_THAT(error_of(t.str()), Contains("unknown key \"inner_step\""));
  }
}

TEST_CASE("local update: DiLoCo's WAN bytes per inner step are 1/H of synchronous data parallelism's", "[scenarios][local-update]") {
  // One device a site, so both runs reduce over the same two devices: synchronous data parallelism
  // all-reduces every step's fp32 gradients, P parameters × 4 bytes, in buckets that sum to them;
  // DiLoCo all-reduces P × 4 bytes of pseudo-gradient every H = 10 steps. A ring of two sends the
  // whole buffer each way, each flow crossing two WAN links: 4 · 4P bytes over the WAN links per
  // synchronisation in both, so DiLoCo's per inner step are exactly a tenth.
  Text t;
  const scenarios::Scenario s = scenarios::parse_scenario(t.str(), "s.json");
  const sim::LocalUpdateFigures f = figures_of(s);
  const double P = static_cast<double>(scenarios::build_model(scenarios::replica_scenario(s, 0)).param_count());
  CHECK_THAT(f.pseudo_gradient_bytes, WithinRel(4 * P, 1e-12));
  CHECK_THAT(f.sync_wan_bytes_per_step, WithinRel(16 * P, 1e-9));
  CHECK_THAT(f.wan_bytes_per_inner_step * 10, WithinRel(f.sync_wan_bytes_per_step, 1e-9));
  // Compression scales them by its factor over fp32: fp16 1/2, int8 1/4, fp4 1/8, top-k 1% as
  // 8-byte pairs 0.02 (gathered: with two replicas each receives the other's pairs, as much as the
  // ring all-reduce of a dense buffer of that size sends).
  const std::pair<const char*, double> factors[] = {{"fp16", 0.5}, {"int8", 0.25}, {"fp4", 0.125}, {"top-k", 0.02}};
  for (const auto& [name, factor] : factors) {
    INFO(name);
    t.local_update = std::string(R"("local_update": { "inner_steps": 10, "compression": ")") + name + "\" }";
    const sim::LocalUpdateFigures c = figures_of(scenarios::parse_scenario(t.str(), "s.json"));
    CHECK_THAT(c.wan_bytes_per_inner_step, WithinRel(factor * f.wan_bytes_per_inner_step, 1e-9));
  }
}

TEST_CASE("local update: PAPA and branch-train-merge average the weights, with no outer state", "[scenarios][local-update]") {
  // PAPA every 10 steps sends the fp32 weights, 4P bytes, as DiLoCo with H = 10 sends its
  // pseudo-gradient; branch-train-merge after 1000 steps of branch a hundredth of that per step.
  Text t;
  const sim::LocalUpdateFigures diloco = figures_of(scenarios::parse_scenario(t.str(), "s.json"));
  t.local_update = R"("local_update": { "algorithm": "papa" })";
  const scenarios::Scenario papa = scenarios::parse_scenario(t.str(), "s.json");
  CHECK(papa.local_update->inner_steps == 10);  // its authors' every 10 steps
  CHECK(papa.local_update->mixing == 0.99);
  const sim::LocalUpdateFigures p = figures_of(papa);
  CHECK_THAT(p.wan_bytes_per_inner_step, WithinRel(diloco.wan_bytes_per_inner_step, 1e-9));
  CHECK(p.outer_state_bytes == 0);
  CHECK(diloco.outer_state_bytes > 0);
  t.local_update = R"("local_update": { "algorithm": "branch-train-merge", "inner_steps": 1000 })";
  const sim::LocalUpdateFigures btm = figures_of(scenarios::parse_scenario(t.str(), "s.json"));
  CHECK_THAT(btm.wan_bytes_per_inner_step * 100, WithinRel(diloco.wan_bytes_per_inner_step, 1e-9));
  t.local_update = R"("local_update": { "algorithm": "papa", "outer_optimizer": { "kind": "sgd" } })";
  CHECK_THAT(error_of(t.str()), Contains("at /local_update/outer_optimizer: papa averages the replicas' weights; it has no outer optimizer"));
}

TEST_CASE("local update: the shipped Llama-3-8B scenario against synchronous data parallelism", "[scenarios][local-update]") {
  const scenarios::Scenario base = scenarios::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-diloco-2-sites.json");
  auto variant = [&](const std::string& name) -> const scenarios::Scenario& {
    for (const auto& w : base.what_ifs)
      if (w.name == name) return w;
    FAIL("no what-if " << name);
    return base;
  };
  const sim::LocalUpdateFigures diloco = figures_of(base), h1 = figures_of(variant("DiLoCo H=1")),
                                streaming = figures_of(variant("Streaming DiLoCo H=500"));
  // With H = 1 DiLoCo synchronises every step as data parallelism does, without overlapping it with
  // the backward pass and with the outer step's passes besides: no faster.
  CHECK(h1.time_per_inner_step_s >= h1.sync_step_s);
  // And it sends what data parallelism sends (both reduce the bf16 gradient once across the sites).
  CHECK_THAT(h1.wan_bytes_per_inner_step, WithinRel(h1.sync_wan_bytes_per_step, 1e-9));
  CHECK_THAT(diloco.wan_bytes_per_inner_step * 500, WithinRel(diloco.sync_wan_bytes_per_step, 1e-9));
  // Streaming DiLoCo sends the same bytes but a fragment at a time behind the inner steps: the WAN
  // bandwidth it needs for 95% compute is lower than DiLoCo's at the same H.
  CHECK_THAT(streaming.wan_bytes_per_inner_step, WithinRel(diloco.wan_bytes_per_inner_step, 1e-9));
  REQUIRE(streaming.wan_bandwidth_for_95_bytes_per_s > 0);
  CHECK(streaming.wan_bandwidth_for_95_bytes_per_s < diloco.wan_bandwidth_for_95_bytes_per_s);

  // The report shows each variant's step time and WAN utilisation.
  std::vector<sim::Result> results;
  results.push_back(scenarios::simulate_local_update(base, sim::datasheet_profile(), sim::Backend::Analytical).result);
  const scenarios::Scenario& sync = variant("synchronous DP");
  REQUIRE_FALSE(sync.local_update.has_value());
  const models::Graph graph = scenarios::build_model(sync);
  results.push_back(sim::simulate(graph, strategies::make_plan(graph, sync.training, sync.plan, sync.cluster.device_count()),
                                  sim::build_cluster(sync.cluster, sim::datasheet_profile()), sim::datasheet_profile())
                        .result);
  const std::string table = reports::render_table(results);
  CHECK_THAT(table, Contains("time per step, synchronisation included") && Contains("WAN busy (busiest link)") &&
                        Contains("WAN bandwidth per site for 95% compute") && Contains("none (synchronous)"));
  // Both columns give their WAN utilisation: the synchronous step's busiest WAN link over its step.
  for (const auto& row : reports::comparison_rows(results))
    if (row.figure == "WAN busy (busiest link)")
      for (const auto& v : row.values) CHECK_THAT(v, Catch::Matchers::EndsWith("%"));

  // result.json keeps every local-update figure: read back and written again, the same object
  // (figures are written to 9 significant digits, so the first reading holds the rounded values).
  const std::string text = sim::json_text(sim::to_json(std::span<const sim::Result>(results)));
  const auto back = sim::results_from_json(JsonDocument::parse(text, "result.json"));
  REQUIRE(back.size() == 2);
  REQUIRE(back[0].local_update.has_value());
  CHECK_FALSE(back[1].local_update.has_value());
  CHECK(sim::to_json(std::span<const sim::Result>(back))[0].at("local_update") ==
        sim::to_json(std::span<const sim::Result>(results))[0].at("local_update"));
  CHECK_THAT(back[0].local_update->outer_step_s, WithinRel(results[0].local_update->outer_step_s, 1e-8));
}
