// Compute–communication interference (sim/interference.hpp) on task graphs written by hand:
// each timeline is derived beside its check from the fluid model — a compute task runs at rate r_c
// while a collective is in flight on its device, a collective at r_m while one of its devices
// computes, and each task's work left is advanced at every rate change.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "small_gpt.hpp"
#include "test_clusters.hpp"

#include "common/error.hpp"
#include "sim/collectives.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/engine/interference_engine.hpp"
#include "sim/engine/simgrid_engine.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "sim/task_graph.hpp"

using namespace parasim;
using namespace parasim::sim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr std::uint8_t kCompute = 0, kComm = 1;
constexpr std::int64_t kUs = 1'000'000;  // picoseconds per microsecond

/// Rates r_c for compute and r_m for communication under every collective kind.
InterferenceRates uniform(double compute, double communication) {
  InterferenceRates r;
  r.compute.fill(compute);
  r.communication.fill(communication);
  return r;
}

/// Every device of a `devices`-device graph at `rates`.
Interference everywhere(std::int64_t devices, InterferenceRates rates) {
  return Interference{{rates}, std::vector<std::uint32_t>(static_cast<std::size_t>(devices), 0), {}, {}, {}, {}, {}, {}};
}

/// Two devices in one node, 100 GB/s ports with no latency and efficiency 1: a ring all-reduce of S
/// bytes over both takes 2·(p−1)/p · S/B = S / 100e9 s exactly, on both backends.
Cluster pair_of_devices() {
  Cluster c = parasim::testing::switched(1, 2);
  c.intra = parasim::testing::flat("fast", 100e9, 0);
  return c;
}

/// The two-task case: a GEMM of `gemm_us` on device 0's compute stream and, issued at the same
/// time, an all-reduce of `bytes` over devices 0 and 1 on their communication streams.
TaskGraph gemm_beside_all_reduce(std::int64_t gemm_us, double bytes) {
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  b.enqueue(b.add(TaskKind::Compute, 0, kCompute, Picoseconds(gemm_us * kUs), Category::Backward, -1, b.label("GEMM"), {}));
  const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, b.group(std::vector<std::int64_t>{0, 1}), bytes, -1});
  b.enqueue(b.add_collective(cid, kComm, Category::GradientComm, -1, b.label("all-reduce"), {}));
  return std::move(b).finish();
}

struct Run {
  std::vector<std::int64_t> start_ps, finish_ps;
};

Run run(const TaskGraph& g, const Cluster& cluster, const Interference& x, Backend backend) {
  const std::vector<CollectiveEstimate> estimates = estimate_collectives(g, cluster);
  if (backend == Backend::Analytical) {
    std::vector<Picoseconds> ps;
    for (const auto& e : estimates) ps.push_back(e.time);
    InterferedTimeline tl = simulate_interference(g, ps, x);
    return {tl.timeline.start_ps, tl.finish_ps};
  }
  const std::vector<CollectiveFlows> flows = collective_flows_of(g, cluster, estimates);
  const std::vector<double> speeds(static_cast<std::size_t>(cluster.device_count()), 1e12);
  SimGridRun r = simulate_simgrid(g, cluster, flows, speeds, x);
  return {r.timeline.start_ps, r.finish_ps};
}

/// Picoseconds as microseconds.
double us(std::int64_t ps) { return static_cast<double>(ps) / kUs; }

}  // namespace

