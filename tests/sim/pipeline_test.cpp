// Pipeline schedules end to end (plan → lowering → engine → Result) on a graph whose timeline can be
// derived by hand: a chain of identical linear layers, one device per stage, every efficiency 1.
//
// The graph: an input x [b = 1, h = 1000] and L linear layers 1000 → 1000 without bias, one per graph
// layer. Each layer's forward is 2·b·h·n = 2·1·1000·1000 = 2e6 FLOPs and its backward twice that
// (data and weight gradients) = 4e6 FLOPs; at a GEMM peak of 1e12 FLOP/s with efficiency 1 a layer
// takes 2 µs forward and 4 µs backward. Every chunk (model chunk of the pipeline) holds 2 layers:
// 4 µs forward and 8 µs backward, so t_f + t_b of a stage holding v chunks is 12·v µs.
//
// What the lowering adds: pipeline sends (on 1e30 B/s, zero-latency links they round to 0 ps) and,
// after the last backward, the optimizer step: a memory-bound kernel of 12 FLOPs per parameter on the
// fp32 vector peak (1e12 FLOP/s here; its bytes / 1e30 B/s are nothing), i.e. 12 · (2·v·1e6) / 1e12 s
// = 24·v µs on every stage. The step ends with stage 0's optimizer step. Gradient accumulation over
// micro-batches is fused into the weight-gradient GEMMs (GradAccumulation::Fused) unless a test says
// otherwise, so the backward is the GEMMs alone; its other forms are tested on their own below.
#include <cstdint>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "models/graph.hpp"
#include "models/ops.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;
using strategies::Schedule;

namespace {

models::Graph linear_chain(std::int64_t layers) {
  using namespace models;
  Graph g("linear-chain");
  g.set_batch(1);
  for (std::int64_t l = 0; l < layers; ++l) g.add_layer("fc." + std::to_string(l));
  Operator x = ops::make("x", OpKind::Input, {ops::dim("b", 1), ops::dim("h", 1000)}, {}, {"b", "h"}, DType::F16);
  x.layer = 0;
  OpId prev = g.add_op(std::move(x));
  for (std::int64_t l = 0; l < layers; ++l) {
    Operator fc = ops::linear("fc." + std::to_string(l), {ops::dim("b", 1)}, {ops::dim("h", 1000)}, {ops::dim("n", 1000)}, false, DType::F16);
    fc.layer = static_cast<std::int32_t>(l);
    const OpId id = g.add_op(std::move(fc));
    g.connect(prev, id, 0);
    prev = id;
  }
  return g;
}

struct Run {
  strategies::Plan plan;
  sim::Simulation sim;
};

struct Options {
  strategies::Recompute recompute = strategies::Recompute::None;
  double link_bandwidth = 1e30;  ///< B/s
  double link_latency = 0;       ///< s
  bool blocking_p2p = false;
  strategies::GradAccumulation grad_accumulation = strategies::GradAccumulation::Fused;
  double memory_bandwidth = 1e30;  ///< B/s
};

Run run(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v, const Options& o = {}) {
  const models::Graph g = linear_chain(2 * p * v);
  REQUIRE_FALSE(g.validate());
  strategies::TrainingSpec training;
  training.global_batch = m;
  training.micro_batch = 1;
  strategies::PlanSpec spec;
  spec.pp = p;
  spec.schedule = schedule;
  spec.virtual_stages = v;
  spec.recompute = o.recompute;
  spec.blocking_p2p = o.blocking_p2p;
  spec.grad_accumulation = o.grad_accumulation;
  const auto problem = strategies::check_plan(g, training, spec, p);
  INFO((problem ? problem->message : std::string("plan ok")));
  REQUIRE_FALSE(problem);
  Run r{strategies::make_plan(g, training, spec, p), {}};
  r.sim = sim::simulate(g, r.plan, testing::flat_cluster(p, o.link_bandwidth, o.link_latency), testing::flat_profile(1e12, 1e12, o.memory_bandwidth));
  return r;
}

}  // namespace

