// Pipeline cuts by dynamic programming (strategies/pipeline_cut.hpp): Alpa's latency
// T = Σ_s t_s + (m − 1)·max_s t_s, every stage choosing its cheapest option; ties to the smaller
// bound, the earliest cut and the lowest option. And a Data stage's sharding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "models/zoo.hpp"
#include "strategies/pipeline_cut.hpp"
#include "strategies/plan.hpp"

using parasim::strategies::apply_stage_uses;
using parasim::strategies::cut_pipeline;
using parasim::strategies::InnerAxisUse;
using parasim::strategies::LayerCostTable;

TEST_CASE("pipeline cut: one option, the slowest stage as small as the sum allows", "[strategies][search]") {
  // Layers cost 1, 2, 3, 4; no send cost. Two-stage cuts: [1,2,3 | 4] = 6, 4; [1,2 | 3,4] = 3, 7;
  // [1 | 2,3,4] = 1, 9. Σ t_s = 10 for all.
  const LayerCostTable table{{{1, 2, 3, 4}}, {0, 0, 0, 0}};
  SECTION("m = 4: T = 10 + 3·max, least for max = 6") {
    const auto cut = cut_pipeline(table, 2, 4);
    REQUIRE(cut);
    CHECK(cut->stage_layers == std::vector<std::int64_t>{3, 1});
    CHECK(cut->stage_option == std::vector<int>{0, 0});
    // 10 + (4 − 1)·6
    CHECK(cut->latency_s == Approx(28));
  }
  SECTION("m = 1: every cut costs Σ = 10; the smallest bound that admits one (6) picks [3, 1]") {
    const auto cut = cut_pipeline(table, 2, 1);
    REQUIRE(cut);
    CHECK(cut->stage_layers == std::vector<std::int64_t>{3, 1});
    CHECK(cut->latency_s == Approx(10));
  }
  SECTION("one stage holds everything: T = 10 + 3·10") {
    const auto cut = cut_pipeline(table, 1, 4);
    REQUIRE(cut);
    CHECK(cut->stage_layers == std::vector<std::int64_t>{4});
    CHECK(cut->latency_s == Approx(40));
  }
  SECTION("four stages, one layer each: T = 10 + 3·4") {
    const auto cut = cut_pipeline(table, 4, 4);
    REQUIRE(cut);
    CHECK(cut->stage_layers == std::vector<std::int64_t>{1, 1, 1, 1});
    CHECK(cut->latency_s == Approx(22));
  }
}

TEST_CASE("pipeline cut: each stage takes its cheaper intra-operator option", "[strategies][search]") {
  // Option 0 (model) costs 4, 4, 1, 1; option 1 (data) costs 2, 2, 3, 3; m = 3, two stages:
  //   cut after layer 0: [0] min(4, 2) = 2 (data), [1..3] min(6, 8) = 6 (model): T = 8 + 2·6 = 20
  //   cut after layer 1: [0,1] min(8, 4) = 4 (data), [2,3] min(2, 6) = 2 (model): T = 6 + 2·4 = 14
  //   cut after layer 2: [0..2] min(9, 7) = 7 (data), [3] min(1, 3) = 1 (model): T = 8 + 2·7 = 22
  const LayerCostTable table{{{4, 4, 1, 1}, {2, 2, 3, 3}}, {0, 0, 0, 0}};
  const auto cut = cut_pipeline(table, 2, 3);
  REQUIRE(cut);
  CHECK(cut->stage_layers == std::vector<std::int64_t>{2, 2});
  CHECK(cut->stage_option == std::vector<int>{1, 0});
  CHECK(cut->latency_s == Approx(14));
}

TEST_CASE("pipeline cut: a costly send steers the cut, and ties go to the earliest cut", "[strategies][search]") {
  // Four layers of 1; sending layer 1's output costs 10. With m = 1, T = Σ t_s:
  //   after layer 0: 1 + 3 = 4; after layer 1: (2 + 10) + 2 = 14; after layer 2: 3 + 1 = 4.
  // The two cheapest tie at Σ = 4 with the same slowest stage (3): the earlier cut wins.
  const LayerCostTable table{{{1, 1, 1, 1}}, {0, 10, 0, 0}};
  const auto cut = cut_pipeline(table, 2, 1);
  REQUIRE(cut);
  CHECK(cut->stage_layers == std::vector<std::int64_t>{1, 3});
  CHECK(cut->latency_s == Approx(4));
}

