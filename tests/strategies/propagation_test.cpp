// Sharding annotations and their propagation (strategies/propagation.hpp): what a few annotations
// become on every operator, checked against Megatron's tensor-parallel sharding (Shoeybi et al. 2019,
// §3: the MLP's first GEMM split by columns, its second by rows; attention split by heads; the
// embedding by vocabulary rows), and the faults at the annotation that causes them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "sim/work/work.hpp"
#include "strategies/plan.hpp"
#include "strategies/propagation.hpp"

using namespace parasim;
using namespace parasim::strategies;

namespace {

/// A small GPT: 2 layers, 256 hidden, 8 heads, MLP 1024, vocabulary 512, 128 tokens, fused attention.
models::Graph small_gpt(std::int64_t batch) {
  models::TransformerConfig c;
  c.name = "small-gpt";
  c.layers = 2;
  c.hidden = 256;
  c.heads = 8;
  c.vocab = 512;
  c.seq_len = 128;
  c.batch = batch;
  return models::build_transformer(c);
}

ShardingAnnotation weight(std::string pattern, std::vector<std::vector<std::string>> spec, std::string pointer = "/plan/shardings/0") {
  ShardingAnnotation a;
  a.target = AnnotationTarget::Weight;
  a.pattern = std::move(pattern);
  a.spec = std::move(spec);
  a.pointer = std::move(pointer);
  return a;
}

/// The MLP's two weights, annotated as the seed text and Megatron split them.
std::vector<ShardingAnnotation> mlp_annotations() {
  return {weight("layers.*.mlp.fc1.weight", {{}, {"model"}}, "/plan/shardings/0"),
          weight("layers.*.mlp.fc2.weight", {{"model"}, {}}, "/plan/shardings/1")};
}

PlanSpec annotated(std::vector<ShardingAnnotation> shardings, std::int64_t data, std::int64_t model) {
  PlanSpec spec;
  spec.mesh = {MeshAxisSpec{"data", data, true}, MeshAxisSpec{"model", model, false}};
  spec.shardings = std::move(shardings);
  return spec;
}

TrainingSpec training(std::int64_t micro_batch, std::int64_t dp) {
  TrainingSpec t;
  t.micro_batch = micro_batch;
  t.global_batch = micro_batch * dp;
  return t;
}

/// An operator's sharding with its dims in name order (propagation lists them in the operator's
/// dim order, the knobs in theirs).
OpSharding sorted(OpSharding s) {
  std::sort(s.dims.begin(), s.dims.end(), [](const DimSharding& a, const DimSharding& b) { return a.dim < b.dim; });
  return s;
}

models::OpId op_named(const models::Graph& g, const std::string& name) {
  for (models::OpId op = 0; op < g.op_count(); ++op)
    if (g.op(op).name == name) return op;
  FAIL("no operator " << name);
  return 0;
}

/// ResNet-50 at 64 px, 4 images.
models::Graph small_resnet() {
  models::ResNetConfig c;
  c.image_size = 64;
  c.batch = 4;
  return models::build_resnet(c);
}

/// Every operator of `g` split alike by two plans on meshes of the same axes.
void check_same_shardings(const models::Graph& g, const Plan& a, const Plan& b) {
  for (models::OpId op = 0; op < g.op_count(); ++op) {
    INFO(g.op(op).name);
    CHECK(sorted(a.sharding[op]) == sorted(b.sharding[op]));
  }
}

std::string problem_of(const PlanSpec& spec, std::int64_t devices = 8) {
  const models::Graph g = small_gpt(2 * resolve_dp(spec, devices));
  const auto p = check_plan(g, training(2, resolve_dp(spec, devices)), spec, devices);
  return p ? p->pointer + ": " + p->message : "no problem";
}

}  // namespace

TEST_CASE("name patterns: * matches any run of characters, nothing else is special") {
  CHECK(name_matches("layers.*.mlp.fc1.weight", "layers.0.mlp.fc1.weight"));
  CHECK(name_matches("layers.*.mlp.fc1.weight", "layers.17.mlp.fc1.weight"));
  CHECK_FALSE(name_matches("layers.*.mlp.fc1.weight", "layers.0.mlp.fc1.bias"));
  CHECK(name_matches("*", "anything"));
  CHECK(name_matches("a*b*c", "aXbYc"));
  CHECK(name_matches("a*b*c", "abc"));
  CHECK_FALSE(name_matches("a*b*c", "acb"));
  CHECK_FALSE(name_matches("fc1", "fc10"));
}