TEST_CASE("pipeline: step = m(t_f + t_b) + (p − 1)(t_f + t_b)/v + optimizer, for every schedule", "[sim][pipeline]") {
  auto [schedule, p, m, v] = GENERATE(table<Schedule, std::int64_t, std::int64_t, std::int64_t>({
      {Schedule::GPipe, 1, 3, 1},
      {Schedule::GPipe, 2, 1, 1},
      {Schedule::GPipe, 2, 4, 1},
      {Schedule::GPipe, 3, 5, 1},
      {Schedule::GPipe, 4, 8, 1},
      {Schedule::OneFOneB, 1, 3, 1},
      {Schedule::OneFOneB, 2, 1, 1},
      {Schedule::OneFOneB, 2, 4, 1},
      {Schedule::OneFOneB, 3, 5, 1},
      {Schedule::OneFOneB, 4, 4, 1},
      {Schedule::OneFOneB, 4, 8, 1},
      {Schedule::Interleaved1F1B, 2, 2, 2},
      {Schedule::Interleaved1F1B, 2, 4, 2},
      {Schedule::Interleaved1F1B, 2, 4, 3},
      {Schedule::Interleaved1F1B, 3, 6, 2},
      {Schedule::Interleaved1F1B, 4, 4, 2},
      {Schedule::Interleaved1F1B, 4, 8, 2},
      {Schedule::Interleaved1F1B, 4, 8, 3},
  }));
  INFO("schedule " << strategies::to_string(schedule) << ", p " << p << ", m " << m << ", v " << v);
  const Run r = run(schedule, p, m, v);
  const sim::Result& res = r.sim.result;
  const double P = static_cast<double>(p), M = static_cast<double>(m), V = static_cast<double>(v);
  // Per stage: t_f = 4v µs, t_b = 8v µs (2 layers of 2 µs / 4 µs per chunk, v chunks); optimizer 24v µs.
  const double tf = 4e-6 * V, tb = 8e-6 * V, opt = 24e-6 * V;
  const double ideal = M * (tf + tb);
  const double bubble = (P - 1) * (tf + tb) / V;
  // e.g. 1F1B p 4, m 8: 8·12 + 3·12 + 24 = 156 µs = (m + p − 1)(t_f + t_b) + 24 µs.
  CHECK_THAT(res.step_time_s, WithinRel(ideal + bubble + opt, 1e-9));
  if (v == 1) CHECK_THAT(res.step_time_s, WithinRel((M + P - 1) * (tf + tb) + opt, 1e-9));
  // The bubble relative to the ideal m(t_f + t_b): (p − 1)/(v·m).
  CHECK_THAT((res.step_time_s - opt - ideal) / ideal + 1, WithinRel((P - 1) / (V * M) + 1, 1e-9));

  // Where the time goes, the same on every device: m·t_f forward, m·t_b backward, the optimizer step,
  // and the bubble idle (the zero-cost sends expose nothing).
  for (const auto& d : res.per_device) {
    INFO("device " << d.device);
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::Forward)], WithinRel(M * tf, 1e-9));
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::Backward)], WithinRel(M * tb, 1e-9));
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::Optimizer)], WithinRel(opt, 1e-9));
    CHECK_THAT(d.breakdown.idle_s + 1, WithinRel(bubble + 1, 1e-9));
  }
  // bubble_fraction: the mean idle time over the step time.
  CHECK_THAT(res.bubble_fraction + 1, WithinRel(bubble / (ideal + bubble + opt) + 1, 1e-9));
  // Each device does m(t_f + t_b) of model FLOPs at the peak, so MFU = m(t_f + t_b) / step; no
  // recomputation, so HFU = MFU.
  CHECK_THAT(res.mfu, WithinRel(ideal / (ideal + bubble + opt), 1e-9));
  CHECK_THAT(res.hfu, WithinRel(res.mfu, 1e-12));
}