TEST_CASE("pipeline cut: a stage that does not fit the memory is never chosen", "[strategies][search]") {
  // Layers cost 1, 2, 3, 4 (as above); m = 4. Unbounded, [3, 1] wins (T = 10 + 3·6 = 28). If the
  // first stage (which holds the most micro-batches under 1F1B) fits at most two layers:
  //   [2, 2]: 3, 7 → T = 10 + 3·7 = 31;  [1, 3]: 1, 9 → T = 10 + 3·9 = 37. So [2, 2].
  const LayerCostTable table{{{1, 2, 3, 4}}, {0, 0, 0, 0}};
  const auto first_holds_two = [](std::size_t stage, std::size_t first, std::size_t end) { return stage > 0 || end - first <= 2; };
  const auto cut = cut_pipeline(table, 2, 4, first_holds_two);
  REQUIRE(cut);
  CHECK(cut->stage_layers == std::vector<std::int64_t>{2, 2});
  CHECK(cut->latency_s == Approx(31));
  // The stages are told their index: the second stage of [3, 1] is asked about layers [3, 4) as stage 1.
  std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> asked;
  (void)cut_pipeline(table, 2, 4, [&](std::size_t s, std::size_t i, std::size_t j) {
    asked.emplace_back(s, i, j);
    return true;
  });
  CHECK(std::find(asked.begin(), asked.end(), std::make_tuple(std::size_t{1}, std::size_t{3}, std::size_t{4})) != asked.end());
  // Nothing fits: no cut.
  CHECK_FALSE(cut_pipeline(table, 2, 4, [](std::size_t, std::size_t first, std::size_t end) { return end - first <= 1; }));
}

TEST_CASE("pipeline cut: no answer for impossible requests", "[strategies][search]") {
  const LayerCostTable table{{{1, 1}}, {0, 0}};
  CHECK_FALSE(cut_pipeline(table, 3, 1));                                // more stages than layers
  CHECK_FALSE(cut_pipeline(table, 0, 1));                                // no stage
  CHECK_FALSE(cut_pipeline(LayerCostTable{{{1, 1}, {1}}, {0, 0}}, 1, 1));  // ragged rows
  CHECK_FALSE(cut_pipeline(LayerCostTable{{{1, 1}}, {0}}, 1, 1));         // a send per layer missing
}

TEST_CASE("a Data stage splits the batch over the tensor axis and no model dim", "[strategies][search]") {
  using namespace parasim;
  models::ModelOptions o;
  o.batch = 8;  // micro-batch 4 × dp 2
  o.image_size = 32;
  o.num_classes = 10;
  const models::Graph g = models::build_named_model("resnet18", o);
  strategies::TrainingSpec training;
  training.global_batch = 16;
  training.micro_batch = 4;
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  REQUIRE_FALSE(strategies::check_plan(g, training, spec, 8));
  const strategies::Plan model = strategies::make_plan(g, training, spec, 8);
  const strategies::Plan mixed = apply_stage_uses(g, model, {InnerAxisUse::Data, InnerAxisUse::Model});
  const int tp = model.tp_axis, dp = model.dp_axis;
  std::size_t data_ops = 0, model_ops = 0;
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& op = g.op(id);
    const auto stage = model.stage_of_chunk(model.chunk_of_layer[static_cast<std::size_t>(op.layer)]);
    if (op.kind == models::OpKind::Input || stage == 1) {
      // Stage 1 (model) and the graph's input keep make_plan's sharding.
      CHECK(mixed.sharding[id] == model.sharding[id]);
      model_ops += stage == 1;
      continue;
    }
    ++data_ops;
    for (const auto& d : mixed.sharding[id].dims)
      CHECK((d.dim == "b" || std::find(d.axes.begin(), d.axes.end(), tp) == d.axes.end()));
    // b over dp then tp, outermost first (mesh order pp, dp, tp).
    CHECK(mixed.sharding[id].axes_of("b") == std::vector<int>{dp, tp});
  }
  CHECK(data_ops > 0);
  CHECK(model_ops > 0);
}