TEST_CASE("annotating the MLP's two weights propagates to Megatron's tensor-parallel MLP") {
  // Mesh data 2 × model 4 on 8 devices; the knobs' tp 4 × dp 2 has the same axes in the same order
  // (pp, data/dp, model/tp), so the two plans' shardings compare index for index.
  const models::Graph g = small_gpt(4);
  const Plan mine = make_plan(g, training(2, 2), annotated(mlp_annotations(), 2, 4), 8);
  PlanSpec knobs;
  knobs.tp = 4;
  const Plan megatron = make_plan(g, training(2, 2), knobs, 8);
  REQUIRE(mine.mesh.axes.size() == megatron.mesh.axes.size());
  int mlp_ops = 0;
  for (models::OpId op = 0; op < g.op_count(); ++op) {
    const std::string& name = g.op(op).name;
    if (name.find(".mlp.") == std::string::npos) continue;
    ++mlp_ops;
    INFO(name);
    CHECK(sorted(mine.sharding[op]) == sorted(megatron.sharding[op]));
  }
  CHECK(mlp_ops == 2 * 4);  // fc1, gelu, fc2, dropout per layer
  // fc1 splits its output width f over model (column parallel); fc2 its contraction f (row parallel).
  const models::OpId fc1 = op_named(g, "layers.0.mlp.fc1");
  const models::OpId fc2 = op_named(g, "layers.0.mlp.fc2");
  CHECK(mine.sharding[fc1].axes_of("f") == std::vector<int>{2});
  CHECK(mine.sharding[fc2].axes_of("f") == std::vector<int>{2});
  CHECK(mine.sharding[fc1].axes_of("h").empty());
  CHECK(mine.sharding[fc1].axes_of("b") == std::vector<int>{1});  // the data axis, carried from the tokens
  // Nothing reached attention: it stays whole on every model rank.
  CHECK(mine.sharding[op_named(g, "layers.0.attn.q_proj")].axes_of("g").empty());
}

TEST_CASE("the annotated MLP lowers to one all-reduce in the forward and one in the backward per layer") {
  // Derivation: fc2's contraction f is split over model, so its output is a partial sum that the
  // dropout after it needs whole: one all-reduce of [b, s, h] in the forward. fc1 splits its output f,
  // which its input [b, s, h] lacks, so the input's gradient is a partial sum that the norm before it
  // needs whole: one all-reduce in the backward. Nothing else changes layout. Bytes: a micro-batch of
  // 2 samples on each data rank × 128 tokens × 256 hidden × 2 bytes (fp16) = 131,072 bytes.
  const models::Graph g = small_gpt(4);
  const Plan plan = make_plan(g, training(2, 2), annotated(mlp_annotations(), 2, 4), 8);
  const sim::StepWork step = sim::describe_step(g, plan);
  REQUIRE(step.chunks.size() == 1);
  auto tensor_collectives = [&](const sim::Program& p) {
    std::vector<const sim::WorkItem*> out;
    for (const auto& item : p.items)
      if (item.kind == sim::ItemKind::Collective && item.category == sim::Category::TensorComm) out.push_back(&item);
    return out;
  };
  for (const auto* program : {&step.chunks[0].forward, &step.chunks[0].backward}) {
    const auto found = tensor_collectives(*program);
    REQUIRE(found.size() == 2);  // one per layer
    for (const auto* item : found) {
      CHECK(item->collective == sim::CollectiveKind::AllReduce);
      CHECK(item->axes == sim::AxisSet{2});
      CHECK(item->bytes == Approx(131072.0));
    }
  }
  CHECK(tensor_collectives(step.chunks[0].forward)[0]->label.find("mlp_dropout") != std::string::npos);
  CHECK(tensor_collectives(step.chunks[0].backward)[0]->label.find("post_attn_norm") != std::string::npos);
}

TEST_CASE("Megatron's weight annotations propagate to the tp knob's sharding of every operator") {
  // The knobs' tensor parallelism written as GSPMD annotations on seven weights: Q, K and V by heads
  // (column), the attention output and fc2 by their input rows (row), fc1 by columns, the tied
  // embedding by vocabulary rows. Propagation reaches every other operator — norms, attention, the
  // LM head through its tied weight, the loss — exactly as the knobs assign them.
  const models::Graph g = small_gpt(4);
  std::vector<ShardingAnnotation> megatron = mlp_annotations();
  megatron.push_back(weight("layers.*.attn.q_proj.weight", {{}, {"model"}, {}, {}}));
  megatron.push_back(weight("layers.*.attn.k_proj.weight", {{}, {"model"}, {}}));
  megatron.push_back(weight("layers.*.attn.v_proj.weight", {{}, {"model"}, {}}));
  megatron.push_back(weight("layers.*.attn.o_proj.weight", {{"model"}, {}, {}, {}}));
  megatron.push_back(weight("embed_tokens.weight", {{"model"}, {}}));
  const Plan mine = make_plan(g, training(2, 2), annotated(megatron, 2, 4), 8);
  PlanSpec knobs;
  knobs.tp = 4;
  const Plan tp = make_plan(g, training(2, 2), knobs, 8);
  check_same_shardings(g, mine, tp);
  // The same collectives follow, so the same step.
  const sim::StepWork a = sim::describe_step(g, mine);
  const sim::StepWork b = sim::describe_step(g, tp);
  CHECK(a.chunks[0].forward.items.size() == b.chunks[0].forward.items.size());
  CHECK(a.chunks[0].backward.items.size() == b.chunks[0].backward.items.size());
}

