// exec/numerics: the executed plan is the plan. Real data through a plan's shardings, reshards and
// collectives (the very ones the simulation lowers), each rank a thread of this process, against one
// rank running the same operators unsharded. Values are pseudo-random (a fixed linear congruential
// generator), so every run computes the same numbers; the tolerance is fp32's: sums of a few hundred
// products taken in another order differ in their last bits (relative 1e-7 each), and a gradient
// through a layer norm and a softmax amplifies that by a few hundred at most — 1e-4 of the largest
// element bounds it with room.
#include <catch2/catch.hpp>

#include <cmath>
#include <thread>

#include "exec/numerics.hpp"
#include "scenarios/loader.hpp"
#include "sim/simulate.hpp"

using namespace parasim;
namespace num = exec::numerics;

namespace {

struct Loaded {
  models::Graph graph;
  strategies::Plan plan;
  std::int64_t devices = 1;
  scenarios::Scenario scenario;
};

Loaded load(const std::string& file, const std::string& variant) {
  const scenarios::Scenario base = scenarios::load_scenario(std::string(PARASIM_TEST_DATA_DIR) + "/execute/" + file);
  scenarios::Scenario s = base;
  for (const auto& w : base.what_ifs)
    if (w.name == variant) s = w;
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  models::Graph graph = scenarios::build_model(s);
  strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  return {std::move(graph), std::move(plan), cluster.device_count(), s};
}

/// Values in [-scale, scale) from a 64-bit linear congruential generator (Knuth's MMIX constants).
num::Tensor random_tensor(std::vector<std::int64_t> sizes, std::uint64_t seed, float scale, float offset = 0) {
  num::Tensor t;
  t.sizes = std::move(sizes);
  t.values.resize(t.count());
  std::uint64_t x = seed * 2862933555777941757ull + 3037000493ull;
  for (float& v : t.values) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = offset + scale * (static_cast<float>(x >> 40) / static_cast<float>(1u << 24) * 2 - 1);
  }
  return t;
}

std::vector<std::int64_t> sizes_of(const models::Operator& op, const std::vector<std::string>& dims) {
  std::vector<std::int64_t> s;
  for (const auto& d : dims) s.push_back(op.dim_size(d));
  return s;
}

/// Random values for every weight of `ops` (norm scales near 1).
void fill_weights(const models::Graph& g, const std::vector<models::OpId>& ops, num::Inputs& in) {
  std::uint64_t seed = 100;
  for (const auto o : ops)
    for (const auto& w : g.op(o).weights)
      if (!in.weights.count(w.name)) {
        const bool norm = g.op(o).kind == models::OpKind::LayerNorm && &w == &g.op(o).weights.front();
        in.weights[w.name] = random_tensor(sizes_of(g.op(o), w.spec.dims), ++seed, norm ? 0.1f : 0.2f, norm ? 1.0f : 0.0f);
      }
}

/// Runs `ops` on every device of the plan, a thread each.
std::vector<num::Results> run_all(const Loaded& l, const std::vector<models::OpId>& ops, const num::Inputs& in) {
  INFO(num::unsupported(l.graph, l.plan, ops));
  REQUIRE(num::unsupported(l.graph, l.plan, ops).empty());
  num::World world(l.devices);
  std::vector<num::Results> out(static_cast<std::size_t>(l.devices));
  std::vector<std::thread> threads;
  for (std::int64_t d = 0; d < l.devices; ++d)
    threads.emplace_back([&, d] {
      num::ThreadCollectives c(world, d);
      out[static_cast<std::size_t>(d)] = num::run(l.graph, l.plan, ops, in, c);
    });
  for (auto& t : threads) t.join();
  return out;
}