TEST_CASE("interference: a GEMM and an all-reduce overlapping it slow each other, on both backends", "[sim][engine][interference][simgrid]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  const Cluster cluster = pair_of_devices();
  // r_c = 0.8: the GEMM keeps 80% of its speed while the all-reduce runs on its device;
  // r_m = 0.5: the all-reduce keeps half its speed while device 0 computes.
  const Interference x = everywhere(2, uniform(0.8, 0.5));
  // SimGrid times in doubles: its finishes agree to a picosecond or so.
  const double tolerance_us = backend == Backend::Analytical ? 0 : 1e-5;

  SECTION("the all-reduce ends first") {
    // GEMM 100 µs alone; all-reduce of 6 MB: 6e6 / 100e9 = 60 µs alone. Both start at 0.
    // At the rates: the all-reduce would end at 60 / 0.5 = 120 µs, the GEMM at 100 / 0.8 = 125 µs;
    // the all-reduce ends first, at 120 µs. By then the GEMM has done 120 · 0.8 = 96 µs of its
    // work; its last 4 µs run at full speed: it ends at 124 µs.
    const Run r = run(gemm_beside_all_reduce(100, 6e6), cluster, x, backend);
    CHECK(r.start_ps[0] == 0);
    CHECK(r.start_ps[1] == 0);
    CHECK_THAT(us(r.finish_ps[1]), WithinAbs(120, tolerance_us));
    CHECK_THAT(us(r.finish_ps[0]), WithinAbs(124, tolerance_us));
  }
  SECTION("the GEMM ends first") {
    // GEMM 30 µs, all-reduce 60 µs alone. The GEMM ends at 30 / 0.8 = 37.5 µs; the all-reduce has
    // done 37.5 · 0.5 = 18.75 µs of its work, and its last 41.25 µs run at full speed: it ends at
    // 37.5 + 41.25 = 78.75 µs.
    const Run r = run(gemm_beside_all_reduce(30, 6e6), cluster, x, backend);
    CHECK_THAT(us(r.finish_ps[0]), WithinAbs(37.5, tolerance_us));
    CHECK_THAT(us(r.finish_ps[1]), WithinAbs(78.75, tolerance_us));
  }
  SECTION("without interference the overlap is free") {
    // Rates 1: GEMM [0, 100), all-reduce [0, 60).
    const Run r = run(gemm_beside_all_reduce(100, 6e6), cluster, Interference{}, backend);
    const Run plain = run(gemm_beside_all_reduce(100, 6e6), cluster, everywhere(2, uniform(1, 1)), backend);
    CHECK_THAT(us(plain.finish_ps[0]), WithinAbs(100, tolerance_us));
    CHECK_THAT(us(plain.finish_ps[1]), WithinAbs(60, tolerance_us));
    if (backend == Backend::SimGrid) {
      CHECK_THAT(us(r.finish_ps[0]), WithinAbs(100, tolerance_us));
      CHECK_THAT(us(r.finish_ps[1]), WithinAbs(60, tolerance_us));
    }
  }
}

TEST_CASE("interference: rates by size price each collective at its bytes, on both backends", "[sim][engine][interference][simgrid]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  // A GEMM of 200 µs on device 0 and, on the communication streams, two all-reduces over both
  // devices one after the other: 2 MB (2e6 / 100e9 = 20 µs alone), then 8 MB (80 µs alone).
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  const TaskId gemm = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(200 * kUs), Category::Backward, -1, b.label("GEMM"), {});
  b.enqueue(gemm);
  const auto group = b.group(std::vector<std::int64_t>{0, 1});
  const auto small = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, group, 2e6, -1});
  const auto large = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, group, 8e6, -1});
  const TaskId first = b.add_collective(small, kComm, Category::GradientComm, -1, b.label("all-reduce 2 MB"), {});
  b.enqueue(first);
  const TaskId second = b.add_collective(large, kComm, Category::GradientComm, -1, b.label("all-reduce 8 MB"), {});
  b.enqueue(second);
  const TaskGraph g = std::move(b).finish();
  // The all-reduce's compute rate by size: 0.8 at 1 MB, 0.4 at 16 MB, linear in log2 between: at
  // 2 MB a quarter of the way (log2 2 / log2 16), 0.8 − 0.25 · 0.4 = 0.7; at 8 MB three quarters,
  // 0.8 − 0.75 · 0.4 = 0.5. Its one rate (0.9) is not used where the curve is. Communication keeps
  // 0.5 at every size (no curve).
  InterferenceRates rates = uniform(0.9, 0.5);
  rates.compute_by_size[static_cast<std::size_t>(CollectiveKind::AllReduce)].points = {{1e6, 0.8}, {16e6, 0.4}};
  Interference x = everywhere(2, rates);
  size_rates(x, g);
  REQUIRE(x.at_size.size() == 1);
  CHECK_THAT(x.at_size[0][small].compute, WithinAbs(0.7, 1e-12));
  CHECK_THAT(x.at_size[0][large].compute, WithinAbs(0.5, 1e-12));
  // t = 0: the GEMM at 0.7 and the 2 MB all-reduce at 0.5 start; it ends at 20 / 0.5 = 40 µs, the
  // GEMM having done 28 µs of its 200. t = 40: the 8 MB all-reduce at 0.5, the GEMM now at 0.5: the
  // all-reduce ends at 40 + 80 / 0.5 = 200 µs, the GEMM having done 28 + 80 = 108 µs. Its last 92 µs
  // at full speed: it ends at 292 µs. (At the one rate, 0.9, it would end at 200 + 200 · 0.1 = 220 µs.)
  const Run r = run(g, pair_of_devices(), x, backend);
  const double tolerance_us = backend == Backend::Analytical ? 1e-6 : 1e-5;
  CHECK_THAT(us(r.finish_ps[first]), WithinAbs(40, tolerance_us));
  CHECK_THAT(us(r.finish_ps[second]), WithinAbs(200, tolerance_us));
  CHECK_THAT(us(r.finish_ps[gemm]), WithinAbs(292, tolerance_us));
}

