// The search over context parallelism, on NeMo's 128K row (scenarios/search/llama2-7b-128k-128-h100.json):
// Llama-2-7B at 131,072 tokens in fp8 on 128 H100, tp 4 with sequence parallelism, no pipeline,
// ZeRO-1, every cp the search tries by default: 1, 2, 4, 8, 16 and 32 (131,072 / 32 = 4,096 tokens per
// device, the default's lower bound).
#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/strategies/search_scenario.hpp"

using namespace parasim;

TEST_CASE("search: at 128K tokens only plans with context parallelism fit, and NeMo's cp 4 ranks near the best", "[strategies][search]") {
  const auto o = testing::search_scenario(PARASIM_SOURCE_DIR "/scenarios/search/llama2-7b-128k-128-h100.json", 128, 8);
  // Without cp each tensor-parallel group holds the whole sequence: 132 GiB per GPU
  // (docs/validation.md, NeMo table), so no ranked plan has cp 1; the five with cp 2 … 32 fit.
  REQUIRE(o.plans.size() == 5);
  for (const auto& p : o.plans) CHECK(p.candidate.plan.cp > 1);
  // The scenario's plan is NeMo's published one (tp 4 × cp 4 × dp 8); it is ranked, within 5% of the best.
  REQUIRE(o.reference.has_value());
  CHECK(o.plans[*o.reference].candidate.plan.cp == 4);
  REQUIRE(o.plans.front().simulated);
  REQUIRE(o.plans[*o.reference].simulated);
  CHECK(o.plans[*o.reference].simulated->step_time_s <= 1.05 * o.plans.front().simulated->step_time_s);
}
