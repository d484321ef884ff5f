// The analytical engine (sim/engine/fifo_engine) on task graphs written by hand: literal durations in
// picoseconds, and the whole timeline derived by hand above each check. Every case runs against both
// implementations: simulate_fifo (one pass over the ids where every queue follows them, a dataflow
// worklist otherwise) and the event loop (simulate_fifo_events).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "sim/collectives.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/engine/interference_engine.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "sim/task_graph.hpp"

using namespace parasim;
using namespace parasim::sim;
using Catch::Matchers::EndsWith;
using Catch::Matchers::WithinRel;

namespace {

constexpr std::uint8_t kCompute = 0, kComm = 1;

/// A compute task of `duration` picoseconds on (device, stream), labelled `name`; not yet enqueued.
TaskId task(TaskGraphBuilder& b, std::int64_t device, std::uint8_t stream, std::int64_t duration, const std::string& name,
            std::vector<TaskId> deps = {}) {
  return b.add(TaskKind::Compute, device, stream, Picoseconds(duration), Category::Forward, -1, b.label(name), deps);
}

/// The same, enqueued at once at the back of its stream.
TaskId issued(TaskGraphBuilder& b, std::int64_t device, std::uint8_t stream, std::int64_t duration, const std::string& name,
              std::vector<TaskId> deps = {}) {
  const TaskId t = task(b, device, stream, duration, name, std::move(deps));
  b.enqueue(t);
  return t;
}

/// A collective (all-reduce of `bytes`) over `members` on their comm streams; not yet enqueued.
TaskId collective(TaskGraphBuilder& b, const std::vector<std::int64_t>& members, double bytes, const std::string& name,
                  std::vector<TaskId> deps = {}) {
  const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, b.group(members), bytes, -1});
  return b.add_collective(cid, kComm, Category::TensorComm, -1, b.label(name), deps);
}

std::vector<Picoseconds> durations(std::vector<std::int64_t> ps) {
  std::vector<Picoseconds> out;
  for (auto p : ps) out.emplace_back(p);
  return out;
}

/// One implementation of the engine, named for the report.
struct Engine {
  const char* name;
  Timeline (*run)(const TaskGraph&, std::span<const Picoseconds>);
};
// simulate_fifo takes one pass over the ids when the queues follow them (TaskGraph::queues_follow_ids)
// and the worklist otherwise; the worklist is also run on every graph, the flag cleared.
Timeline dataflow_order(const TaskGraph& g, std::span<const Picoseconds> ps) { return simulate_fifo(g, ps); }
Timeline worklist(const TaskGraph& g, std::span<const Picoseconds> ps) {
  TaskGraph copy = g;
  copy.queues_follow_ids = false;
  return simulate_fifo(copy, ps);
}
const Engine kDataflow{"simulate_fifo (id order where the queues follow the ids)", &dataflow_order};
const Engine kWorklist{"simulate_fifo (dataflow worklist)", &worklist};
const Engine kEvents{"simulate_fifo_events (event loop)", &simulate_fifo_events};
// The interference engine with every rate 1 must give the same timelines (sim/engine/interference_engine.hpp).
Timeline free_overlap(const TaskGraph& g, std::span<const Picoseconds> ps) {
  const Interference x{{InterferenceRates{}}, std::vector<std::uint32_t>(static_cast<std::size_t>(g.devices), 0), {}, {}, {}, {}, {}, {}};
  return simulate_interference(g, ps, x).timeline;
}
const Engine kInterference{"simulate_interference (fluid event loop, every rate 1)", &free_overlap};