TEST_CASE("interference: rates change at every start and end, by collective kind", "[sim][engine][interference]") {
  // One device, three streams: compute, and two communication streams. Collectives over a group of
  // one device cost what the table says (built by hand, no cluster).
  TaskGraphBuilder b(1, {Stream::Compute, Stream::DataComm, Stream::TensorComm});
  const TaskId gemm = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(100), Category::Forward, -1, b.label("GEMM"), {});
  b.enqueue(gemm);
  const auto gather = b.collective(CollectiveSpec{CollectiveKind::AllGather, CollectiveAlgorithm::Ring, b.group(std::vector<std::int64_t>{0}), 1, -1});
  const auto reduce = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, b.group(std::vector<std::int64_t>{0}), 2, -1});
  const TaskId ag = b.add_collective(gather, 1, Category::GradientComm, -1, b.label("gather"), {});
  b.enqueue(ag);
  // The all-reduce, on the other stream, waits for the gather.
  const TaskId ar = b.add_collective(reduce, 2, Category::TensorComm, -1, b.label("all-reduce"), std::vector<TaskId>{ag});
  b.enqueue(ar);
  const TaskGraph g = std::move(b).finish();
  InterferenceRates rates;
  rates.compute[static_cast<std::size_t>(CollectiveKind::AllGather)] = 0.5;
  rates.compute[static_cast<std::size_t>(CollectiveKind::AllReduce)] = 0.25;
  rates.communication[static_cast<std::size_t>(CollectiveKind::AllGather)] = 0.5;
  rates.communication[static_cast<std::size_t>(CollectiveKind::AllReduce)] = 1;
  const std::vector<Picoseconds> ps{Picoseconds(40), Picoseconds(10)};
  const InterferedTimeline tl = simulate_interference(g, ps, everywhere(1, rates));
  // t = 0: GEMM (100 ps of work) and the gather (40) start; the GEMM runs at the gather's 0.5, the
  // gather at 0.5 (the device computes): the gather ends at 80 ps, the GEMM has done 40.
  CHECK(tl.finish_ps[ag] == 80);
  // t = 80: the all-reduce (10 ps of work, after the gather) starts; the GEMM runs at its 0.25,
  // the all-reduce keeps rate 1: it ends at 90 ps, the GEMM has done 40 + 10 · 0.25 = 42.5.
  CHECK(tl.timeline.start_ps[ar] == 80);
  CHECK(tl.finish_ps[ar] == 90);
  // t = 90: nothing beside the GEMM: its last 57.5 ps end at 147.5, rounded to 148 ps.
  CHECK(tl.finish_ps[gemm] == 148);
  CHECK(tl.timeline.makespan == Picoseconds(148));
  // It ran 148 ps for 100 ps of work: 48 ps of stretch.
  CHECK(compute_stretch_ps(g, tl.timeline.start_ps, tl.finish_ps)[0] == 48);
}

