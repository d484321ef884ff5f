// The task-graph estimate (sim/task_estimate) against the lowering it predicts: counted by hand on a
// small case, equal to the lowered TaskGraph's size on every plan of a grid (both with and without
// the data-parallel replica shortcut), linear in the micro-batches, and safe from overflow.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "models/transformer.hpp"
#include "sim/lower.hpp"
#include "sim/task_estimate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using strategies::PlanSpec;
using strategies::Recompute;
using strategies::Schedule;

namespace {

/// The small GPT of tests/sim/lower_test.cpp: `layers` blocks, hidden 64, 4 heads, vocabulary 128,
/// sequence 32; graph layers 0 = embeddings, 1..L = blocks, L + 1 = head.
models::Graph small_gpt(std::int64_t layers, std::int64_t batch) {
  models::TransformerConfig c;
  c.name = "small-gpt";
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = batch;
  return models::build_transformer(c);
}

struct Case {
  models::Graph graph;
  strategies::Plan plan;
};

Case make_case(std::int64_t layers, std::int64_t global_batch, const PlanSpec& spec, std::int64_t devices) {
  Case out{small_gpt(layers, strategies::resolve_dp(spec, devices)), {}};
  strategies::TrainingSpec training;
  training.global_batch = global_batch;
  const auto problem = strategies::check_plan(out.graph, training, spec, devices);
  INFO((problem ? problem->pointer + ": " + problem->message : std::string("plan ok")));
  REQUIRE_FALSE(problem);
  out.plan = strategies::make_plan(out.graph, training, spec, devices);
  return out;
}

sim::LoweredStep lower(const Case& c, bool one_replica) {
  sim::LowerOptions options;
  options.replicate_data_parallel = one_replica;
  return sim::lower(c.graph, c.plan, testing::flat_cluster(c.plan.mesh.device_count()), testing::flat_profile(1e12, 1e12), options);
}

}  // namespace

