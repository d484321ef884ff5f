// Plans (strategies/plan): check_plan's located problems, make_plan's shardings, stages and description.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/mlp.hpp"
#include "models/transformer.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using namespace parasim::strategies;

namespace {

/// A small GPT: 64 hidden, 4 heads, MLP 256, vocabulary 128, sequence 32, tied embeddings.
models::Graph small_gpt(std::int64_t layers, std::int64_t batch) {
  models::TransformerConfig c;
  c.attention = models::AttentionKind::Eager;  // the tests name the eager attention's operators
  c.name = "small-gpt";
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = batch;
  return models::build_transformer(c);
}

struct Located {
  std::string pointer, message;
  bool operator==(const Located&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Located& l) { return os << l.pointer << ": " << l.message; }

Located problem_of(const models::Graph& g, const TrainingSpec& training, const PlanSpec& spec, std::int64_t devices) {
  const auto p = check_plan(g, training, spec, devices);
  return p ? Located{p->pointer, p->message} : Located{"", "no problem"};
}

TrainingSpec batch(std::int64_t global, std::int64_t micro = 1) {
  TrainingSpec t;
  t.global_batch = global;
  t.micro_batch = micro;
  return t;
}

models::OpId op_named(const models::Graph& g, const std::string& name) {
  for (models::OpId id = 0; id < g.op_count(); ++id)
    if (g.op(id).name == name) return id;
  FAIL("no operator named " << name);
  return 0;
}

}  // namespace

TEST_CASE("plan: check_plan locates each problem and says what is wrong", "[strategies][plan]") {
  SECTION("tp must divide the attention heads") {
    PlanSpec spec;
    spec.tp = 3;
    CHECK(problem_of(small_gpt(2, 1), batch(1), spec, 3) == Located{"/plan/tp", "tp (3) does not divide the 4 attention heads of the model"});
  }
  SECTION("tp must divide the key/value heads (grouped-query attention)") {
    models::TransformerConfig c;
    c.layers = 2;
    c.hidden = 64;
    c.heads = 4;
    c.kv_heads = 2;
    c.vocab = 128;
    c.seq_len = 32;
    PlanSpec spec;
    spec.tp = 4;
    CHECK(problem_of(models::build_transformer(c), batch(1), spec, 4) ==
          Located{"/plan/tp", "tp (4) does not divide the 2 key/value heads of the model"});
  }
  SECTION("pp may not exceed the layers") {
    PlanSpec spec;
    spec.pp = 3;
    CHECK(problem_of(small_gpt(2, 1), batch(3), spec, 3) == Located{"/plan/pp", "pp (3) exceeds the 2 layers of the model"});
  }
  SECTION("the mesh must cover the cluster's devices") {
    PlanSpec spec;
    spec.tp = 2;
    spec.dp = 3;
    CHECK(problem_of(small_gpt(2, 3), batch(3), spec, 4) ==
          Located{"/plan/dp", "the mesh tp × pp × dp = 2 × 1 × 3 = 6 devices does not match the cluster's 4 devices"});
  }
  SECTION("with dp derived, tp × pp must divide the devices") {
    PlanSpec spec;
    spec.tp = 2;
    spec.pp = 2;
    CHECK(problem_of(small_gpt(2, 1), batch(1), spec, 6) == Located{"/plan/tp", "tp × pp = 4 does not divide the 6 devices of the cluster"});
  }
  SECTION("the global batch must divide into micro-batches over dp") {
    // dp = 2 devices / (tp 1 · pp 1) = 2; micro_batch 2 · dp 2 = 4 does not divide 10.
    CHECK(problem_of(small_gpt(2, 4), batch(10, 2), PlanSpec{}, 2) ==
          Located{"/training/global_batch", "global_batch (10) is not a multiple of micro_batch × dp = 2 × 2 = 4"});
  }
  SECTION("virtual stages need the interleaved schedule") {
    PlanSpec spec;
    spec.pp = 2;
    spec.virtual_stages = 2;
    CHECK(problem_of(small_gpt(4, 1), batch(4), spec, 2) ==
          Located{"/plan/virtual_stages", "virtual_stages > 1 needs \"schedule\": \"interleaved-1f1b\""});
  }
  SECTION("the interleaved schedule needs a micro-batch count that pp divides") {
    PlanSpec spec;
    spec.pp = 2;
    spec.virtual_stages = 2;
    spec.schedule = Schedule::Interleaved1F1B;
    CHECK(problem_of(small_gpt(4, 1), batch(3), spec, 2) ==
          Located{"/training/global_batch", "the interleaved-1f1b schedule needs the micro-batch count (3) to be a multiple of pp (2)"});
  }
  SECTION("sequence parallel needs tp > 1") {
    PlanSpec spec;
    spec.sequence_parallel = true;
    CHECK(problem_of(small_gpt(2, 1), batch(1), spec, 1) == Located{"/plan/sequence_parallel", "sequence parallel needs tp > 1"});
  }
  SECTION("sequence parallel needs a transformer") {
    models::MlpConfig mc;
    mc.sizes = {8, 16, 4};
    PlanSpec spec;
    spec.sequence_parallel = true;
    CHECK(problem_of(models::build_mlp(mc), batch(1), spec, 1) ==
          Located{"/plan/sequence_parallel", "sequence parallel applies to transformer models only"});
  }
  SECTION("ZeRO stages are 0 to 3") {
    PlanSpec spec;
    spec.zero = 4;
    CHECK(problem_of(small_gpt(2, 1), batch(1), spec, 1) == Located{"/plan/zero", "zero must be 0, 1, 2 or 3, found 4"});
  }
  SECTION("mesh_order names each axis once") {
    PlanSpec spec;
    spec.mesh_order = {"pp", "tp", "tp"};
    CHECK(problem_of(small_gpt(2, 1), batch(1), spec, 1) == Located{"/plan/mesh_order", "mesh axis \"tp\" appears twice"});
  }
  SECTION("a valid plan has no problem") {
    PlanSpec spec;
    spec.tp = 2;
    spec.pp = 2;
    spec.sequence_parallel = true;
    // 8 devices / (2 · 2) = dp 2; graph batch = micro-batch 1 · dp 2.
    CHECK(problem_of(small_gpt(2, 2), batch(8), spec, 8) == Located{"", "no problem"});
  }
}

TEST_CASE("plan: make_plan shards as Megatron does", "[strategies][plan]") {
  // tp 2 × dp 2 on 4 devices, mesh {pp 1, dp 2, tp 2}: axis indices pp 0, dp 1, tp 2.
  const models::Graph g = small_gpt(2, 2);
  PlanSpec spec;
  spec.tp = 2;
  const bool sp = GENERATE(false, true);
  spec.sequence_parallel = sp;
  INFO("sequence parallel " << sp);
  const Plan plan = make_plan(g, batch(4), spec, 4);
  CHECK(plan.mesh == DeviceMesh{{{"pp", 1, AxisRole::Pipeline}, {"dp", 2, AxisRole::Data}, {"tp", 2, AxisRole::Tensor}}});
  REQUIRE(plan.dp_axis == 1);
  REQUIRE(plan.tp_axis == 2);
  CHECK(plan.pp_axis == 0);
  auto sharding = [&](const std::string& name) { return plan.sharding[op_named(g, name)]; };
  const std::vector<int> dp{1}, tp{2};
  // Column-parallel Q/K/V: the batch over dp, the key/value heads g over tp.
  CHECK(sharding("layers.0.attn.q_proj") == OpSharding{{{"b", dp}, {"g", tp}}});
  CHECK(sharding("layers.1.attn.k_proj") == OpSharding{{{"b", dp}, {"g", tp}}});
  // Row-parallel output projection: its contraction g is split (its output is a partial sum).
  CHECK(sharding("layers.0.attn.o_proj") == OpSharding{{{"b", dp}, {"g", tp}}});
  // The attention core stays head-parallel.
  CHECK(sharding("layers.0.attn.softmax").axes_of("g") == tp);
  // MLP: fc1 column-parallel, fc2 row-parallel, both split the MLP width f.
  CHECK(sharding("layers.0.mlp.fc1") == OpSharding{{{"b", dp}, {"f", tp}}});
  CHECK(sharding("layers.1.mlp.fc2") == OpSharding{{{"b", dp}, {"f", tp}}});
  // Vocabulary-parallel embedding, LM head and loss.
  CHECK(sharding("embed_tokens") == OpSharding{{{"b", dp}, {"v", tp}}});
  CHECK(sharding("lm_head") == OpSharding{{{"b", dp}, {"v", tp}}});
  CHECK(sharding("loss").axes_of("v") == tp);
  // Ops of dims exactly (b, s, h) — norms, dropouts after projections, residual adds — split s over tp
  // under sequence parallel only.
  OpSharding bsh{{{"b", dp}}};
  if (sp) bsh.dims.push_back(DimSharding{"s", tp});
  for (const char* name : {"layers.0.input_norm", "layers.0.post_attn_norm", "layers.1.attn.attn_out_dropout", "layers.1.mlp_add",
                           "final_norm", "embed_dropout"}) {
    INFO(name);
    CHECK(sharding(name) == bsh);
  }
  const std::string description = sp ? "tp 2 × pp 1 × dp 2, 1f1b, micro-batch 1 × 2, sequence parallel" : "tp 2 × pp 1 × dp 2, 1f1b, micro-batch 1 × 2";
  CHECK(plan.description == description);
}

TEST_CASE("plan: stages of the layers", "[strategies][plan][pipeline]") {
  // A GPT's graph layers: 0 embeddings, 1..L blocks, L + 1 head; blocks are split evenly and the
  // embeddings join the first chunk, the head the last.
  SECTION("pp 2, 4 blocks: two blocks a stage") {
    PlanSpec spec;
    spec.pp = 2;
    const Plan plan = make_plan(small_gpt(4, 1), batch(2), spec, 2);
    CHECK(plan.chunk_of_layer == std::vector<std::int32_t>{0, 0, 0, 1, 1, 1});
    CHECK(plan.micro_batches == 2);
  }
  SECTION("pp 2 × v 2, 4 blocks: one block a chunk, chunk c on stage c mod 2") {
    PlanSpec spec;
    spec.pp = 2;
    spec.virtual_stages = 2;
    spec.schedule = Schedule::Interleaved1F1B;
    const Plan plan = make_plan(small_gpt(4, 1), batch(2), spec, 2);
    CHECK(plan.chunk_of_layer == std::vector<std::int32_t>{0, 0, 1, 2, 3, 3});
    CHECK(plan.chunks() == 4);
    CHECK(plan.stage_of_chunk(3) == 1);
    CHECK(plan.stage_of_chunk(2) == 0);
  }
  SECTION("an explicit cut") {
    PlanSpec spec;
    spec.pp = 2;
    spec.stage_layers = {2, 4};
    const Plan plan = make_plan(small_gpt(4, 1), batch(2), spec, 2);
    CHECK(plan.chunk_of_layer == std::vector<std::int32_t>{0, 0, 1, 1, 1, 1});
  }
}

TEST_CASE("plan: {pp, dp, tp} = {2, 2, 2} — tensor-parallel groups are consecutive ids", "[strategies][plan]") {
  const Plan plan = make_plan(small_gpt(2, 2), batch(4), [] {
    PlanSpec s;
    s.pp = 2;
    s.tp = 2;
    return s;
  }(), 8);
  CHECK(plan.mesh == DeviceMesh{{{"pp", 2, AxisRole::Pipeline}, {"dp", 2, AxisRole::Data}, {"tp", 2, AxisRole::Tensor}}});
  CHECK(plan.dp() == 2);
  CHECK(plan.tp() == 2);
  const std::vector<int> tp{plan.tp_axis}, dp{plan.dp_axis}, pp{plan.pp_axis};
  // Device id = pp·4 + dp·2 + tp.
  CHECK(plan.mesh.groups(tp) == std::vector<std::vector<std::int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(plan.mesh.groups(dp) == std::vector<std::vector<std::int64_t>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(plan.mesh.groups(pp) == std::vector<std::vector<std::int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(plan.mesh.group_of(5, tp) == std::vector<std::int64_t>{4, 5});
  CHECK(plan.mesh.group_of(5, dp) == std::vector<std::int64_t>{5, 7});
  CHECK(plan.mesh.group_of(5, pp) == std::vector<std::int64_t>{1, 5});
  CHECK(plan.description == "tp 2 × pp 2 × dp 2, 1f1b, micro-batch 1 × 2");
}

TEST_CASE("plan: expert_imbalance is a factor >= 1 that an expert-parallel rank can receive", "[strategies][plan][moe]") {
  // A small MoE GPT: 4 experts, top-2, on dp 4 (4 devices, batch 4).
  models::TransformerConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.experts = 4;
  c.experts_per_token = 2;
  c.batch = 4;
  const models::Graph moe = models::build_transformer(c);
  PlanSpec spec;
  spec.ep = 2;
  SECTION("balanced and skewed routing within range") {
    spec.expert_imbalance = 2;  // min(ep 2, e/k = 2)
    CHECK(problem_of(moe, batch(4), spec, 4) == Located{"", "no problem"});
    CHECK(make_plan(moe, batch(4), spec, 4).description.find("(ep 2, imbalance 2)") != std::string::npos);
  }
  SECTION("below 1") {
    spec.expert_imbalance = 0.5;
    CHECK(problem_of(moe, batch(4), spec, 4) ==
          Located{"/plan/expert_imbalance", "expert_imbalance must be >= 1 (1 = balanced routing), found 0.5"});
  }
  SECTION("more than a rank can receive") {
    // ep 2, 4 experts of top-2: a rank holds 2 experts and gets at most one copy per expert of each
    // token, 2 per token against the balanced k/ep = 1: 2 = min(ep, e/k).
    spec.expert_imbalance = 2.5;
    CHECK(problem_of(moe, batch(4), spec, 4) ==
          Located{"/plan/expert_imbalance",
                  "expert_imbalance 2.5 exceeds min(ep, experts / experts_per_token) = 2, the most one expert-parallel rank can receive"});
  }
  SECTION("without expert parallelism") {
    spec.ep = 1;
    spec.expert_imbalance = 1.2;
    CHECK(problem_of(moe, batch(4), spec, 4) ==
          Located{"/plan/expert_imbalance",
                  "expert_imbalance needs ep > 1: a device holding every expert processes all routed tokens however they split"});
  }
  SECTION("on a dense model") {
    PlanSpec dense;
    dense.expert_imbalance = 1.2;
    CHECK(problem_of(small_gpt(2, 1), batch(1), dense, 1) ==
          Located{"/plan/expert_imbalance", "expert_imbalance applies to mixture-of-experts models only"});
  }
}
