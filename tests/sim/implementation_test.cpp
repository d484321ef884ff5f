// The framework that runs a plan (strategies/implementation.hpp) decides ZeRO-3's gathers and the
// gradient reductions: the lowering of the small GPT under each, counted by hand.
//
// The model (small_gpt.hpp), one block, hidden h 64, MLP 256, vocabulary 128, tied embeddings, fp16.
// Its weight tensors: embeddings 128·64 = 8192 elements (tied with the head); per block q, k, v and
// o projections 64·64 = 4096 each with biases of 64; fc1 64·256 = 16,384 with a bias of 256; fc2
// 256·64 = 16,384 with a bias of 64; two norms of 64 + 64; the final norm 64 + 64. With the
// persistence threshold set to 10,000 elements only fc1 and fc2 are gathered: 16,384 elements,
// 32,768 bytes each.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "small_gpt.hpp"
#include "sim/lower.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "strategies/implementation.hpp"
#include "strategies/memory.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using sim::TaskId;
using strategies::Framework;
using strategies::PlanSpec;

namespace {

using testing::contains;

struct Lowered {
  models::Graph graph;
  strategies::Plan plan;
  sim::LoweredStep step;
};

/// The one-block small GPT under ZeRO-3 over dp 2 (one micro-batch of 1), run by `framework` with the
/// persistence threshold at 10,000 elements; `adjust` changes the implementation further.
template <class Adjust>
Lowered lowered(Framework framework, strategies::Recompute recompute, const sim::Profile& profile, Adjust adjust) {
  PlanSpec spec;
  spec.zero = 3;
  spec.recompute = recompute;
  spec.implementation = framework;
  testing::LoweredGpt base = testing::lower_small_gpt(1, 1, 2, spec, 2, models::AttentionKind::Eager);
  Lowered out{std::move(base.graph), std::move(base.plan), {}};
  out.plan.implementation.persistence_elements = 1e4;
  adjust(out.plan.implementation);
  out.plan.grad_bucket_bytes = out.plan.implementation.bucket_for(3);
  out.step = sim::lower(out.graph, out.plan, testing::flat_cluster(2), profile);
  return out;
}

/// Device 0's tasks on `stream`, with their labels.
std::vector<TaskId> queue(const sim::TaskGraph& g, sim::Stream stream) {
  const auto q = g.queue_of(0 * g.stream_count() + sim::stream_index(stream));
  return {q.begin(), q.end()};
}
std::string label(const sim::TaskGraph& g, TaskId t) { return g.labels[g.label[t]]; }
bool depends_on(const sim::TaskGraph& g, TaskId t, TaskId on) {
  const auto deps = g.deps_of(t);
  return std::find(deps.begin(), deps.end(), on) != deps.end();
}

}  // namespace