/// The message of the InternalError `f` throws (empty when it throws nothing).
template <class F>
std::string internal_error_of(F&& f) {
  try {
    f();
  } catch (const InternalError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("engine: a chain on one stream runs back to back", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  TaskGraphBuilder b(1, {Stream::Compute});
  const TaskId a = issued(b, 0, kCompute, 10, "A");
  const TaskId bb = issued(b, 0, kCompute, 20, "B", {a});
  issued(b, 0, kCompute, 5, "C", {bb});
  const TaskGraph g = std::move(b).finish();
  const Timeline tl = engine.run(g, {});
  // A [0, 10), B [10, 30), C [30, 35): makespan 35 ps.
  CHECK(tl == Timeline{{0, 10, 30}, Picoseconds(35)});
}

TEST_CASE("engine: two streams of one device overlap", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  TaskGraphBuilder b(1, {Stream::Compute, Stream::TensorComm});
  const TaskId a = issued(b, 0, kCompute, 10, "A");
  const TaskId bb = issued(b, 0, kCompute, 10, "B");
  const TaskId c = issued(b, 0, kComm, 15, "C", {a});
  issued(b, 0, kComm, 5, "D", {bb});
  const TaskGraph g = std::move(b).finish();
  const Timeline tl = engine.run(g, {});
  // Compute: A [0, 10), B [10, 20). Comm: C waits for A, [10, 25) — overlapping B —; D waits for B
  // (done at 20) and for C on its stream (done at 25): [25, 30). Makespan 30.
  CHECK(tl == Timeline{{0, 10, 10, 25}, Picoseconds(30)});
  CHECK(tl.start_ps[c] < tl.start_ps[bb] + 10);  // C runs while B does
}

TEST_CASE("engine: a stream is FIFO — a task ready first still waits for the one issued before it", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  TaskGraphBuilder b(1, {Stream::Compute, Stream::TensorComm});
  const TaskId w = issued(b, 0, kComm, 50, "W");
  const TaskId x = task(b, 0, kCompute, 10, "X", {w});
  const TaskId y = task(b, 0, kCompute, 5, "Y");  // no dependency: ready at 0
  SECTION("X issued before Y") {
    b.enqueue(x);
    b.enqueue(y);
    const TaskGraph g = std::move(b).finish();
    CHECK(g.queues_follow_ids);  // compute runs X (1) then Y (2)
    const Timeline tl = engine.run(g, {});
    // W [0, 50); X waits for W: [50, 60); Y, though ready at 0, is behind X: [60, 65).
    CHECK(tl == Timeline{{0, 50, 60}, Picoseconds(65)});
  }
  SECTION("Y issued before X") {
    b.enqueue(y);
    b.enqueue(x);
    const TaskGraph g = std::move(b).finish();
    CHECK_FALSE(g.queues_follow_ids);  // compute runs Y (2) before X (1)
    const Timeline tl = engine.run(g, {});
    // W [0, 50); Y [0, 5); X [50, 60).
    CHECK(tl == Timeline{{0, 50, 0}, Picoseconds(60)});
  }
}

TEST_CASE("engine: a collective starts when its last member reaches it", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  TaskGraphBuilder b(3, {Stream::Compute, Stream::TensorComm});
  const TaskId f0 = issued(b, 0, kCompute, 10, "F0");
  const TaskId f1 = issued(b, 1, kCompute, 20, "F1");
  const TaskId f2 = issued(b, 2, kCompute, 30, "F2");
  const TaskId p = issued(b, 2, kComm, 40, "P");  // device 2's comm stream is busy until 40
  const TaskId ar = collective(b, {0, 1, 2}, 1e6, "AR", {f0, f1, f2});
  b.enqueue(ar);
  const TaskId q = issued(b, 0, kComm, 3, "Q");
  const TaskId r = issued(b, 1, kCompute, 5, "R", {ar});
  const TaskGraph g = std::move(b).finish();
  // The collective occupies the comm stream of all three members.
  CHECK(g.queue_of(0 * 2 + kComm).size() == 2);
  CHECK(g.queue_of(1 * 2 + kComm).size() == 1);
  CHECK(g.queue_of(2 * 2 + kComm).size() == 2);
  const Timeline tl = engine.run(g, durations({7}));
  // Its dependencies are done at max(10, 20, 30) = 30, but device 2 reaches it on its comm stream
  // only when P ends at 40: AR [40, 47). Q follows it on device 0's comm stream: [47, 50); R depends
  // on it: [47, 52). Makespan 52.
  CHECK(tl.start_ps[ar] == 40);
  CHECK(tl.start_ps[q] == 47);
  CHECK(tl.start_ps[r] == 47);
  CHECK(tl == Timeline{{0, 0, 0, 0, 40, 47, 47}, Picoseconds(52)});
  (void)p;
}

TEST_CASE("engine: a send occupies only the sender's stream", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  TaskGraphBuilder b(2, {Stream::Compute, Stream::Pipeline});
  constexpr std::uint8_t kP2p = 1;
  const TaskId f = issued(b, 0, kCompute, 10, "F");
  const auto pair = b.group(std::vector<std::int64_t>{0, 1});
  const auto send = [&](double bytes) { return b.collective(CollectiveSpec{CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, pair, bytes, 0}); };
  const TaskId s1 = b.add_collective(send(1000), kP2p, Category::PipelineComm, 0, b.label("S1"), std::vector<TaskId>{f});
  b.enqueue(s1);
  const TaskId s2 = b.add_collective(send(2000), kP2p, Category::PipelineComm, 1, b.label("S2"), std::vector<TaskId>{f});
  b.enqueue(s2);
  const TaskId t = issued(b, 1, kP2p, 5, "T");  // the receiver's own p2p stream
  const TaskId g1 = issued(b, 1, kCompute, 10, "G", {s1});
  const TaskGraph g = std::move(b).finish();
  std::int64_t scratch = 0;
  CHECK(g.devices_of(s1, scratch).size() == 1);
  CHECK(g.queue_of(1 * 2 + kP2p).size() == 1);  // T alone: the sends are not in the receiver's queue
  const Timeline tl = engine.run(g, durations({20, 8}));
  // F [0, 10); S1 [10, 30) on device 0's p2p stream; S2 behind it there: [30, 38). T on device 1's
  // p2p stream is not held by S1: [0, 5). G waits for S1 through its dependency: [30, 40). Makespan 40.
  CHECK(tl == Timeline{{0, 10, 30, 0, 30}, Picoseconds(40)});
  (void)t;
  (void)g1;
  (void)s2;
}

TEST_CASE("engine: a deadlock is an InternalError naming a task", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  SECTION("a task issued before its own dependency on the same stream") {
    TaskGraphBuilder b(1, {Stream::Compute});
    const TaskId a = task(b, 0, kCompute, 10, "A");
    const TaskId c = task(b, 0, kCompute, 5, "B", {a});
    b.enqueue(c);
    b.enqueue(a);
    const TaskGraph g = std::move(b).finish();
    // B heads the queue and waits for A, which is behind it: neither starts. The first stuck task by
    // id is A (task 0).
    CHECK_THAT(internal_error_of([&] { (void)engine.run(g, {}); }),
               EndsWith("the task graph deadlocks: task 0 (A, stream compute) never starts; 2 tasks are stuck"));
  }
  SECTION("two collectives issued in opposite orders on their two members") {
    TaskGraphBuilder b(2, {Stream::Compute, Stream::TensorComm});
    const TaskId c1 = collective(b, {0, 1}, 100, "C1");
    const TaskId c2 = collective(b, {0, 1}, 200, "C2");
    b.enqueue_on(c1, 0);
    b.enqueue_on(c2, 0);
    b.enqueue_on(c2, 1);
    b.enqueue_on(c1, 1);
    const TaskGraph g = std::move(b).finish();
    // Device 0 waits in C1 for device 1, which waits in C2 for device 0 (the classic NCCL hang).
    CHECK_THAT(internal_error_of([&] { (void)engine.run(g, durations({1, 1})); }),
               EndsWith("the task graph deadlocks: task 0 (C1, stream comm.tp) never starts; 2 tasks are stuck"));
  }
}

TEST_CASE("engine: equal-time ties give one timeline, whatever the task ids", "[sim][engine]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  // Two independent 10 ps tasks finish together; a zero-length marker joins them; two 5 ps tasks follow
  // it, then a zero-length collective over both devices. Built twice, with the task ids permuted.
  auto build = [](bool swapped) {
    TaskGraphBuilder b(2, {Stream::Compute, Stream::TensorComm});
    TaskId a, bb;
    if (swapped) {
      bb = issued(b, 1, kCompute, 10, "B");
      a = issued(b, 0, kCompute, 10, "A");
    } else {
      a = issued(b, 0, kCompute, 10, "A");
      bb = issued(b, 1, kCompute, 10, "B");
    }
    const TaskId z = issued(b, 0, kComm, 0, "Z", {a, bb});
    TaskId c, d;
    if (swapped) {
      d = issued(b, 1, kCompute, 5, "D", {z});
      c = issued(b, 0, kCompute, 5, "C", {z});
    } else {
      c = issued(b, 0, kCompute, 5, "C", {z});
      d = issued(b, 1, kCompute, 5, "D", {z});
    }
    const TaskId e = collective(b, {0, 1}, 0, "E", {c, d});
    b.enqueue(e);
    return std::move(b).finish();
  };
  auto start_by_label = [](const TaskGraph& g, const Timeline& tl) {
    std::map<std::string, std::int64_t> m;
    for (TaskId t = 0; t < g.task_count(); ++t) m[g.labels[g.label[t]]] = tl.start_ps[t];
    return m;
  };
  const TaskGraph g1 = build(false), g2 = build(true);
  const Timeline t1 = engine.run(g1, durations({0}));
  // A, B [0, 10); Z at 10 (zero length); C, D [10, 15); E at 15 (zero length). Makespan 15.
  const std::map<std::string, std::int64_t> expected{{"A", 0}, {"B", 0}, {"Z", 10}, {"C", 10}, {"D", 10}, {"E", 15}};
  CHECK(start_by_label(g1, t1) == expected);
  CHECK(t1.makespan == Picoseconds(15));
  // The same input gives the same timeline; permuted ids give the same start per task.
  CHECK(engine.run(g1, durations({0})) == t1);
  const Timeline t2 = engine.run(g2, durations({0}));
  CHECK(start_by_label(g2, t2) == expected);
  CHECK(t2.makespan == Picoseconds(15));
}

TEST_CASE("engine: a ring all-reduce simulated alone takes 2(p-1)/p · S/B + 2(p-1)·α", "[sim][engine][collectives]") {
  const Engine engine = GENERATE(kDataflow, kWorklist, kEvents, kInterference);
  INFO(engine.name);
  const std::int64_t p = GENERATE(2, 3, 4, 8);
  // One node of p devices joined by 100 GB/s, 1 µs links whose efficiency is 1 at every size.
  Cluster cluster;
  cluster.nodes = 1;
  cluster.devices_per_node = p;
  for (std::int64_t id = 0; id < p; ++id) cluster.devices.push_back(Device{id, 0, "chip", 1, ""});
  cluster.intra = Link{"wire", 100e9, 1e-6, EfficiencyCurve{{{1.0, 1.0}}}, {}, {}};
  cluster.inter = cluster.intra;
  std::vector<std::int64_t> members;
  for (std::int64_t d = 0; d < p; ++d) members.push_back(d);

  TaskGraphBuilder b(p, {Stream::Compute, Stream::TensorComm});
  const double S = 1e9;
  const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Ring, b.group(members), S, -1});
  b.enqueue(b.add_collective(cid, kComm, Category::GradientComm, -1, b.label("all-reduce"), {}));
  const TaskGraph g = std::move(b).finish();
  const auto estimates = estimate_collectives(g, cluster);
  REQUIRE(estimates.size() == 1);
  CHECK(estimates[0].algorithm == CollectiveAlgorithm::Ring);
  std::vector<Picoseconds> ps{estimates[0].time};
  const Timeline tl = engine.run(g, ps);
  const double pd = static_cast<double>(p);
  // 2(p−1)/p · 1e9 B / 100e9 B/s + 2(p−1) · 1e-6 s; p = 8: 0.0175 + 1.4e-5 = 0.017514 s.
  const double expected = 2 * (pd - 1) / pd * S / 100e9 + 2 * (pd - 1) * 1e-6;
  CHECK_THAT(tl.makespan.seconds(), WithinRel(expected, 1e-9));
  if (p == 8) CHECK_THAT(tl.makespan.seconds(), WithinRel(0.017514, 1e-9));
  CHECK(tl.start_ps == std::vector<std::int64_t>{0});
}