TEST_CASE("interference: a collective slows while any of its devices computes", "[sim][engine][interference]") {
  // Two devices; device 1 computes 30 ps, device 0 nothing; an all-reduce of 60 ps over both at
  // r_m = 0.5 runs at half speed while device 1 computes: 15 ps of work by t = 30, the last 45 at
  // full speed: it ends at 75. The compute, at r_c = 0.8, would take 37.5: the all-reduce is still
  // in flight then, so the GEMM ends at 30 / 0.8 = 37.5 and the all-reduce's 60 − 37.5 · 0.5 = 41.25
  // left end at 78.75 → 79 ps (rounded).
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  const TaskId gemm = b.add(TaskKind::Compute, 1, kCompute, Picoseconds(30), Category::Forward, -1, b.label("GEMM"), {});
  b.enqueue(gemm);
  const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, b.group(std::vector<std::int64_t>{0, 1}), 1, -1});
  const TaskId ar = b.add_collective(cid, kComm, Category::GradientComm, -1, b.label("all-reduce"), {});
  b.enqueue(ar);
  const TaskGraph g = std::move(b).finish();
  const std::vector<Picoseconds> ps{Picoseconds(60)};
  const InterferedTimeline tl = simulate_interference(g, ps, everywhere(2, uniform(0.8, 0.5)));
  CHECK(tl.finish_ps[gemm] == 38);  // 37.5 rounded half away from zero
  CHECK(tl.finish_ps[ar] == 79);
  CHECK(compute_stretch_ps(g, tl.timeline.start_ps, tl.finish_ps) == std::vector<std::int64_t>{0, 8});
}

TEST_CASE("interference: compute slows while another device of its host computes (a shared host)", "[sim][engine][interference][shared-host]") {
  // Three devices: 0 and 1 share a host, 2 is alone on its own. Device 0 computes A (100 ps of
  // work at its host's speed alone) from t = 0; device 1 computes B (40 ps) after device 2's C
  // (20 ps) — a dependency, so B starts at 20. Beside the host's other compute, A keeps 0.5 of its
  // speed and B 0.25; C, alone on its host, keeps all of it whatever runs.
  //   t = 0–20: A alone at rate 1, 20 ps done; C runs 0–20.
  //   t = 20: B starts; A and B both slowed. B at 0.25 needs 160 ps → 180; A at 0.5 has 80 left → 180.
  //   Both end at t = 180 (A: 20 + 160 · 0.5 = 100; B: 160 · 0.25 = 40).
  // Then the same with B's work at 20 ps: B at 0.25 ends at 20 + 80 = 100, A has done 20 + 40 = 60,
  // its last 40 alone at rate 1: A ends at 140.
  for (const std::int64_t b_work : {40, 20}) {
    TaskGraphBuilder b(3, {Stream::Compute, Stream::DataComm});
    const TaskId a = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(100), Category::Forward, -1, b.label("A"), {});
    b.enqueue(a);
    const TaskId c = b.add(TaskKind::Compute, 2, kCompute, Picoseconds(20), Category::Forward, -1, b.label("C"), {});
    b.enqueue(c);
    const TaskId bt = b.add(TaskKind::Compute, 1, kCompute, Picoseconds(b_work), Category::Forward, -1, b.label("B"), std::vector<TaskId>{c});
    b.enqueue(bt);
    const TaskGraph g = std::move(b).finish();
    Interference x = everywhere(3, uniform(1, 1));
    x.host_of = {0, 0, -1};
    x.together.assign(g.task_count(), 1.0f);
    x.together[a] = 0.5f;
    x.together[bt] = 0.25f;
    x.together[c] = 0.5f;  // alone on its host: never applied
    CHECK_FALSE(x.none());
    const InterferedTimeline tl = simulate_interference(g, {}, x);
    CHECK_FALSE(tl.one_pass);
    CHECK(tl.finish_ps[c] == 20);
    CHECK(tl.timeline.start_ps[bt] == 20);
    if (b_work == 40) {
      CHECK(tl.finish_ps[a] == 180);
      CHECK(tl.finish_ps[bt] == 180);
    } else {
      CHECK(tl.finish_ps[bt] == 100);
      CHECK(tl.finish_ps[a] == 140);
    }
  }
  {
    // Device 0 standing for two devices of its host (itself and an unsimulated data-parallel replica
    // of it, which computes when it does): A keeps 0.5 throughout, 100 ps of work end at 200; device
    // 1 of the same host, weight 1, computing nothing.
    TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
    const TaskId a = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(100), Category::Forward, -1, b.label("A"), {});
    b.enqueue(a);
    const TaskGraph g = std::move(b).finish();
    Interference x = everywhere(2, uniform(1, 1));
    x.host_of = {0, 0};
    x.together = {0.5f};
    x.host_weight = {2, 1};
    CHECK(simulate_interference(g, {}, x).finish_ps[a] == 200);
    x.host_weight = {1, 1};
    CHECK(simulate_interference(g, {}, x).finish_ps[a] == 100);
  }
  // A rate above 1, or rates without a host per device, are refused.
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  b.enqueue(b.add(TaskKind::Compute, 0, kCompute, Picoseconds(10), Category::Forward, -1, b.label("A"), {}));
  const TaskGraph g = std::move(b).finish();
  Interference x = everywhere(2, uniform(1, 1));
  x.host_of = {0, 0};
  x.together = {1.5f};
  CHECK_THROWS_AS(simulate_interference(g, {}, x), InternalError);
  x.together = {0.5f};
  x.host_of = {0};
  CHECK_THROWS_AS(simulate_interference(g, {}, x), InternalError);
}