TEST_CASE("propagation says where each dim's sharding came from") {
  const models::Graph g = small_gpt(4);
  PlanSpec spec = annotated(mlp_annotations(), 2, 4);
  const Plan plan = make_plan(g, training(2, 2), spec, 8);
  const auto result = propagate_shardings(g, plan.mesh, plan.dp_axis, spec.shardings);
  REQUIRE_FALSE(result.problem);
  const auto& o = g.op(op_named(g, "layers.0.mlp.gelu"));
  const auto& origin = result.propagation.origin[op_named(g, "layers.0.mlp.gelu")];
  REQUIRE(o.dims.size() == origin.size());
  for (std::size_t k = 0; k < o.dims.size(); ++k) {
    if (o.dims[k].name == "f") CHECK(origin[k] == DimOrigin{DimOrigin::Kind::Forward, static_cast<std::int64_t>(op_named(g, "layers.0.mlp.fc1"))});
    if (o.dims[k].name == "s") CHECK(origin[k].kind == DimOrigin::Kind::Replicated);
  }
  const auto& tokens = result.propagation.origin[op_named(g, "tokens")];
  CHECK(tokens[0].kind == DimOrigin::Kind::Data);
  const auto& fc1 = result.propagation.origin[op_named(g, "layers.1.mlp.fc1")];
  CHECK(fc1.back() == DimOrigin{DimOrigin::Kind::Annotation, 0});
}

TEST_CASE("faulty annotations and meshes are refused at the field") {
  using Catch::Matchers::Contains;
  auto with = [](std::vector<ShardingAnnotation> a) { return annotated(std::move(a), 2, 4); };
  // An unknown axis, with a suggestion.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc1.weight", {{}, {"modle"}})})),
             Contains("/plan/shardings/0/spec/1: unknown mesh axis \"modle\"") && Contains("did you mean \"model\""));
  // An axis whose size does not divide the dim: 3 does not divide the 8 heads.
  PlanSpec three = annotated({weight("layers.*.attn.q_proj.weight", {{}, {"model"}, {}, {}})}, 2, 3);
  three.mesh[0].size = 1;
  three.mesh.push_back(MeshAxisSpec{"rest", 2, false});
  CHECK_THAT(problem_of(three, 6), Contains("/plan/shardings/0/spec/1: the split over 3 devices does not divide dim \"g\" of operator \"layers.0.attn.q_proj\" (size 8)"));
  // Two annotations that contradict each other on one dim.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc1.weight", {{}, {"model"}}, "/plan/shardings/0"),
                              weight("layers.0.mlp.fc1.bias", {{}}, "/plan/shardings/1")})),
             Contains("/plan/shardings/1/spec/0: contradicts /plan/shardings/0, which splits dim \"f\" of operator \"layers.0.mlp.fc1\" over "
                      "\"model\", not nothing (replicated)"));
  // One axis on two dims of an operator.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc1.weight", {{"model"}, {"model"}})})),
             Contains("/plan/shardings/0/spec/1: mesh axis \"model\" would split both dim \"h\" and dim \"f\""));
  // A name nothing matches.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc3.weight", {{}, {"model"}})})),
             Contains("/plan/shardings/0/weight: no weight of the model is named \"layers.*.mlp.fc3.weight\""));
  // A spec of the wrong length.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc1.weight", {{"model"}})})),
             Contains("/plan/shardings/0/spec: weight \"layers.0.mlp.fc1.weight\" has 2 dims (h, f), but the spec lists 1"));
  // A norm's normalised dim cannot be split.
  CHECK_THAT(problem_of(with({weight("final_norm.weight", {{"model"}})})),
             Contains("/plan/shardings/0/spec/0: dim \"h\" of operator \"final_norm\" cannot be split"));
  // The pipeline axis splits no tensor.
  CHECK_THAT(problem_of(with({weight("layers.*.mlp.fc1.weight", {{}, {"pp"}})})), Contains("the pipeline axis \"pp\" cannot split a tensor"));
  // A mesh whose devices are not the cluster's.
  CHECK_THAT(problem_of(annotated({}, 2, 2)), Contains("/plan/mesh: the mesh (pp 1 × 2 × 2) has 4 devices, but the cluster has 8"));
  // Knobs beside a mesh.
  PlanSpec knob = with({});
  knob.tp = 2;
  CHECK_THAT(problem_of(knob), Contains("/plan/tp: tp cannot be set beside \"mesh\""));
  // Annotations without a mesh.
  PlanSpec bare;
  bare.shardings = mlp_annotations();
  CHECK_THAT(problem_of(bare), Contains("/plan/shardings: sharding annotations name the axes of a \"mesh\""));
  // Two data axes.
  PlanSpec two = with({});
  two.mesh[1].data = true;
  CHECK_THAT(problem_of(two), Contains("/plan/mesh/1/data: only one mesh axis can be the data axis"));
  // An operator annotation naming a dim the operator lacks.
  ShardingAnnotation op;
  op.target = AnnotationTarget::Operator;
  op.pattern = "layers.0.mlp.fc1";
  op.dims = {{"q", {"model"}}};
  op.pointer = "/plan/shardings/0";
  CHECK_THAT(problem_of(with({op})), Contains("/plan/shardings/0/dims/q: operator \"layers.0.mlp.fc1\" has no dim \"q\"; its dims are b, s, h, f"));
  // A partial output of an operator that contracts nothing.
  ShardingAnnotation partial;
  partial.target = AnnotationTarget::Output;
  partial.pattern = "layers.0.mlp.gelu";
  partial.spec = {{}, {}, {}};
  partial.partial = {"model"};
  partial.pointer = "/plan/shardings/0";
  CHECK_THAT(problem_of(with({partial})), Contains("/plan/shardings/0/partial: operator \"layers.0.mlp.gelu\" contracts no dim"));
}