TEST_CASE("engine: both implementations give the same timeline on a random task graph", "[sim][engine]") {
  // 4 devices × 3 streams, 3000 tasks with random durations (0–99 ps, zeros included), up to 3 random
  // earlier dependencies each, one in ten a collective over a random group of 2–4 devices. Every
  // stream issues its tasks in id order and dependencies point to lower ids, so nothing deadlocks.
  const std::uint32_t seed = GENERATE(1u, 2u, 3u);
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TaskGraphBuilder b(4, {Stream::Compute, Stream::TensorComm, Stream::Pipeline});
  std::vector<Picoseconds> coll_ps;
  for (int t = 0; t < 3000; ++t) {
    std::vector<TaskId> deps;
    for (int k = uniform(0, 3); k > 0 && t > 0; --k) deps.push_back(static_cast<TaskId>(uniform(0, t - 1)));
    const auto stream = static_cast<std::uint8_t>(uniform(0, 2));
    if (uniform(0, 9) == 0) {
      std::vector<std::int64_t> members{0, 1, 2, 3};
      std::shuffle(members.begin(), members.end(), rng);
      members.resize(static_cast<std::size_t>(uniform(2, 4)));
      std::sort(members.begin(), members.end());
      const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, b.group(members),
                                                   static_cast<double>(t), -1});
      coll_ps.emplace_back(uniform(0, 99));
      b.enqueue(b.add_collective(cid, stream, Category::TensorComm, -1, b.label("c"), deps));
    } else {
      b.enqueue(b.add(TaskKind::Compute, uniform(0, 3), stream, Picoseconds(uniform(0, 99)), Category::Forward, -1, b.label("t"), deps));
    }
  }
  const TaskGraph g = std::move(b).finish();
  REQUIRE(coll_ps.size() == g.collectives.size());
  REQUIRE(g.queues_follow_ids);
  const Timeline dataflow = simulate_fifo(g, coll_ps);
  const Timeline events = simulate_fifo_events(g, coll_ps);
  CHECK(dataflow == events);
  CHECK(worklist(g, coll_ps) == events);
  CHECK(free_overlap(g, coll_ps) == events);
  // And the timeline is a schedule: every task starts after its dependencies finish.
  std::int64_t early = 0;
  for (TaskId t = 0; t < g.task_count(); ++t)
    for (TaskId d : g.deps_of(t)) early += dataflow.start_ps[t] < dataflow.start_ps[d] + task_duration_ps(g, coll_ps, d);
  CHECK(early == 0);
}

