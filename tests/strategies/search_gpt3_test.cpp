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

#include "tests/strategies/search_scenario.hpp"

using namespace parasim;
namespace search = strategies::search;

namespace {

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
  check_first_and_mesh_in_top10(testing::search_scenario(PARASIM_SOURCE_DIR "/scenarios/search/gpt3-175b-768-a100-megatron-space.json", 768, 8));
}

TEST_CASE("GPT-3 175B on 768 H100: the best plan is at least as fast as MLPerf's tp 4 × pp 8 × dp 24, which ranks in the top 10",
          "[strategies][search][gpt3]") {
  // Measured 2026-11-24: the first plan tp 4 × pp 6 × dp 32 (interleaved v4, micro-batch 2) 10.033 s;
  // tp 4 × pp 8 × dp 24 second at 10.090 s (0.6% slower); their exact plan (micro-batch 1) rank 9.
  check_first_and_mesh_in_top10(testing::search_scenario(PARASIM_SOURCE_DIR "/scenarios/search/gpt3-175b-768-h100-mlperf.json", 768, 24));
}