TEST_CASE("implementations: DeepSpeed of 2021 gathers one parameter at a time with the device synchronised", "[sim][lower][implementation]") {
  sim::Profile profile = testing::flat_profile(1e12, 1e12);
  profile.devices["chip"].kernel_launch_overhead_s = 4e-6;
  const Lowered l = lowered(Framework::DeepSpeed2021, strategies::Recompute::None, profile, [](strategies::Implementation&) {});
  const sim::TaskGraph& g = l.step.tasks;
  std::vector<TaskId> gathers, reductions;
  for (const TaskId t : queue(g, sim::Stream::DataComm)) (contains(label(g, t), "all-gather") ? gathers : reductions).push_back(t);
  // Forward: fc1 then fc2; backward: fc2 then fc1 (the layer's units in the order its pass uses them).
  REQUIRE(gathers.size() == 4);
  CHECK(contains(label(g, gathers[0]), "mlp.fc1.weight"));
  CHECK(contains(label(g, gathers[1]), "mlp.fc2.weight"));
  // Synchronised: each gather sits in the compute chain. The block's forward waits for both, the
  // second for the first; nothing is gathered before the work ahead of it has finished.
  const std::vector<TaskId> compute = queue(g, sim::Stream::Compute);
  const auto first_block_task = std::find_if(compute.begin(), compute.end(), [&](TaskId t) { return contains(label(g, t), "F layers.0"); });
  REQUIRE(first_block_task != compute.end());
  CHECK(depends_on(g, gathers[1], gathers[0]));
  CHECK(depends_on(g, *first_block_task, gathers[1]));
  CHECK(depends_on(g, gathers[0], *(first_block_task - 1)));
  // A copy kernel per rank: 2 ranks × 4 µs on top of the ring's time.
  const auto estimates = sim::estimate_collectives(g, testing::flat_cluster(2));
  const auto& spec = g.collectives[g.owner[gathers[0]]];
  CHECK(spec.host_s_per_rank == 4e-6);
  const double ring = sim::collective_time(testing::flat_cluster(2), spec.kind, g.group(spec.group), spec.bytes).time.seconds();
  CHECK_THAT(estimates[g.owner[gathers[0]]].time.seconds(), Catch::Matchers::WithinAbs(ring + 8e-6, 1e-12));
  // Gradients: one reduce-scatter per weight tensor that has a gradient (the block's 16, the
  // embeddings' and the final norm's 2: 19), each with the same per-rank copies.
  CHECK(reductions.size() == 19);
  for (const TaskId t : reductions) CHECK(g.collectives[g.owner[t]].host_s_per_rank == 4e-6);
}

TEST_CASE("implementations: DeepSpeed gathers per module, prefetched, and again after a recomputed forward", "[sim][lower][implementation]") {
  const sim::Profile profile = testing::flat_profile(1e12, 1e12);
  SECTION("per module, asynchronous") {
    const Lowered l = lowered(Framework::DeepSpeed, strategies::Recompute::None, profile, [](strategies::Implementation&) {});
    const sim::TaskGraph& g = l.step.tasks;
    std::vector<TaskId> gathers;
    for (const TaskId t : queue(g, sim::Stream::DataComm))
      if (contains(label(g, t), "all-gather")) gathers.push_back(t);
    // Two modules hold gathered weights (fc1, fc2), once per pass; their 32,768 elements are under
    // stage3_prefetch_bucket_size (5e7), so each pass issues both as it starts, depending on nothing.
    REQUIRE(gathers.size() == 4);
    CHECK(contains(label(g, gathers[0]), "mlp.fc1 weights"));
    for (const TaskId t : gathers) CHECK(g.deps_of(t).empty());
    // A flat all-gather: no per-rank copies.
    CHECK(g.collectives[g.owner[gathers[0]]].host_s_per_rank == 0);
  }
  SECTION("a layer beyond the reuse distance is gathered again for its backward") {
    // With full recomputation and stage3_max_reuse_distance lowered to 30,000 elements, the
    // block's 32,768 gathered elements are released after the recomputed forward: its backward
    // gathers fc1 and fc2 again. Per micro-batch: 2 (forward) + 2 (recompute) + 2 (again) = 6.
    const Lowered l = lowered(Framework::DeepSpeed, strategies::Recompute::Full, profile,
                              [](strategies::Implementation& i) { i.max_reuse_elements = 3e4; });
    const sim::TaskGraph& g = l.step.tasks;
    std::int64_t gathers = 0, again = 0;
    for (const TaskId t : queue(g, sim::Stream::DataComm)) {
      gathers += contains(label(g, t), "all-gather");
      again += contains(label(g, t), "weights again");
    }
    CHECK(gathers == 6);
    CHECK(again == 2);
    // At the default distance (1e9 elements) the recomputed forward's gathers serve the backward.
    const Lowered kept = lowered(Framework::DeepSpeed, strategies::Recompute::Full, profile, [](strategies::Implementation&) {});
    std::int64_t kept_gathers = 0;
    for (const TaskId t : queue(kept.step.tasks, sim::Stream::DataComm)) kept_gathers += contains(label(kept.step.tasks, t), "all-gather");
    CHECK(kept_gathers == 4);
  }
}