TEST_CASE("task estimate: data parallel, counted by hand", "[sim][task_estimate]") {
  // dp 2 on 2 devices, 2 blocks, global batch 4 of micro-batch 1: m = 2 micro-batches per replica.
  // Nothing is sharded but the batch, so no collective runs inside a micro-batch: per micro-batch
  // every device runs the whole forward as one compute task (forward segments run on across layers)
  // and one backward task per graph layer (4 layers: embeddings, 2 blocks, head, each its own so
  // gradient buckets can start as layers finish); after the last micro-batch's backward one
  // all-reduce of every gradient (216,576 B, one 25 MiB bucket) over the one dp group; then one
  // optimizer step per device.
  PlanSpec spec;
  spec.dp = 2;
  const Case c = make_case(2, 4, spec, 2);
  SECTION("every replica simulated") {
    const sim::TaskEstimate e = sim::estimate_task_graph(c.graph, c.plan);
    // 2 micro-batches × 2 devices × (1 + 4) compute + 1 all-reduce + 2 optimizer steps = 23 tasks.
    CHECK(e.tasks == 23);
    // Each compute and optimizer task is queued on its device (20 + 2), the all-reduce on both (2): 24.
    CHECK(e.queue_entries == 24);
    // 24 queue entries, each behind the previous task of its stream; no sends.
    CHECK(e.dependencies == 24);
    // Lowering 23·31 + 24·20 + 24·4 = 1,289 B; engine 23·51 + 24·4 + 24·8 = 1,461 B; the larger × 5/4,
    // rounded down: 1,826 B.
    CHECK(e.memory_bytes == 1'826);
    const sim::LoweredStep step = lower(c, false);
    CHECK(step.tasks.task_count() == e.tasks);
    CHECK(step.tasks.queue.size() == e.queue_entries);
  }
  SECTION("one replica simulated (the shortcut)") {
    const sim::TaskEstimate e = sim::estimate_task_graph(c.graph, c.plan, {.one_data_parallel_replica = true});
    // Device 0 alone: 2 micro-batches × (1 + 4) compute + 1 all-reduce (priced for the pair, queued on
    // device 0 only) + 1 optimizer step = 12 tasks, each queued once.
    CHECK(e.tasks == 12);
    CHECK(e.queue_entries == 12);
    const sim::LoweredStep step = lower(c, true);
    CHECK(step.tasks.task_count() == e.tasks);
    CHECK(step.tasks.queue.size() == e.queue_entries);
  }
}

TEST_CASE("task estimate: equals the lowered task graph on every plan of a grid", "[sim][task_estimate][lower]") {
  int plans = 0;
  for (std::int64_t tp : {1, 2})
    for (bool sp : {false, true})
      for (std::int64_t pp : {1, 2})
        for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved1F1B})
          for (std::int64_t dp : {1, 2})
            for (int zero : {0, 1, 2, 3})
              for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full})
                for (bool overlap : {true, false}) {
                  if (sp && tp == 1) continue;
                  if (schedule == Schedule::Interleaved1F1B && pp == 1) continue;
                  if (zero > 0 && dp == 1) continue;
                  PlanSpec spec;
                  spec.tp = tp;
                  spec.pp = pp;
                  spec.dp = dp;
                  spec.sequence_parallel = sp;
                  spec.schedule = schedule;
                  spec.virtual_stages = schedule == Schedule::Interleaved1F1B ? 2 : 1;
                  spec.zero = zero;
                  spec.recompute = recompute;
                  spec.overlap_grad_reduce = overlap;
                  // ZeRO 1–2's gathers ahead of each chunk's forward: with the gradient overlap under
                  // ZeRO-1, against it under ZeRO-2, so every pairing of the two flags is compared.
                  spec.overlap_param_gather = overlap == (zero == 1);
                  // Buckets of 0.05 MiB split the 216,576 B of gradients, so bucketing is exercised.
                  spec.grad_bucket_mb = 0.05;
                  INFO("tp " << tp << (sp ? " (sp)" : "") << ", pp " << pp << " " << strategies::to_string(schedule) << ", dp " << dp
                             << ", zero " << zero << ", recompute " << strategies::to_string(recompute) << (overlap ? "" : ", no overlap"));
                  const Case c = make_case(4, 4 * dp, spec, tp * pp * dp);
                  for (bool one_replica : {false, true}) {
                    INFO((one_replica ? "one replica simulated" : "every replica simulated"));
                    const sim::TaskEstimate e = sim::estimate_task_graph(c.graph, c.plan, {.one_data_parallel_replica = one_replica});
                    const sim::LoweredStep step = lower(c, one_replica);
                    REQUIRE(step.tasks.task_count() == e.tasks);
                    REQUIRE(step.tasks.queue.size() == e.queue_entries);
                    // The memory estimate covers at least the finished TaskGraph's filled arrays: 27 B per
                    // task (sim/task_estimate.cpp), 4 B per dependency and per queue entry.
                    const std::size_t filled = 27 * step.tasks.task_count() + 4 * step.tasks.deps.size() + 4 * step.tasks.queue.size();
                    CHECK(filled <= e.memory_bytes);
                  }
                  ++plans;
                }
  CHECK(plans > 300);
}

TEST_CASE("task estimate: grows by the same count with every micro-batch", "[sim][task_estimate]") {
  // Every forward and backward unit is instantiated once per micro-batch; only the gradient
  // reduction, the optimizer step and the parameter gathers happen once per step. So with the
  // reductions once per step (ZeRO 0), tasks(m) = a·m + b: the difference between m = 8 and m = 4
  // is the difference between m = 4 and m = 2, twice over.
  PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  const auto tasks = [&](std::int64_t m) {
    const Case c = make_case(4, 2 * m, spec, 8);
    return sim::estimate_task_graph(c.graph, c.plan).tasks;
  };
  const std::uint64_t t2 = tasks(2), t4 = tasks(4), t8 = tasks(8);
  CHECK(t8 - t4 == 2 * (t4 - t2));
}

TEST_CASE("task estimate: a plan beyond 64-bit counts saturates instead of wrapping", "[sim][task_estimate]") {
  // 2^62 micro-batches on 4 devices: 4 devices × 8 compute tasks × 2^62 is past 2^64, so the count
  // saturates at UINT64_MAX (and is refused as larger than any task graph can index).
  PlanSpec spec;
  spec.dp = 4;
  Case c = make_case(2, 4, spec, 4);
  c.plan.micro_batches = std::int64_t{1} << 62;
  const sim::TaskEstimate e = sim::estimate_task_graph(c.graph, c.plan);
  CHECK(e.tasks == UINT64_MAX);
  CHECK(e.memory_bytes == UINT64_MAX);
  CHECK(e.tasks > sim::kMaxTaskGraphIndex);
}