TEST_CASE("task graph: finish_in_id_order lays out the queues that enqueuing every task in id order gives", "[sim][engine]") {
  // The same 3 devices × 2 streams graph twice: compute tasks, a collective over {0, 2} and a send
  // from 1 (which occupies only its sender), once enqueued task by task and once not enqueued at all.
  auto build = [](bool enqueue) {
    TaskGraphBuilder b(3, {Stream::Compute, Stream::TensorComm});
    std::vector<TaskId> made;
    made.push_back(task(b, 0, kCompute, 10, "A"));
    made.push_back(task(b, 2, kCompute, 20, "B"));
    made.push_back(collective(b, {0, 2}, 100, "C", {made[0], made[1]}));
    const auto send = b.collective(CollectiveSpec{CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, b.group(std::vector<std::int64_t>{1, 2}), 8, 1});
    made.push_back(b.add_collective(send, kComm, Category::PipelineComm, 0, b.label("S"), {}));
    made.push_back(task(b, 1, kCompute, 5, "D", {made[3]}));
    made.push_back(task(b, 0, kCompute, 5, "E", {made[2]}));
    if (!enqueue) return std::move(b).finish_in_id_order();
    for (TaskId t : made) b.enqueue(t);
    return std::move(b).finish();
  };
  const TaskGraph laid_out = build(false), enqueued = build(true);
  CHECK(laid_out.queues_follow_ids);
  CHECK(laid_out == enqueued);
  // Device 0: compute A (0), E (5); comm C (2). Device 1: compute D (4); comm S (3). Device 2:
  // compute B (1); comm C (2).
  CHECK(std::vector<TaskId>(laid_out.queue_of(0).begin(), laid_out.queue_of(0).end()) == std::vector<TaskId>{0, 5});
  CHECK(std::vector<TaskId>(laid_out.queue_of(1).begin(), laid_out.queue_of(1).end()) == std::vector<TaskId>{2});
  CHECK(std::vector<TaskId>(laid_out.queue_of(3).begin(), laid_out.queue_of(3).end()) == std::vector<TaskId>{3});
  CHECK(std::vector<TaskId>(laid_out.queue_of(5).begin(), laid_out.queue_of(5).end()) == std::vector<TaskId>{2});
}