TEST_CASE("interference: beside other work a shared host slows compute by the other task's memory duty", "[sim][engine][interference][shared-host]") {
  // Devices 0 and 1 share a host; both compute from t = 0, A on device 0 (75 ps of work) and B on
  // device 1 (150 ps), each keeping 0.5 of its speed beside a twin (`together`). A twin is a task
  // of the same work; beside other work a task keeps 1 − 0.5 · (the other task's memory duty).
  //   Other work, duties 0.5 and 0.5: both keep 0.75. A ends at 75 / 0.75 = 100, when B has done
  //   75; B's last 75 run alone at rate 1: B ends at 175.
  //   Other work, duties A 0 and B 1 (B a pure memory pass, A pure arithmetic): A keeps
  //   1 − 0.5 · 1 = 0.5 and ends at 150; B keeps 1 − 0.5 · 0 = 1 and ends at 150.
  //   The same work (twins), or no duties given: both keep 0.5. A ends at 150, B has done 75, its
  //   last 75 alone: B ends at 225.
  //   Device 0 standing for two (a replica of it on the host, its twin), both duties 0: A keeps 0.5
  //   beside its replica whatever else runs, and ends at 150; B, beside A's arithmetic only, keeps
  //   all of its speed and ends at 150.
  struct Case {
    bool same_work;
    std::vector<float> duty;
    std::vector<std::int64_t> weight;
    std::int64_t a_end, b_end;
  };
  for (const Case& c : {Case{false, {0.5f, 0.5f}, {}, 100, 175}, Case{false, {0.0f, 1.0f}, {}, 150, 150}, Case{true, {0.5f, 0.5f}, {}, 150, 225},
                        Case{false, {}, {}, 150, 225}, Case{false, {0.0f, 0.0f}, {2, 1}, 150, 150}}) {
    TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
    const TaskId a = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(75), Category::Forward, -1, b.label("A", WorkId{0}), {});
    b.enqueue(a);
    const TaskId bt = b.add(TaskKind::Compute, 1, kCompute, Picoseconds(150), Category::Forward, -1, b.label("B", WorkId{c.same_work ? 0u : 1u}), {});
    b.enqueue(bt);
    const TaskGraph g = std::move(b).finish();
    Interference x = everywhere(2, uniform(1, 1));
    x.host_of = {0, 0};
    x.together = {0.5f, 0.5f};
    x.memory_duty = c.duty;
    x.host_weight = c.weight;
    const InterferedTimeline tl = simulate_interference(g, {}, x);
    CHECK(tl.finish_ps[a] == c.a_end);
    CHECK(tl.finish_ps[bt] == c.b_end);
  }
  // A duty outside [0, 1], or duties not one per task, are refused.
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  b.enqueue(b.add(TaskKind::Compute, 0, kCompute, Picoseconds(10), Category::Forward, -1, b.label("A"), {}));
  const TaskGraph g = std::move(b).finish();
  Interference x = everywhere(2, uniform(1, 1));
  x.host_of = {0, 0};
  x.together = {0.5f};
  x.memory_duty = {1.5f};
  CHECK_THROWS_AS(simulate_interference(g, {}, x), InternalError);
  x.memory_duty = {0.5f, 0.5f};
  CHECK_THROWS_AS(simulate_interference(g, {}, x), InternalError);
}