TEST_CASE("pipeline: full recompute adds one forward to every backward", "[sim][pipeline]") {
  auto [schedule, p, m, v] = GENERATE(table<Schedule, std::int64_t, std::int64_t, std::int64_t>({
      {Schedule::GPipe, 2, 4, 1},
      {Schedule::OneFOneB, 4, 8, 1},
      {Schedule::OneFOneB, 4, 2, 1},
      {Schedule::Interleaved1F1B, 2, 4, 2},
      {Schedule::Interleaved1F1B, 4, 8, 2},
  }));
  INFO("schedule " << strategies::to_string(schedule) << ", p " << p << ", m " << m << ", v " << v);
  Options o;
  o.recompute = strategies::Recompute::Full;
  const Run r = run(schedule, p, m, v, o);
  const sim::Result& res = r.sim.result;
  const double P = static_cast<double>(p), M = static_cast<double>(m), V = static_cast<double>(v);
  // Backward now reruns each layer's forward first: t_b' = t_b + t_f = 8v + 4v = 12v µs per stage.
  // The schedules' formula holds for any t_f, t_b: step = m(t_f + t_b') + (p − 1)(t_f + t_b')/v + 24v µs
  // (e.g. 1F1B p 4, m 8: 8·16 + 3·16 + 24 = 200 µs).
  const double tf = 4e-6 * V, tb = 12e-6 * V, opt = 24e-6 * V;
  CHECK_THAT(res.step_time_s, WithinRel(M * (tf + tb) + (P - 1) * (tf + tb) / V + opt, 1e-9));
  for (const auto& d : res.per_device) {
    INFO("device " << d.device);
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::Recompute)], WithinRel(M * tf, 1e-9));
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::Backward)], WithinRel(M * 8e-6 * V, 1e-9));
  }
  // A layer executes 2e6 (forward) + 4e6 (backward) + 2e6 (recompute) FLOPs for 6e6 model FLOPs:
  // HFU / MFU = 8/6.
  CHECK_THAT(res.hfu / res.mfu, WithinRel(8.0 / 6.0, 1e-9));
}

TEST_CASE("pipeline: GPipe with sends of c seconds: (m + p − 1)(t_f + t_b) + 2(p − 1)·c", "[sim][pipeline]") {
  auto [p, m] = GENERATE(table<std::int64_t, std::int64_t>({{2, 1}, {2, 4}, {3, 5}, {4, 8}}));
  INFO("p " << p << ", m " << m);
  // The activation (and its gradient) crossing a stage boundary is x [b, n] = 1·1000 fp16 = 2000 B;
  // on 2e9 B/s links with 1 µs latency a send takes c = 2000/2e9 + 1e-6 = 2 µs, less than t_f = 4 µs,
  // so sends never queue on the p2p stream.
  // Forward: stage s starts micro-batch j at s(t_f + c) + j·t_f, so the last stage finishes its
  // forwards at (p − 1)(t_f + c) + m·t_f and starts its backwards there (GPipe). Each backward
  // reaches the stage below c later: stage 0 finishes at (p − 1)(t_f + c) + m·t_f + (p − 1)(t_b + c)
  // + m·t_b = (m + p − 1)(t_f + t_b) + 2(p − 1)c. Then its optimizer step (24 µs).
  Options o;
  o.link_bandwidth = 2e9;
  o.link_latency = 1e-6;
  const Run r = run(Schedule::GPipe, p, m, 1, o);
  const double P = static_cast<double>(p), M = static_cast<double>(m);
  const double tf = 4e-6, tb = 8e-6, c = 2e-6, opt = 24e-6;
  CHECK_THAT(r.sim.result.step_time_s, WithinRel((M + P - 1) * (tf + tb) + 2 * (P - 1) * c + opt, 1e-9));
  // Where the sends' time shows. Stage s < p − 1 sends forward each micro-batch while computing the next,
  // except the last: after its last forward it idles until gradients come back, so c is exposed. Every
  // backward send overlaps the next backward or, after the last, the optimizer step. The last stage
  // sends only backward: nothing exposed. The p2p stream is busy m·c on the first and last stages
  // (one direction) and 2m·c on the others.
  for (const auto& d : r.sim.result.per_device) {
    INFO("device " << d.device);
    const bool last = d.device == p - 1, first = d.device == 0;
    CHECK_THAT(d.breakdown.seconds[static_cast<std::size_t>(sim::Category::PipelineComm)] + 1, WithinRel((last ? 0 : c) + 1, 1e-9));
    CHECK_THAT(d.comm_busy_s, WithinRel((first || last ? 1 : 2) * M * c, 1e-9));
  }
  // 2m sends per boundary (m activations forward, m gradients back), each of 2000 bytes.
  std::int64_t sends = 0;
  const auto& g = r.sim.step.tasks;
  for (sim::TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != sim::TaskKind::Collective) continue;
    const auto& spec = g.collectives[g.owner[t]];
    if (spec.kind != sim::CollectiveKind::SendRecv) continue;
    ++sends;
    CHECK(spec.bytes == 2000);
    CHECK(g.category[t] == sim::Category::PipelineComm);
  }
  CHECK(sends == 2 * m * (p - 1));
}

