// Re-costing (sim/recost): a lowered step timed again under another profile, or on a cluster with a
// straggler, gives exactly the task graph — and so the timeline — that lowering under it gives.
// Exactness is the point: the compute tasks keep their work (TaskGraph::work), and re-costing times
// that work with the cost function the lowering used, so not one picosecond may differ.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "models/transformer.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/lower.hpp"
#include "sim/recost.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;

namespace {

struct Case {
  models::Graph graph;
  strategies::Plan plan;
};

/// A small GPT (4 blocks, hidden 64, 4 heads, sequence 32) under tp 2 × pp 2 × dp 2 on 8 devices,
/// 4 micro-batches of 1 with autograd gradient accumulation, ZeRO 1 and full recomputation: every
/// kind of compute work (forward, recomputation, backward with accumulation, optimizer step).
Case small_case() {
  models::TransformerConfig c;
  c.name = "small-gpt";
  c.layers = 4;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  spec.zero = 1;
  spec.recompute = strategies::Recompute::Full;
  c.batch = 1 * 2;
  strategies::TrainingSpec training;
  training.global_batch = 8;
  training.micro_batch = 1;
  Case out{models::build_transformer(c), {}};
  REQUIRE_FALSE(strategies::check_plan(out.graph, training, spec, 8));
  out.plan = strategies::make_plan(out.graph, training, spec, 8);
  return out;
}

/// Profile B: unlike the flat profile A, kernels are memory-bound at small sizes (2 TB/s), GEMM
/// efficiency grows with size, and every kernel pays a 4 µs launch.
sim::Profile profile_b() {
  sim::Profile p = testing::flat_profile(300e12, 40e12, 2e12);
  auto& chip = p.devices.at("chip");
  chip.gemm_efficiency = sim::EfficiencyCurve{{{1e6, 0.2}, {1e9, 0.6}, {1e12, 0.8}}};
  chip.memory_efficiency = sim::EfficiencyCurve{{{1e3, 0.3}, {1e8, 0.9}}};
  chip.kernel_launch_overhead_s = 4e-6;
  p.name = "b";
  return p;
}

sim::Timeline timeline(const sim::TaskGraph& g, const sim::Cluster& cluster) {
  std::vector<Picoseconds> coll_ps;
  for (const auto& e : sim::estimate_collectives(g, cluster)) coll_ps.push_back(e.time);
  return sim::simulate_fifo(g, coll_ps);
}

}  // namespace

TEST_CASE("recost: a step lowered under profile A and re-costed under B is the step lowered under B", "[sim][recost]") {
  const Case c = small_case();
  const sim::Cluster cluster = testing::flat_cluster(8, 100e9, 2e-6);
  const sim::Profile a = testing::flat_profile(1e12, 1e12);
  const sim::Profile b = profile_b();
  sim::LoweredStep step = sim::lower(c.graph, c.plan, cluster, a);
  const sim::LoweredStep under_b = sim::lower(c.graph, c.plan, cluster, b);
  // The profiles differ on every compute task, so re-costing has something to do.
  REQUIRE(step.tasks.duration_ps != under_b.tasks.duration_ps);
  sim::recost(step, c.plan, cluster, b);
  CHECK(step.tasks == under_b.tasks);
  CHECK(timeline(step.tasks, cluster) == timeline(under_b.tasks, cluster));
  // And back again.
  sim::recost(step, c.plan, cluster, a);
  CHECK(step.tasks == sim::lower(c.graph, c.plan, cluster, a).tasks);
}

TEST_CASE("recost: a straggler's speed factor re-costs its tasks as lowering on its cluster does", "[sim][recost]") {
  const Case c = small_case();
  const sim::Profile b = profile_b();
  const sim::Cluster uniform = testing::flat_cluster(8, 100e9, 2e-6);
  sim::Cluster straggling = uniform;
  straggling.devices[5].speed_factor = 0.5;  // device 5 (stage 1) computes at half speed
  sim::LoweredStep step = sim::lower(c.graph, c.plan, uniform, b);
  const sim::LoweredStep on_straggler = sim::lower(c.graph, c.plan, straggling, b);
  REQUIRE(step.tasks.duration_ps != on_straggler.tasks.duration_ps);
  sim::recost(step, c.plan, straggling, b);
  CHECK(step.tasks == on_straggler.tasks);
  const sim::Timeline slow = timeline(step.tasks, straggling);
  CHECK(slow == timeline(on_straggler.tasks, straggling));
  // The straggler makes the step longer than the uniform cluster's.
  const sim::LoweredStep uniform_step = sim::lower(c.graph, c.plan, uniform, b);
  CHECK(slow.makespan.count > timeline(uniform_step.tasks, uniform).makespan.count);
}

TEST_CASE("recost: every compute task keeps its work and collectives keep none", "[sim][recost]") {
  const Case c = small_case();
  const sim::LoweredStep step = sim::lower(c.graph, c.plan, testing::flat_cluster(8), testing::flat_profile(1e12, 1e12));
  const sim::TaskGraph& g = step.tasks;
  std::int64_t optimizer_steps = 0;
  for (sim::TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] == sim::TaskKind::Collective) {
      CHECK(g.work_of(t) == sim::kNoWork);
      continue;
    }
    REQUIRE(g.work_of(t) < step.work.computes.size());
    const sim::ComputeWork& w = step.work.computes[g.work_of(t)];
    if (g.category[t] == sim::Category::Optimizer) {
      ++optimizer_steps;
      CHECK(w.optimizer_stage == (g.owner[t] < 4 ? 0 : 1));  // pp outermost: devices 0–3 are stage 0
    } else {
      CHECK(w.ops_end > w.ops_begin);
      // A task's operators run the pass its category says.
      const sim::Pass pass = g.category[t] == sim::Category::Forward    ? sim::Pass::Forward
                             : g.category[t] == sim::Category::Recompute ? sim::Pass::Recompute
                                                                         : sim::Pass::Backward;
      for (std::uint32_t k = w.ops_begin; k < w.ops_end; ++k) CHECK(step.work.ops[k].pass == pass);
    }
  }
  // One optimizer step per device.
  CHECK(optimizer_steps == 8);
}
