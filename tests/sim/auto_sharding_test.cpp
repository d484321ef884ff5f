// Automatic intra-operator sharding (sim/auto_sharding.hpp): the integer program's choices against
// what can be reasoned by hand — data parallelism where activations outweigh weights, weights split
// where they outweigh activations, sharded weights where replicated ones do not fit — and against
// Megatron's tp 8 on a GPT layer; its time limit, its faults and its determinism.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "common/error.hpp"
#include "scenarios/loader.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/plan.hpp"
#include "tests/scenarios/scenario_error.hpp"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {

/// A one-layer GPT (hidden `hidden`, `heads` heads, MLP 4 × hidden, `seq` tokens) on one DGX A100,
/// `batch` sequences a micro-batch for the whole mesh, one micro-batch a step, with `plan`.
std::string gpt_layer(std::int64_t hidden, std::int64_t heads, std::int64_t seq, std::int64_t batch, const std::string& plan) {
  return R"({ "name": "t",
  "model": { "transformer": { "name": "gpt-layer", "layers": 1, "hidden": )" + std::to_string(hidden) + R"(, "heads": )" + std::to_string(heads) +
         R"(, "vocab": 32768 }, "seq_len": )" + std::to_string(seq) + R"( },
  "training": { "global_batch": )" + std::to_string(batch) + R"(, "micro_batch": )" + std::to_string(batch) + R"(, "precision": "bf16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": )" + plan + "\n}\n";
}

const std::string kAuto = R"({ "mesh": [ { "name": "model", "size": 8 } ], "auto_sharding": true })";

struct Simulated {
  scenarios::Scenario scenario;
  models::Graph graph;
  strategies::Plan plan;
  sim::Simulation simulation;
};

Simulated simulate(const std::string& text) {
  scenarios::Scenario s = scenarios::parse_scenario(text, "s.json");
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  models::Graph graph = scenarios::build_model(s);
  strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  sim::LowerOptions options;
  sim::Simulation simulation = sim::simulate(graph, plan, cluster, profile, sim::Backend::Analytical, options);
  return {std::move(s), std::move(graph), std::move(plan), std::move(simulation)};
}

models::OpId op_named(const models::Graph& g, const std::string& name) {
  for (models::OpId op = 0; op < g.op_count(); ++op)
    if (g.op(op).name == name) return op;
  FAIL("no operator " << name);
  return 0;
}

/// Whether the weight matrix of linear layer `name` is split (each device holds less than all of it;
/// a bias may stay whole).
bool weights_split(const Simulated& r, const std::string& name) {
  const models::OpId op = op_named(r.graph, name);
  const auto& o = r.graph.op(op);
  for (const auto& w : o.weights)
    if (w.name == name + ".weight") return strategies::local_elements(r.plan.mesh, r.plan.sharding[op], o, w.spec) < o.elements(w.spec);
  FAIL("no weight matrix on " << name);
  return false;
}

}  // namespace

TEST_CASE("auto-sharding a GPT layer on 8 devices is no worse than Megatron's tp 8, and says what it chose", "[auto-sharding]") {
  // GPT-3 2.7B's layer shape (hidden 2560, 32 heads), 2048 tokens, 8 sequences for the 8 devices.
  const Simulated automatic = simulate(gpt_layer(2560, 32, 2048, 8, kAuto));
  const Simulated megatron = simulate(gpt_layer(2560, 32, 2048, 8, R"({ "tp": 8 })"));
  INFO(automatic.scenario.plan.auto_sharding_report);
  CHECK(automatic.simulation.result.step_time_s <= megatron.simulation.result.step_time_s);
  CHECK(automatic.scenario.plan.auto_sharding_outcome == "optimal");
  CHECK_THAT(automatic.plan.description, Contains("mesh model 8 (auto-sharded: optimal)"));
  CHECK_THAT(automatic.scenario.plan.auto_sharding_report, Contains("auto-sharding: optimal (ILP: "));
  CHECK_THAT(automatic.scenario.plan.auto_sharding_report, Contains("  layers.0.mlp.fc1: "));
  // The solution is written as annotations, one per operator but the input.
  CHECK(automatic.scenario.plan.shardings.size() == automatic.graph.op_count() - 1);
  CHECK(automatic.scenario.plan.shardings.front().pointer == "/plan/auto_sharding");
}