TEST_CASE("interference: the one-pass engine and the event loop give the same timeline", "[sim][engine][interference]") {
  // simulate_interference takes one pass over the ids when collectives keep full speed and every
  // queue follows the ids, and falls back to the fluid event loop when a collective turns out to
  // start under a compute task already timed; the event loop runs every graph (the flag cleared).
  // Random graphs as in engine_test: 4 devices, a compute stream and two communication streams,
  // 3000 tasks, one in five a collective over 2–4 devices, compute tasks on the compute stream only;
  // compute keeps 0.5 beside all-reduces and 0.75 beside all-gathers.
  const std::uint32_t seed = GENERATE(1u, 2u, 3u, 4u);
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TaskGraphBuilder b(4, {Stream::Compute, Stream::TensorComm, Stream::DataComm});
  std::vector<Picoseconds> coll_ps;
  for (int t = 0; t < 3000; ++t) {
    std::vector<TaskId> deps;
    for (int k = uniform(0, 2); k > 0 && t > 0; --k) deps.push_back(static_cast<TaskId>(uniform(std::max(0, t - 20), t - 1)));
    if (uniform(0, 4) == 0) {
      std::vector<std::int64_t> members{0, 1, 2, 3};
      std::shuffle(members.begin(), members.end(), rng);
      members.resize(static_cast<std::size_t>(uniform(2, 4)));
      std::sort(members.begin(), members.end());
      const CollectiveKind kind = uniform(0, 1) == 0 ? CollectiveKind::AllReduce : CollectiveKind::AllGather;
      const auto cid = b.collective(CollectiveSpec{kind, CollectiveAlgorithm::Auto, b.group(members), static_cast<double>(t), -1});
      coll_ps.emplace_back(uniform(1, 300));
      b.enqueue(b.add_collective(cid, static_cast<std::uint8_t>(uniform(1, 2)), Category::TensorComm, -1, b.label("c"), deps));
    } else {
      b.enqueue(b.add(TaskKind::Compute, uniform(0, 3), kCompute, Picoseconds(uniform(1, 200)), Category::Forward, -1, b.label("t"), deps));
    }
  }
  const TaskGraph g = std::move(b).finish();
  REQUIRE(g.queues_follow_ids);
  InterferenceRates rates;
  rates.compute[static_cast<std::size_t>(CollectiveKind::AllReduce)] = 0.5;
  rates.compute[static_cast<std::size_t>(CollectiveKind::AllGather)] = 0.75;
  const Interference x = everywhere(4, rates);
  const InterferedTimeline fast = simulate_interference(g, coll_ps, x);
  TaskGraph unordered = g;
  unordered.queues_follow_ids = false;
  const InterferedTimeline events = simulate_interference(unordered, coll_ps, x);
  CHECK_FALSE(events.one_pass);
  CHECK(fast.timeline == events.timeline);
  CHECK(fast.finish_ps == events.finish_ps);
  // Interference only lengthens: the step is at least the free one.
  CHECK(fast.timeline.makespan >= simulate_fifo(g, coll_ps).makespan);
}