TEST_CASE("engine: a step beyond the picosecond clock's range is refused, never wrapped around", "[sim][engine][time-range]") {
  // int64 picoseconds hold 9.2e18 ps = 9.2e6 s. Two tasks of 5e6 s each run back to back would end at
  // 1e7 s: refused before any start or finish is computed (exit 3, PlanError).
  TaskGraphBuilder b(1, {Stream::Compute});
  issued(b, 0, kCompute, 5'000'000'000'000'000'000, "a");
  issued(b, 0, kCompute, 5'000'000'000'000'000'000, "b");
  const TaskGraph g = std::move(b).finish();
  for (auto run : {+[](const TaskGraph& graph) { (void)simulate_fifo(graph, {}); }, +[](const TaskGraph& graph) { (void)simulate_fifo_events(graph, {}); }}) {
    try {
      run(g);
      FAIL("no error");
    } catch (const PlanError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Matchers::StartsWith("the step's tasks run one after another: 1e+07 s of simulated time, "
                                                                     "beyond the 9.2e6 s (106 days) that parasim's picosecond clock holds"));
    }
  }
  // One of them alone (5e6 s) is within range and simulated exactly.
  TaskGraphBuilder one(1, {Stream::Compute});
  issued(one, 0, kCompute, 5'000'000'000'000'000'000, "a");
  CHECK(simulate_fifo(std::move(one).finish(), {}).makespan.count == 5'000'000'000'000'000'000);
  // A duration in seconds beyond the range, or not finite, is refused where it is converted.
  CHECK_THROWS_AS(Picoseconds::from_seconds(1e7), PlanError);
  CHECK_THROWS_AS(Picoseconds::from_seconds(std::numeric_limits<double>::infinity()), PlanError);
  CHECK_THROWS_AS(Picoseconds::from_seconds(std::nan("")), PlanError);
  CHECK(Picoseconds::from_seconds(9e6).count == 9'000'000'000'000'000'000);
}