TEST_CASE("auto-sharding splits the batch where activations outweigh weights, and the weights where they outweigh activations",
          "[auto-sharding]") {
  SECTION("activations: hidden 256, 64 sequences of 2048 tokens") {
    // fc1's weights: 256 × 1024 = 262,144 parameters (0.5 MiB of bf16 gradients to all-reduce once a
    // step); its input: 64 × 2048 × 256 values (64 MiB), which any split of the weights would have to
    // gather or reduce in every pass. Splitting the batch costs only the small gradient all-reduce.
    const Simulated r = simulate(gpt_layer(256, 4, 2048, 64, kAuto));
    const models::OpId fc1 = op_named(r.graph, "layers.0.mlp.fc1");
    CHECK(r.plan.sharding[fc1].axes_of("b") == std::vector<int>{1});
    CHECK_FALSE(weights_split(r, "layers.0.mlp.fc1"));
  }
  SECTION("weights: hidden 8192, one sequence of 128 tokens") {
    // fc1's weights: 8192 × 32768 = 268 M parameters (512 MiB of bf16 gradients); its input: 128 ×
    // 8192 values (2 MiB). A data-parallel split (of the tokens: the batch of 1 cannot be split 8 ways)
    // would all-reduce 512 MiB a step; splitting the weights moves a few MiB of activations.
    const Simulated r = simulate(gpt_layer(8192, 64, 128, 1, kAuto));
    CHECK(weights_split(r, "layers.0.mlp.fc1"));
    CHECK(weights_split(r, "layers.0.mlp.fc2"));
    // It finds Megatron's MLP: fc1 by columns, fc2 by rows (the contraction f over the mesh).
    CHECK(r.plan.sharding[op_named(r.graph, "layers.0.mlp.fc1")].axes_of("f") == std::vector<int>{1});
    CHECK(r.plan.sharding[op_named(r.graph, "layers.0.mlp.fc2")].axes_of("f") == std::vector<int>{1});
  }
}

TEST_CASE("auto-sharding keeps within the devices' memory, and says when nothing fits", "[auto-sharding]") {
  SECTION("weights that fit only when split") {
    // 6 layers of hidden 12288: 6 × 12 × 12288² = 10.9 G parameters, 16 bytes each with mixed-precision
    // Adam (174 GB) > one A100's 79 GiB usable: replicated weights cannot fit, split 8 ways they do.
    std::string text = gpt_layer(12288, 96, 256, 8, kAuto);
    text.replace(text.find("\"layers\": 1"), 11, "\"layers\": 6");
    const Simulated r = simulate(text);
    CHECK(weights_split(r, "layers.3.mlp.fc1"));
    CHECK(r.simulation.result.fits);
  }
  SECTION("a model that fits no sharding") {
    // 64 layers of hidden 12288: 116 G parameters × 16 bytes / 8 devices = 232 GB a device at best.
    std::string text = gpt_layer(12288, 96, 256, 8, kAuto);
    text.replace(text.find("\"layers\": 1"), 11, "\"layers\": 64");
    CHECK_THROWS_WITH(scenarios::parse_scenario(text, "s.json"), Contains("automatic sharding: no sharding of the model on the mesh fits"));
  }
}

TEST_CASE("auto-sharding's time limit returns the best sharding found, with its gap, and never hangs", "[auto-sharding]") {
  // A GPT-3 175B layer on 1024 A100 as a 128 × 8 mesh, with a limit of a millisecond: the solver
  // returns its start (each group's least-memory candidate) or better, never nothing.
  const std::string text = R"({ "name": "t",
  "model": { "transformer": { "name": "gpt3-175b-layer", "layers": 1, "hidden": 12288, "heads": 96, "vocab": 50257 }, "seq_len": 2048 },
  "training": { "global_batch": 1024, "micro_batch": 1024, "precision": "bf16" },
  "cluster": { "preset": "dgx-a100", "nodes": 128 },
  "plan": { "mesh": [ { "name": "x", "size": 128 }, { "name": "y", "size": 8 } ], "auto_sharding": true, "auto_sharding_time_limit_s": 0.001 }
})";
  const auto start = std::chrono::steady_clock::now();
  const scenarios::Scenario s = scenarios::parse_scenario(text, "s.json");
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 60);
  const std::string& outcome = s.plan.auto_sharding_outcome;
  INFO(outcome);
  CHECK((outcome == "optimal" || outcome.rfind("feasible (time limit), gap ", 0) == 0));
  CHECK_FALSE(s.plan.shardings.empty());
}

TEST_CASE("auto-sharding is deterministic, and refused beside annotations or without a mesh", "[auto-sharding]") {
  const std::string text = gpt_layer(1024, 16, 512, 8, kAuto);
  const scenarios::Scenario a = scenarios::parse_scenario(text, "s.json");
  const scenarios::Scenario b = scenarios::parse_scenario(text, "s.json");
  CHECK(a.plan.shardings == b.plan.shardings);
  CHECK(a.plan.auto_sharding_report == b.plan.auto_sharding_report);

  CHECK_THAT(testing::scenario_error(gpt_layer(1024, 16, 512, 8, R"({ "auto_sharding": true })")),
             Contains("at /plan/auto_sharding: automatic sharding shards the operators over the axes of a \"mesh\""));
  CHECK_THAT(testing::scenario_error(gpt_layer(
                 1024, 16, 512, 8,
                 R"({ "mesh": [ { "name": "model", "size": 8 } ], "auto_sharding": true, "shardings": [ { "weight": "layers.*.mlp.fc1.weight", "spec": [null, "model"] } ] })")),
             Contains("at /plan/shardings/0: annotations cannot be given beside \"auto_sharding\""));
  // A mesh of 3 axes on the 8 devices: a projection's 5 splittable dims (b, s, h, g, d; r, the query
  // heads per key/value head, is 1) give 6^3 = 216 assignments: allowed.
  const std::string three = R"({ "mesh": [ { "name": "a", "size": 2 }, { "name": "b", "size": 2 }, { "name": "c", "size": 2 } ], "auto_sharding": true })";
  CHECK(testing::scenario_error(gpt_layer(1024, 16, 512, 8, three)) == "(no error)");
}