TEST_CASE("interference: one pass times a compute task beside collectives issued before it", "[sim][engine][interference]") {
  // The all-reduce is issued (id 0) before the GEMM (id 1) it overlaps, as the lowering issues a
  // gradient bucket before the next layer's backward: one pass times it. All-reduce 60 ps from 0;
  // GEMM 100 ps of work from 0 at r_c = 0.8 until 60 (48 done), then at full speed: 60 + 52 = 112.
  TaskGraphBuilder b(2, {Stream::Compute, Stream::DataComm});
  const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, b.group(std::vector<std::int64_t>{0, 1}), 1, -1});
  const TaskId ar = b.add_collective(cid, kComm, Category::GradientComm, -1, b.label("all-reduce"), {});
  b.enqueue(ar);
  const TaskId gemm = b.add(TaskKind::Compute, 0, kCompute, Picoseconds(100), Category::Backward, -1, b.label("GEMM"), {});
  b.enqueue(gemm);
  const TaskGraph g = std::move(b).finish();
  REQUIRE(g.queues_follow_ids);
  const std::vector<Picoseconds> ps{Picoseconds(60)};
  const InterferedTimeline tl = simulate_interference(g, ps, everywhere(2, uniform(0.8, 1)));
  CHECK(tl.finish_ps[ar] == 60);
  CHECK(tl.finish_ps[gemm] == 112);
}

TEST_CASE("interference: a pipeline's step takes the one pass, as the event loop times it", "[sim][engine][interference][pipeline]") {
  // The small GPT (small_gpt.hpp), 4 blocks on tensor 2 x pipeline 2 x data 2 (8 flat chips, links
  // of 10 GB/s), 1F1B over 8 micro-batches, gradient buckets of 0.05 MiB (about a block each), no
  // sequence parallelism. Each unit of the second stage opens with the all-gather over tp of the
  // activation it received (the scatter/gather of pipeline sends, Megatron-LM), each backward unit
  // of the first with that of the gradient. The host issues that gather in program order, after the
  // compute of the units before, and PyTorch's NCCL stream waits on the compute stream at issue: it
  // starts once the device's earlier compute ends, never under it. Every collective then starts
  // after the compute with lower ids on its devices, which is what the one pass over the ids needs;
  // the gradient buckets of the last micro-batch overlap the backward and slow it, and the event
  // loop times the step as the one pass does.
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  spec.grad_bucket_mb = 0.05;  // about a block's gradients per bucket, so buckets leave during the backward
  const testing::LoweredGpt l = testing::lower_small_gpt(4, 1, 16, spec, 8, models::AttentionKind::Eager);
  const TaskGraph& g = l.step.tasks;
  REQUIRE(g.queues_follow_ids);
  std::vector<Picoseconds> ps;
  for (const CollectiveEstimate& e : estimate_collectives(g, testing::flat_cluster(8, 1e10, 0))) ps.push_back(e.time);
  const Timeline free = simulate_fifo(g, ps);

  // Every received all-gather starts no earlier than the end of each compute task before it (by id)
  // on its devices: 8 forward units on stage 1 and 8 backward units on stage 0, in each of the two
  // replicas.
  std::vector<std::int64_t> compute_end(8, 0);
  std::int64_t received = 0;
  for (TaskId t = 0; t < g.task_count(); ++t) {
    std::int64_t scratch = 0;
    const auto on = g.devices_of(t, scratch);
    if (g.kind[t] == TaskKind::Compute) {
      compute_end[g.owner[t]] = std::max(compute_end[g.owner[t]], free.start_ps[t] + g.duration_ps[t]);
    } else if (g.kind[t] == TaskKind::Collective && g.labels[g.label[t]].find(" received ") != std::string::npos) {
      ++received;
      for (const std::int64_t d : on) CHECK(free.start_ps[t] >= compute_end[static_cast<std::size_t>(d)]);
    }
  }
  CHECK(received == 2 * 8 * 2);

  const Interference x = everywhere(8, uniform(0.8, 1));
  const InterferedTimeline fast = simulate_interference(g, ps, x);
  CHECK(fast.one_pass);
  TaskGraph unordered = g;
  unordered.queues_follow_ids = false;
  const InterferedTimeline events = simulate_interference(unordered, ps, x);
  CHECK(fast.timeline == events.timeline);
  CHECK(fast.finish_ps == events.finish_ps);
  // The gradient buckets slowed the backward they overlap.
  const std::vector<std::int64_t> stretch = compute_stretch_ps(g, fast.timeline.start_ps, fast.finish_ps);
  CHECK(*std::max_element(stretch.begin(), stretch.end()) > 0);
  CHECK(fast.timeline.makespan > free.makespan);
}
