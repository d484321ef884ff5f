// The search space's enumeration (strategies/search/space.hpp), counted by hand on a small case.
#include <catch2/catch.hpp>

#include <set>

#include "strategies/search/space.hpp"

namespace search = parasim::strategies::search;
using parasim::strategies::Recompute;
using parasim::strategies::Schedule;

TEST_CASE("enumeration: groups and variants of a 4-device, 4-layer transformer, counted by hand", "[strategies][search]") {
  search::SearchSpace space;
  space.nodes = {1};
  space.micro_batch = {1, 2};
  space.schedule = {Schedule::OneFOneB, Schedule::Interleaved1F1B};
  space.max_virtual_stages = 2;
  space.zero = {0, 1};
  space.recompute = {Recompute::None};
  space.sequence_parallel = {false};
  const search::ModelFacts model{4, true, 0};
  parasim::strategies::TrainingSpec training;
  training.global_batch = 8;
  const auto groups = search::enumerate_groups(space, model, training, {}, 4);
  // tp 1: pp 1 (dp 4): mb 1 (m 2), mb 2 (m 1): 1f1b only (interleaving needs pp > 1)      2
  //       pp 2 (dp 2): mb 1 (m 4), mb 2 (m 2): 1f1b and interleaved v2 (2·2 = 4 chunks)    4
  //       pp 4 (dp 1): 1f1b only (4·2 = 8 chunks > 4 layers)                              2
  // tp 2: pp 1 (dp 2): 2;  pp 2 (dp 1): 1f1b and interleaved v2 for each micro-batch: 4
  // tp 4: pp 1 (dp 1): 2                                                 = 16 groups
  CHECK(groups.size() == 16);
  // ZeRO 0 and 1 where dp > 1 (tp 1 pp 1, tp 1 pp 2, tp 2 pp 1: 8 groups), ZeRO 0 alone elsewhere.
  std::size_t candidates = 0;
  std::set<std::vector<std::int64_t>> keys;
  for (const auto& g : groups) {
    candidates += g.variants.size();
    CHECK(g.variants.size() == (g.base.plan.dp > 1 ? 2u : 1u));
    CHECK(g.base.plan.tp * g.base.plan.pp * g.base.plan.dp == 4);
    CHECK(training.global_batch % (g.base.training.micro_batch * g.base.plan.dp) == 0);
    keys.insert({g.base.plan.tp, g.base.plan.pp, g.base.training.micro_batch, static_cast<int>(g.base.plan.schedule), g.base.plan.virtual_stages});
  }
  CHECK(candidates == 8 * 2 + 8 * 1);
  CHECK(keys.size() == groups.size());  // no group twice
}

TEST_CASE("enumeration: sequence parallel only with tp > 1 on a transformer, experts over dp", "[strategies][search]") {
  search::SearchSpace space;
  space.nodes = {1};
  space.micro_batch = {1};
  space.schedule = {Schedule::OneFOneB};
  space.recompute = {Recompute::Full};
  space.zero = {0};
  parasim::strategies::TrainingSpec training;
  training.global_batch = 8;
  SECTION("dense transformer on 2 devices: tp 1 (sp off), tp 2 (sp off, on) × pp 1; tp 1 × pp 2") {
    const auto groups = search::enumerate_groups(space, {2, true, 0}, training, {}, 2);
    CHECK(groups.size() == 4);
    for (const auto& g : groups) CHECK((!g.base.plan.sequence_parallel || g.base.plan.tp > 1));
  }
  SECTION("a CNN never gets sequence parallel") {
    const auto groups = search::enumerate_groups(space, {2, false, 0}, training, {}, 2);
    CHECK(groups.size() == 3);  // tp 1 × pp 1, tp 1 × pp 2, tp 2 × pp 1
  }
  SECTION("an MoE of 4 experts on 4 devices, pp 1 and tp 1: ep 1, 2, 4 over dp 4") {
    space.tp = {1};
    space.pp = {1};
    space.sequence_parallel = {false};
    const auto groups = search::enumerate_groups(space, {2, true, 4}, training, {}, 4);
    REQUIRE(groups.size() == 3);
    CHECK(groups[0].base.plan.ep == 1);
    CHECK(groups[1].base.plan.ep == 2);
    CHECK(groups[2].base.plan.ep == 4);
  }
}

TEST_CASE("enumeration: context parallelism for long sequences, splitting what tp leaves", "[strategies][search]") {
  search::SearchSpace space;
  space.nodes = {1};
  space.tp = {2};
  space.pp = {1};
  space.micro_batch = {1};
  space.schedule = {Schedule::OneFOneB};
  space.recompute = {Recompute::None};
  space.zero = {0};
  space.sequence_parallel = {true};
  parasim::strategies::TrainingSpec training;
  training.global_batch = 8;
  SECTION("16,384 tokens on 8 devices with tp 2: cp 1, 2 and 4 (4,096 tokens per device at 4), dp 4, 2, 1") {
    const auto groups = search::enumerate_groups(space, {4, true, 0, 16384}, training, {}, 8);
    REQUIRE(groups.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(groups[i].base.plan.cp == std::int64_t{1} << i);
      CHECK(groups[i].base.plan.dp == 4 >> i);
    }
    CHECK(search::describe(groups[1].candidate(0)) == "tp 2 × cp 2 (p2p) × pp 1 × dp 2, 1f1b, micro-batch 1 × 4, sequence parallel");
  }
  SECTION("4,096 tokens: cp 2 would leave 2,048 per device, so cp 1 alone unless listed") {
    CHECK(search::enumerate_groups(space, {4, true, 0, 4096}, training, {}, 8).size() == 1);
    space.cp = {1, 2};
    CHECK(search::enumerate_groups(space, {4, true, 0, 4096}, training, {}, 8).size() == 2);
  }
  SECTION("a CNN has no sequence to split") {
    space.cp = {2};
    space.sequence_parallel = {false};
    CHECK(search::enumerate_groups(space, {4, false, 0}, training, {}, 8).empty());
  }
}