TEST_CASE("memory: ZeRO-3 holds what each implementation gathers at once", "[strategies][memory][implementation]") {
  // The one-block small GPT over dp 2. Gathered 16-bit weights per layer: the block 49,984 elements
  // (12h² + 13h), the embeddings 8,192 (the tied head adds none), the final norm 128.
  const sim::Profile profile = testing::flat_profile(1e12, 1e12);
  SECTION("FSDP2 (Megatron-Core, PyTorch): the largest layer and the next, 2 · 49,984 · 2 B") {
    const Lowered l = lowered(Framework::MegatronCore, strategies::Recompute::None, profile,
                              [](strategies::Implementation& i) { i.persistence_elements = 0; });
    CHECK(strategies::zero3_gathered_bytes(l.graph, l.plan) == 2 * 49984 * 2);
  }
  SECTION("DeepSpeed of 2021: the largest layer's gathered parameters only, 2 · 16,384 · 2 B") {
    const Lowered l = lowered(Framework::DeepSpeed2021, strategies::Recompute::None, profile, [](strategies::Implementation&) {});
    CHECK(strategies::zero3_gathered_bytes(l.graph, l.plan) == 2 * 16384 * 2);
  }
  SECTION("DeepSpeed: the largest layer's modules and as much again prefetched (under 5e7 elements)") {
    // Layer 32,768 elements; ahead max(1 unit = 16,384, min(5e7, 32,768)) = 32,768: 65,536 · 2 B.
    const Lowered l = lowered(Framework::DeepSpeed, strategies::Recompute::None, profile, [](strategies::Implementation&) {});
    CHECK(strategies::zero3_gathered_bytes(l.graph, l.plan) == 65536 * 2);
  }
}

TEST_CASE("implementations: each framework's documented defaults", "[strategies][implementation]") {
  // Megatron-Core: a bucket of max(40M, 1M · dp) parameters; at dp 64 with fp32 gradients 64M · 4 B.
  const auto megatron = strategies::implementation_of(Framework::MegatronCore, 64, 4, std::nullopt);
  CHECK(megatron.bucket_bytes == 64e6 * 4);
  CHECK(megatron.gather_unit == strategies::GatherUnit::Layer);
  CHECK(megatron.zero3_bucket_bytes == 0);
  // At dp 8, 40M parameters of 2 bytes.
  CHECK(strategies::implementation_of(Framework::MegatronCore, 8, 2, std::nullopt).bucket_bytes == 80e6);
  // PyTorch DDP: 25 MiB; an explicit bucket wins.
  CHECK(strategies::implementation_of(Framework::PyTorch, 8, 2, std::nullopt).bucket_bytes == 25.0 * 1024 * 1024);
  CHECK(strategies::implementation_of(Framework::PyTorch, 8, 2, 4.0).bucket_bytes == 4.0 * 1024 * 1024);
  // DeepSpeed: reduce_bucket_size 5e8 elements; prefetch 5e7; persistence 1e5; reuse 1e9.
  const auto ds = strategies::implementation_of(Framework::DeepSpeed, 8, 2, std::nullopt);
  CHECK(ds.bucket_bytes == 1e9);
  CHECK(ds.prefetch_elements == 5e7);
  CHECK(ds.persistence_elements == 1e5);
  CHECK(ds.max_reuse_elements == 1e9);
  CHECK_FALSE(ds.synchronous);
  const auto ds21 = strategies::implementation_of(Framework::DeepSpeed2021, 8, 2, std::nullopt);
  CHECK(ds21.synchronous);
  CHECK(ds21.reduce_per_parameter);
  CHECK(ds21.gather_unit == strategies::GatherUnit::Parameter);
  CHECK(ds21.copies_per_rank == 1);
  for (const auto& name : strategies::framework_names()) CHECK(strategies::to_string(*strategies::framework_from_string(name)) == name);
}
