// Ranking and the Pareto front (strategies/search/rank.hpp): objectives, the tie-break by key, the
// simulated-before-estimated order, and the front of time × memory × devices.
#include <catch2/catch.hpp>

#include "strategies/search/rank.hpp"

namespace search = parasim::strategies::search;

namespace {

/// A plan with the given tp (its key), step time, peak bytes, devices and usable bytes.
search::RankedPlan plan(std::int64_t tp, double step_s, double peak_bytes, std::int64_t devices, bool simulated = true,
                        double capacity_bytes = 100) {
  search::RankedPlan p;
  p.candidate.devices = devices;
  p.candidate.plan.tp = tp;
  p.memory.activations_bytes = peak_bytes;
  p.memory_capacity_bytes = capacity_bytes;
  search::Evaluation e;
  e.step_time_s = step_s;
  e.samples_per_s = 1 / step_s;
  e.tokens_per_s = 1000 / step_s;
  if (simulated) p.simulated = e;
  else p.estimate = e;
  return p;
}

std::vector<std::int64_t> tps(const std::vector<search::RankedPlan>& plans) {
  std::vector<std::int64_t> out;
  for (const auto& p : plans) out.push_back(p.candidate.plan.tp);
  return out;
}

}  // namespace

TEST_CASE("objective names round-trip", "[strategies][search]") {
  for (const auto& name : search::objective_names()) CHECK(search::to_string(*search::objective_from_string(name)) == name);
  CHECK_FALSE(search::objective_from_string("speed"));
}

TEST_CASE("ranking: each objective, ties by key, simulations before estimates", "[strategies][search]") {
  // tp is the key: plans 1..5. Step times 3, 1, 2, 1 and (estimate only) 0.5; peaks 10, 50, 20, 40, 5;
  // devices 8, 16, 8, 8, 8.
  std::vector<search::RankedPlan> plans{plan(1, 3, 10, 8), plan(2, 1, 50, 16), plan(3, 2, 20, 8), plan(4, 1, 40, 8),
                                        plan(5, 0.5, 5, 8, false)};
  SECTION("time: 1 s (tp 4, tp 2: a tie, key order), 2 s, 3 s; the estimate last however fast") {
    // key_less compares devices before tp: tp 4 on 8 devices before tp 2 on 16.
    search::rank_plans(plans, search::Objective::Time, 0);
    CHECK(tps(plans) == std::vector<std::int64_t>{4, 2, 3, 1, 5});
  }
  SECTION("throughput ranks as time does for one global batch") {
    search::rank_plans(plans, search::Objective::Throughput, 0);
    CHECK(tps(plans) == std::vector<std::int64_t>{4, 2, 3, 1, 5});
  }
  SECTION("cost: step × devices × price / 3600 = tp 4: 8, tp 2: 16, tp 3: 16, tp 1: 24 (price 3600)") {
    search::rank_plans(plans, search::Objective::Cost, 3600);
    // tp 2 and tp 3 tie on cost (16); the shorter step (tp 2, 1 s) goes first.
    CHECK(tps(plans) == std::vector<std::int64_t>{4, 2, 3, 1, 5});
    CHECK(plans[0].cost_per_step(3600) == Approx(8));
  }
  SECTION("memory: headroom 100 − peak = 90 (tp 1), 80, 60, 50") {
    search::rank_plans(plans, search::Objective::Memory, 0);
    CHECK(tps(plans) == std::vector<std::int64_t>{1, 3, 4, 2, 5});
    CHECK(plans[0].headroom_bytes() == Approx(90));
  }
}

TEST_CASE("Pareto front of step time × peak memory × devices", "[strategies][search]") {
  // A (1 s, 30 B, 8): fastest. B (2 s, 20 B, 8). C (3 s, 30 B, 8): A is faster with as little memory.
  // D = B's figures, later key: B stands for both. E (4 s, 30 B, 4): the fewest devices.
  // F (0.5 s, 1 B, 1): estimate only, left off when only simulations count.
  std::vector<search::RankedPlan> plans{plan(1, 1, 30, 8), plan(2, 2, 20, 8), plan(3, 3, 30, 8), plan(4, 2, 20, 8), plan(5, 4, 30, 4),
                                        plan(6, 0.5, 1, 1, false)};
  SECTION("simulated plans only") {
    const auto front = search::mark_pareto_front(plans, true);
    CHECK(front == std::vector<std::size_t>{0, 1, 4});
    CHECK_FALSE(plans[2].pareto);
    CHECK_FALSE(plans[3].pareto);
    CHECK_FALSE(plans[5].pareto);
  }
  SECTION("every plan: F is at least as good on all three as every other and better on one") {
    const auto front = search::mark_pareto_front(plans, false);
    CHECK(front == std::vector<std::size_t>{5});
  }
}