/// Same sizes, and every element within 1e-4 of the largest magnitude of `want`, or within 1e-5: the
/// key projection's bias has a gradient of zero in exact arithmetic (a softmax is unchanged by a
/// constant added to its row, and q·b is one per row), so its computed values are rounding residue
/// of the order of the O(1) inputs' last bits, which no relative bound holds.
void check_close(const num::Tensor& got, const num::Tensor& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.sizes == want.sizes);
  float largest = 0;
  for (const float v : want.values) largest = std::max(largest, std::abs(v));
  float worst = 0;
  for (std::size_t i = 0; i < got.values.size(); ++i) worst = std::max(worst, std::abs(got.values[i] - want.values[i]));
  INFO("largest difference " << worst << " against a largest element of " << largest);
  CHECK(worst <= std::max(1e-4f * largest, 1e-5f));
}

std::vector<models::OpId> ops_of_layer(const models::Graph& g, const std::string& prefix) {
  std::vector<models::OpId> ops;
  for (models::OpId o = 0; o < g.op_count(); ++o)
    if (g.op(o).name.rfind(prefix, 0) == 0) ops.push_back(o);
  return ops;
}

}  // namespace

namespace {

/// Layer 0 of `file` run on one rank (what-if "single") and under the plan `variant`: the block's
/// output, the gradient of its input and every weight's gradient, compared; returns the tensor-
/// parallel rank 0's results.
num::Results check_block(const std::string& file, const std::string& variant, const Loaded& tp) {
  const Loaded one = load(file, "single");
  const auto ops1 = ops_of_layer(one.graph, "layers.0."), ops2 = ops_of_layer(tp.graph, "layers.0.");
  REQUIRE(ops1.size() == ops2.size());
  num::Inputs in;
  const models::Operator* embed = nullptr;
  for (models::OpId o = 0; o < one.graph.op_count(); ++o)
    if (one.graph.op(o).name == "embed_dropout") embed = &one.graph.op(o);
  REQUIRE(embed);
  in.activations["embed_dropout"] = random_tensor(sizes_of(*embed, embed->output.dims), 1, 1.0f);
  in.output_grads["layers.0.mlp_add"] = random_tensor(sizes_of(*embed, embed->output.dims), 2, 1.0f);
  fill_weights(one.graph, ops1, in);
  const num::Results want = run_all(one, ops1, in)[0];
  const auto got = run_all(tp, ops2, in);
  INFO(variant);
  CHECK(want.weight_grads.size() == 16);  // 2 norms × 2, 4 projections × 2 (weight, bias), fc1 and fc2 × 2
  CHECK(want.collectives.empty());        // one rank needs no communication
  for (const auto& r : got) {
    check_close(r.outputs.at("layers.0.mlp_add"), want.outputs.at("layers.0.mlp_add"), "the block's output");
    check_close(r.input_grads.at("embed_dropout"), want.input_grads.at("embed_dropout"), "the gradient of its input");
    REQUIRE(r.weight_grads.size() == want.weight_grads.size());
    for (const auto& [name, g] : want.weight_grads) check_close(r.weight_grads.at(name), g, "the gradient of " + name);
  }
  return got[0];
}

/// The all-reduces rank 0's numerics ran, and the lowered step's for layer 0, checked equal: Megatron's
/// four of a layer (Shoeybi et al. 2019, §3: g and f of the attention and of the MLP), each of the
/// layer's activation: forward after the output projection and after fc2, backward of the input
/// norms' outputs (read by the Q/K/V projections, by fc1), once per micro-batch in the lowering.
void check_all_reduces(const num::Results& r, const Loaded& tp, double bytes) {
  std::vector<std::string> reduces;
  for (const auto& c : r.collectives)
    if (c.rfind("all-reduce", 0) == 0) reduces.push_back(c);
  const std::string one = "all-reduce tp " + std::to_string(static_cast<long long>(bytes));
  CHECK(reduces == std::vector<std::string>(4, one));
  const sim::Profile profile = scenarios::scenario_profile(tp.scenario);
  const sim::Cluster cluster = sim::build_cluster(tp.scenario.cluster, profile);
  const sim::Simulation simulation = sim::simulate(tp.graph, tp.plan, cluster, profile, sim::Backend::Analytical, sim::LowerOptions{});
  const sim::TaskGraph& g = simulation.step.tasks;
  int lowered = 0;
  for (sim::TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != sim::TaskKind::Collective || g.labels[g.label[t]].find("layers.0.") == std::string::npos) continue;
    const auto& c = g.collectives[g.owner[t]];
    CHECK(c.kind == sim::CollectiveKind::AllReduce);
    CHECK(c.bytes == bytes);
    ++lowered;
  }
  CHECK(lowered == 4 * tp.plan.micro_batches);
}

}  // namespace