TEST_CASE("an output annotated as a partial sum splits its operator's contraction") {
  // fc2's output partial over model is Megatron's row-parallel layer: its contraction f over model.
  const models::Graph g = small_gpt(4);
  ShardingAnnotation a;
  a.target = AnnotationTarget::Output;
  a.pattern = "layers.*.mlp.fc2";
  a.spec = {{}, {}, {}};
  a.partial = {"model"};
  a.pointer = "/plan/shardings/0";
  const Plan plan = make_plan(g, training(2, 2), annotated({a}, 2, 4), 8);
  CHECK(plan.sharding[op_named(g, "layers.1.mlp.fc2")].axes_of("f") == std::vector<int>{2});
  // And backward, through gelu, to fc1's output width: the column-parallel fc1 follows.
  CHECK(plan.sharding[op_named(g, "layers.1.mlp.fc1")].axes_of("f") == std::vector<int>{2});
}

TEST_CASE("the presets are the knobs' shardings written as annotations: every operator as the tp knob splits it", "[propagation]") {
  auto preset = [](std::string name, std::string pointer = "/plan/shardings/0") {
    ShardingAnnotation a;
    a.target = AnnotationTarget::Preset;
    a.pattern = std::move(name);
    a.axis = "model";
    a.pointer = std::move(pointer);
    return a;
  };
  SECTION("megatron on a GPT: heads, MLP width and vocabulary over the model axis") {
    const models::Graph g = small_gpt(4);
    const Plan mine = make_plan(g, training(2, 2), annotated({preset("megatron")}, 2, 4), 8);
    PlanSpec knobs;
    knobs.tp = 4;
    const Plan tp = make_plan(g, training(2, 2), knobs, 8);
    check_same_shardings(g, mine, tp);
  }
  SECTION("channels on a ResNet: output channels, else channels, over the model axis") {
    const models::Graph g = small_resnet();
    TrainingSpec t = training(2, 2);
    const Plan mine = make_plan(g, t, annotated({preset("channels")}, 2, 2), 4);
    PlanSpec knobs;
    knobs.tp = 2;
    const Plan tp = make_plan(g, t, knobs, 4);
    check_same_shardings(g, mine, tp);
  }
  SECTION("a preset that finds nothing to split, and an unknown preset") {
    const models::Graph g = small_resnet();
    const auto none = check_plan(g, training(2, 2), annotated({preset("megatron")}, 2, 2), 4);
    REQUIRE(none);
    CHECK(none->pointer == "/plan/shardings/0/preset");
    CHECK_THAT(none->message, Catch::Matchers::Contains("finds no weight with a dim it splits"));
    const auto unknown = check_plan(g, training(2, 2), annotated({preset("zigzag")}, 2, 2), 4);
    REQUIRE(unknown);
    CHECK_THAT(unknown->message, Catch::Matchers::Contains("unknown preset \"zigzag\""));
  }
}