TEST_CASE("auto-sharding refuses a program past its bounds, saying why", "[auto-sharding]") {
  // 32 devices as 5 axes of 2: the first projection's 5 splittable dims give 6^5 = 7,776 assignments,
  // past the bound of 4096 an operator.
  std::string text = gpt_layer(1024, 16, 512, 32,
                               R"({ "mesh": [ { "name": "a", "size": 2 }, { "name": "b", "size": 2 }, { "name": "c", "size": 2 }, )"
                               R"({ "name": "d", "size": 2 }, { "name": "e", "size": 2 } ], "auto_sharding": true })");
  text.replace(text.find("\"nodes\": 1"), 10, "\"nodes\": 4");
  CHECK_THROWS_WITH(scenarios::parse_scenario(text, "s.json"), Contains("has 5 splittable dims, so 6^5 candidate shardings on a mesh of 5 axes, more than 4096; use a mesh of fewer axes"));
}

TEST_CASE("auto-sharding on Wide-ResNet-101-2 at one image a GPU: data parallel under ZeRO-1, Alpa's layout without", "[auto-sharding]") {
  // CIFAR-100 at 224 px on 32 A100 (4 DGX A100), 32 images a step: one a GPU.
  auto wrn = [](const std::string& micro_batch, const std::string& plan) {
    return R"({ "name": "w", "model": { "preset": "wide_resnet101_2", "image_size": 224, "num_classes": 100 },
  "training": { "global_batch": 32, "micro_batch": )" +
           micro_batch + R"(, "precision": "fp16", "optimizer": "sgd-momentum" },
  "cluster": { "preset": "dgx-a100", "nodes": 4 }, "plan": )" + plan + " }";
  };
  SECTION("one data axis with ZeRO-1: every operator split by the batch, the dp 32 + ZeRO-1 knob plan's step") {
    // ZeRO-1 updates one 32nd of each replicated weight a rank and gathers the weights back after the
    // step; a weight split by channels over the data axis saves that gather (and its reduction) but
    // costs the all-gather and reduce-scatter of its activations over 4 nodes each way, more here.
    const Simulated automatic = simulate(wrn("1", R"({ "mesh": [ { "name": "data", "size": 32, "data": true } ], "zero": 1, "auto_sharding": true })"));
    const Simulated knob = simulate(wrn("1", R"({ "dp": 32, "zero": 1 })"));
    INFO(automatic.scenario.plan.auto_sharding_report);
    for (models::OpId op = 0; op < automatic.graph.op_count(); ++op) {
      if (automatic.graph.op(op).kind == models::OpKind::Input) continue;
      const auto& dims = automatic.plan.sharding[op].dims;
      REQUIRE(dims.size() == 1);
      CHECK(dims[0].dim == "b");
    }
    CHECK(automatic.simulation.result.step_time_s == Approx(knob.simulation.result.step_time_s).epsilon(1e-9));
  }
  SECTION("a 4 × 8 mesh without ZeRO: layer4's convolution pairs split by channels within a node, faster than dp 32") {
    // Alpa's finding for Wide-ResNet (Zheng et al., OSDI 2022, the Wide-ResNet case study): data parallelism where
    // activations outweigh weights, the weight-heavy last stage's convolutions partitioned.
    const Simulated automatic =
        simulate(wrn("8", R"({ "mesh": [ { "name": "data", "size": 4, "data": true }, { "name": "gpu", "size": 8 } ], "auto_sharding": true })"));
    const Simulated knob = simulate(wrn("1", R"({ "dp": 32 })"));
    INFO(automatic.scenario.plan.auto_sharding_report);
    const models::OpId conv1 = op_named(automatic.graph, "layer4.1.conv1");
    CHECK(automatic.plan.sharding[conv1].axes_of("co").size() == 1);
    CHECK(automatic.plan.sharding[op_named(automatic.graph, "layer1.1.conv1")].axes_of("co").empty());
    CHECK(automatic.simulation.result.step_time_s < knob.simulation.result.step_time_s);
  }
}