TEST_CASE("numerics: a transformer block under tensor parallelism 2 computes what one rank computes", "[exec][numerics]") {
  SECTION("eager attention") {
    // tests/data/execute/tiny-gpt-2.json: hidden 64, 2 heads of 32, MLP 256, sequence 32, one
    // sample a micro-batch; attention as its batched matmuls and softmax. Layer 0's operators run on
    // the input of the embeddings' dropout and the gradient arriving from layer 1. Activations of
    // [1, 32, 64] fp32: 8,192 B.
    const Loaded tp = load("tiny-gpt-2.json", "tp2");
    REQUIRE(tp.plan.tp() == 2);
    check_all_reduces(check_block("tiny-gpt-2.json", "eager", tp), tp, 8192);
  }
  SECTION("fused causal attention") {
    // tests/data/execute/tiny-gpt-fused.json: the same model, fused causal attention scaled by
    // 1/√32, two samples a micro-batch: activations of [2, 32, 64] fp32, 16,384 B.
    const Loaded tp = load("tiny-gpt-fused.json", "base");
    REQUIRE(tp.plan.tp() == 2);
    check_all_reduces(check_block("tiny-gpt-fused.json", "fused", tp), tp, 16384);
  }
}

TEST_CASE("numerics: an MLP under pipeline 2 and data parallelism 2 computes what one rank computes", "[exec][numerics]") {
  // tests/data/execute/tiny-mlp-pp2-dp2.json: the MNIST MLP (784-512-512-10, ReLU, cross-entropy)
  // on four ranks — stages of two replicas, each replica two of the four samples — against one rank
  // with all four. The loss is summed over samples, so the replicas' weight gradients add up to the
  // single rank's (their all-reduce over dp).
  const Loaded one = load("tiny-mlp-pp2-dp2.json", "single"), four = load("tiny-mlp-pp2-dp2.json", "base");
  REQUIRE((four.plan.pp == 2 && four.plan.dp() == 2 && four.devices == 4));
  std::vector<models::OpId> ops1(one.graph.op_count()), ops4(four.graph.op_count());
  for (models::OpId o = 0; o < one.graph.op_count(); ++o) ops1[o] = o;
  for (models::OpId o = 0; o < four.graph.op_count(); ++o) ops4[o] = o;
  num::Inputs in;
  in.activations["inputs"] = random_tensor({4, 784}, 3, 1.0f);
  in.labels = {3, 7, 0, 9};
  fill_weights(one.graph, ops1, in);

  const num::Results want = run_all(one, ops1, in)[0];
  const auto got = run_all(four, ops4, in);
  REQUIRE(want.weight_grads.size() == 6);
  // Every weight's gradient on the ranks of the stage that holds it; the loss of each sample on the
  // last stage's ranks.
  std::set<std::string> seen;
  for (const auto& r : got) {
    for (const auto& [name, g] : r.weight_grads) {
      check_close(g, want.weight_grads.at(name), "the gradient of " + name);
      seen.insert(name);
    }
    if (r.outputs.count("loss")) check_close(r.outputs.at("loss"), want.outputs.at("loss"), "the per-sample loss");
  }
  CHECK(seen.size() == 6);
  CHECK((got[0].outputs.count("loss") + got[1].outputs.count("loss") + got[2].outputs.count("loss") + got[3].outputs.count("loss")) == 2);
}
