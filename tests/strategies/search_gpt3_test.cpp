// Issue 5's GPT-3 acceptance: GPT-3 175B on 768 A100 80GB, global batch 1536, sequence 2048, which
// Narayanan et al. (SC'21) ran with tensor 8 × pipeline 12 × data 8. Searched over the
// space they explored (scenarios/search/gpt3-175b-768-a100-megatron-space.json: tensor 8 inside the
// node, 6 to 16 stages, micro-batch 1 or 2, every schedule, full recomputation, ZeRO 0 or 1), the plan
// ranked first is at least as fast as theirs under parasim's own model, and their mesh is among the
// ten best plans. The whole space (every knob, 14,196 plans that fit) is a documented command, not a
// test: `parasim search scenarios/search/gpt3-175b-768-a100.json` (about 25 s on 2 cores); the
// whole-space and SC'21-features results are in docs/validation.md.
//
// A plan tuned on real hardware: NVIDIA's MLPerf Training v3.0 GPT-3 175B submission on 96 DGX H100
// (768 GPUs) ran tensor 4 × pipeline 8 × data 24 with sequence parallelism, selective recomputation and
// the distributed optimizer (mlcommons/training_results_v3.0, config_DGXH100_96x8x128x4x8_mbs1.sh).
// Searched over every mesh with those features (scenarios/search/gpt3-175b-768-h100-mlperf.json), the
// first plan is at least as fast as theirs and their mesh is among the ten best plans.
#include <catch2/catch.hpp>

#include "scenarios/loader.hpp"
#include "scenarios/model_source.hpp"
#include "scenarios/search_evaluator.hpp"
#include "scenarios/search_spec.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search.hpp"

using namespace parasim;
namespace search = strategies::search;

namespace {

/// Runs the search a bundled scenario describes (its "search" object), on two threads, with the
/// scenario's plan as the reference; checks the scenario's device count and data-parallel degree.
search::SearchOutcome search_scenario(const std::string& file, std::int64_t devices, std::int64_t dp) {
  const scenarios::Scenario s = scenarios::load_scenario(file);
  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(s, scenarios::scenario_profile(s));
  const scenarios::SearchSpec spec = scenarios::decode_search_spec(JsonDocument::read_file(file), s, evaluator.profile());
  search::SearchProblem problem;
  problem.build_graph = [&s](std::int64_t batch) { return scenarios::build_model_graph(s.model, batch, s.file); };
  problem.training = s.training;
  problem.base = s.plan;
  problem.nodes = s.cluster.nodes;
  problem.devices_per_node = s.cluster.devices_per_node;
  problem.usable_memory_bytes = evaluator.profile().device(s.cluster.device).usable_memory_bytes();
  search::Candidate reference;
  reference.nodes = s.cluster.nodes;
  reference.devices = s.cluster.device_count();
  reference.training = s.training;
  reference.plan = s.plan;
  reference.plan.dp = strategies::resolve_dp(s.plan, reference.devices);
  problem.reference = reference;
  REQUIRE(reference.devices == devices);
  REQUIRE(reference.plan.dp == dp);

  search::SearchOptions options;
  options.space = spec.space;
  options.objective = spec.objective;
  options.simulate_top = spec.simulate_top;
  options.refine_top = 0;
  return search::run_search(problem, options, evaluator.evaluator(), search::ThreadExecutor(2));
}

/// The first plan is at least as fast as the reference, and a plan on the reference's mesh (at its
/// best micro-batch and schedule) is among the ten best.
void check_first_and_mesh_in_top10(const search::SearchOutcome& o) {
  REQUIRE(o.reference.has_value());
  const search::RankedPlan& theirs = o.plans[*o.reference];
  REQUIRE(theirs.simulated);
  REQUIRE(o.plans.front().simulated);
  INFO("first: " << o.plans.front().description << ", " << o.plans.front().simulated->step_time_s << " s");
  INFO("theirs (rank " << *o.reference + 1 << "): " << theirs.description << ", " << theirs.simulated->step_time_s << " s");
  CHECK(o.plans.front().simulated->step_time_s <= theirs.simulated->step_time_s);
  const auto& mesh = theirs.candidate.plan;
  bool in_top10 = false;
  for (std::size_t i = 0; i < 10 && i < o.plans.size(); ++i) {
    const auto& p = o.plans[i].candidate.plan;
    in_top10 = in_top10 || (p.tp == mesh.tp && p.pp == mesh.pp && p.dp == mesh.dp);
  }
  CHECK(in_top10);
}

}  // namespace

TEST_CASE("GPT-3 175B on 768 A100: the best plan is at least as fast as tp 8 × pp 12 × dp 8, which ranks in the top 10",
          "[strategies][search][gpt3]") {
  check_first_and_mesh_in_top10(search_scenario(PARASIM_SOURCE_DIR "/scenarios/search/gpt3-175b-768-a100-megatron-space.json", 768, 8));
}

TEST_CASE("GPT-3 175B on 768 H100: the best plan is at least as fast as MLPerf's tp 4 × pp 8 × dp 24, which ranks in the top 10",
          "[strategies][search][gpt3]") {
  // Measured 2026-11-24: the first plan tp 4 × pp 6 × dp 32 (interleaved v4, micro-batch 2) 10.033 s;
  // tp 4 × pp 8 × dp 24 second at 10.090 s (0.6% slower); their exact plan (micro-batch 1) rank 9.
  check_first_and_mesh_in_top10(search_scenario(PARASIM_SOURCE_DIR "/scenarios/search/gpt3-175b-768-h100-mlperf.json", 768, 24));
}