TEST_CASE("pipeline: GPipe with blocking sends of c seconds: (m + p − 1)(t_f + t_b) + 2(m + p − 2)·c", "[sim][pipeline]") {
  auto [p, m] = GENERATE(table<std::int64_t, std::int64_t>({{2, 1}, {2, 4}, {3, 5}, {4, 8}}));
  INFO("p " << p << ", m " << m);
  // Sends of c = 2000 B / 2e9 B/s + 1 µs = 2 µs that hold the sender's compute stream. Forward: every
  // stage but the last spends t_f + c per micro-batch, so micro-batches enter stage s every t_f + c
  // and the last stage's m-th forward ends at (m + p − 2)(t_f + c) + t_f. Backward likewise: every stage
  // but the first spends t_b + c, and stage 0's m-th backward ends (m + p − 2)(t_b + c) + t_b later.
  // Total (m + p − 1)(t_f + t_b) + 2(m + p − 2)c, then the optimizer step (24 µs).
  Options o;
  o.link_bandwidth = 2e9;
  o.link_latency = 1e-6;
  o.blocking_p2p = true;
  const Run r = run(Schedule::GPipe, p, m, 1, o);
  const double P = static_cast<double>(p), M = static_cast<double>(m);
  const double tf = 4e-6, tb = 8e-6, c = 2e-6, opt = 24e-6;
  CHECK_THAT(r.sim.result.step_time_s, WithinRel((M + P - 1) * (tf + tb) + 2 * (M + P - 2) * c + opt, 1e-9));
}

TEST_CASE("pipeline: gradient accumulation over micro-batches costs a memory-bound pass per parameter", "[sim][pipeline]") {
  // One stage (p 1), 3 micro-batches, memory at 2e12 B/s. The layers stay compute-bound: a forward moves
  // x 2000 B + W 2e6 B + y 2000 B = 2.004e6 B, 1.002 µs < 2 µs of FLOPs (backward twice both). Per
  // layer of 1e6 parameters and per micro-batch, the accumulation pass costs
  //  - fused into the weight-gradient GEMM: nothing;
  //  - autograd (grad += new from the 2nd micro-batch on: read 2 + 2, write 2 B, spread as (m − 1)/m
  //    of a pass): 6 · 2/3 · 1e6 B / 2e12 B/s = 2 µs (its 1e6 · 2/3 additions take 0.67 µs at 1e12 FLOP/s);
  //  - Megatron's fp32 main_grad buffer (read 2 + 4, write 4 B every micro-batch): 10e6 / 2e12 = 5 µs.
  // The optimizer step is memory-bound here too: 28 B · 2e6 parameters / 2e12 B/s = 28 µs (> 12 FLOPs
  // · 2e6 / 1e12 = 24 µs). Step = 3 · (t_f 4 + t_b 8 + 2 layers · pass) + 28 µs.
  using strategies::GradAccumulation;
  auto [accumulation, step] = GENERATE(table<GradAccumulation, double>({
      {GradAccumulation::Fused, 3 * 12e-6 + 28e-6},               // 64 µs
      {GradAccumulation::Autograd, 3 * (12e-6 + 4e-6) + 28e-6},   // 76 µs
      {GradAccumulation::Fp32Buffer, 3 * (12e-6 + 10e-6) + 28e-6},  // 94 µs
  }));
  INFO(strategies::to_string(accumulation));
  Options o;
  o.grad_accumulation = accumulation;
  o.memory_bandwidth = 2e12;
  const Run r = run(Schedule::OneFOneB, 1, 3, 1, o);
  CHECK_THAT(r.sim.result.step_time_s, WithinRel(step, 1e-9));
}

TEST_CASE("pipeline: autograd accumulation spreads its additions as (m − 1)/m of a pass too", "[sim][pipeline]") {
  // On the flat machine (memory never binds) the accumulation pass is its additions alone: 1 FLOP per
  // parameter at the 1e12 FLOP/s vector peak. Autograd adds from the 2nd micro-batch on, so over m = 2
  // micro-batches a layer of 1e6 parameters adds once: spread as (m − 1)/m = 1/2 of a pass, 0.5 µs per
  // layer and micro-batch (as its bytes are spread). One stage: step = 2 · (12 + 2 · 0.5) + 24 = 50 µs.
  // (With m = 1 there is nothing to add, and nothing is charged.)
  Options o;
  o.grad_accumulation = strategies::GradAccumulation::Autograd;
  CHECK_THAT(run(Schedule::OneFOneB, 1, 2, 1, o).sim.result.step_time_s, WithinRel(50e-6, 1e-9));
  CHECK_THAT(run(Schedule::OneFOneB, 1, 1, 1, o).sim.result.step_time_s, WithinRel(36e-6, 1e-9));
}
