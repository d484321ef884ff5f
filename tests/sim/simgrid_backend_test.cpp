// The simgrid backend against the analytical one and against closed forms derived by hand: lone
// collectives on idle networks, contention on shared links, an oversubscribed fat-tree, a torus.
// Every cluster is small (at most 64 devices) and every link's efficiency is 1 at every size, so the
// closed forms of sim/collectives/ hold exactly; the derivations sit above each check.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "test_clusters.hpp"

#include "common/progress_sink.hpp"
#include "sim/collectives.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/engine/simgrid_engine.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "sim/task_graph.hpp"

using namespace parasim;
using namespace parasim::sim;
using Catch::Matchers::WithinRel;

namespace {

using parasim::testing::flat;
using parasim::testing::switched;
using parasim::testing::torus;
std::vector<std::int64_t> iota(std::int64_t n, std::int64_t first = 0) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

/// One collective to run, alone or beside others (each on its own stream, all issued at time 0).
struct Op {
  CollectiveKind kind;
  std::vector<std::int64_t> group;
  double bytes;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  std::int64_t root = -1;
};

/// The makespan, in seconds, of `ops` started together on `cluster` under `backend`.
double run(const Cluster& cluster, const std::vector<Op>& ops, Backend backend) {
  // One communication stream per op, so that the ops start together.
  std::vector<Stream> streams{Stream::Compute};
  for (std::size_t i = 0; i < ops.size(); ++i) streams.push_back(Stream::TensorComm);
  TaskGraphBuilder b(cluster.device_count(), streams);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const auto cid = b.collective(CollectiveSpec{op.kind, op.algorithm, b.group(op.group), op.bytes, op.root});
    b.enqueue(b.add_collective(cid, static_cast<std::uint8_t>(i + 1), Category::GradientComm, -1, b.label("op" + std::to_string(i)), {}));
  }
  const TaskGraph g = std::move(b).finish();
  const std::vector<CollectiveEstimate> estimates = estimate_collectives(g, cluster);
  if (backend == Backend::Analytical) {
    std::vector<Picoseconds> ps;
    for (const auto& e : estimates) ps.push_back(e.time);
    return simulate_fifo(g, ps).makespan.seconds();
  }
  const std::vector<CollectiveFlows> flows = collective_flows_of(g, cluster, estimates);
  const std::vector<double> speeds(static_cast<std::size_t>(cluster.device_count()), 1e12);
  return simulate_simgrid(g, cluster, flows, speeds).timeline.makespan.seconds();
}

double lone(const Cluster& cluster, const Op& op, Backend backend) { return run(cluster, {op}, backend); }

/// The analytical backend reproduces the closed form to the picosecond; the simgrid backend within 2%.
double tolerance(Backend b) { return b == Backend::Analytical ? 1e-9 : 0.02; }

}  // namespace

TEST_CASE("both backends: a lone collective on an idle network takes its closed form", "[sim][simgrid][collectives]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  struct Case {
    const char* name;
    Op op;
    double expected_s;
  };
  // Closed forms on switched(2, 4): B_intra = 100 GB/s, α_intra = 1 µs; one 10 GB/s, 5 µs NIC per
  // device; p = 8, S = 1 GB (tests/sim/collectives_test.cpp derives the same figures).
  const Case c = GENERATE(
      // Ring across 2 nodes: B = min(100e9, 4 · 10e9) = 40e9, α = 5 µs:
      // 2·7/8 · 1e9 / 40e9 + 2·7 · 5e-6 = 0.04375 + 0.00007 = 0.04382 s.
      Case{"ring all-reduce", Op{CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Ring}, 0.04382},
      // Hierarchical: intra reduce-scatter 3/4 · 1e9 / 100e9 + 3 · 1e-6 = 0.007503, inter all-reduce
      // of S/4 over 2 nodes 2 · 1/2 · 2.5e8 / 10e9 + 2 · 5e-6 = 0.02501, intra all-gather 0.007503:
      // 0.040016 s.
      Case{"hierarchical all-reduce", Op{CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Hierarchical}, 0.040016},
      // Ring all-gather and reduce-scatter: (p−1)/p · S/B + (p−1)·α = 7/8 · 1e9 / 40e9 + 7 · 5e-6 = 0.021910 s.
      Case{"ring all-gather", Op{CollectiveKind::AllGather, iota(8), 1e9, CollectiveAlgorithm::Ring}, 0.02191},
      Case{"ring reduce-scatter", Op{CollectiveKind::ReduceScatter, iota(8), 1e9, CollectiveAlgorithm::Ring}, 0.02191},
      // Direct all-to-all: each device sends S/8 to each of 4 peers in the other node over its NIC,
      // 4 · 1.25e8 / 10e9 = 0.05 s, plus 4 · 5e-6 of latency: 0.05002 s (its 3 in-node messages,
      // 0.00375 s, run beside).
      Case{"all-to-all", Op{CollectiveKind::AllToAll, iota(8), 1e9, CollectiveAlgorithm::Direct}, 0.05002},
      // Point-to-point across nodes, 1e8 B: 1e8 / 10e9 + 5e-6 = 0.010005 s.
      Case{"send-recv", Op{CollectiveKind::SendRecv, {1, 6}, 1e8, CollectiveAlgorithm::Direct, 6}, 0.010005});
  INFO(c.name << " under " << to_string(backend));
  CHECK_THAT(lone(switched(2, 4), c.op, backend), WithinRel(c.expected_s, tolerance(backend)));
}

TEST_CASE("both backends: a lone in-network reduction on an idle network takes its closed form", "[sim][simgrid][collectives][nvls]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  // switched_sharp: in-switch all-reduce at 100 GB/s and 2 µs (tests/sim/nvls_test.cpp derives these).
  // NVLS over one node of 8: 2 µs + 9/8 · 1e9 / 100e9 = 0.011252 s.
  CHECK_THAT(lone(parasim::testing::switched_sharp(1, 8), Op{CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Nvls}, backend),
             WithinRel(0.011252, tolerance(backend)));
  // NVLS-tree over 4 nodes of 4: 22 µs + max(0.0125, 0.05) = 0.050022 s.
  CHECK_THAT(lone(parasim::testing::switched_sharp(4, 4), Op{CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::NvlsTree}, backend),
             WithinRel(0.050022, tolerance(backend)));
  // CollNet over 4 nodes of 4: max(0.015, 0.025) + 16 µs = 0.025016 s.
  CHECK_THAT(lone(parasim::testing::switched_sharp(4, 4), Op{CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::CollNet}, backend),
             WithinRel(0.025016, tolerance(backend)));
}

TEST_CASE("contention: two all-reduces through the same links take twice as long under simgrid", "[sim][simgrid][contention]") {
  // Two ring all-reduces of S = 1 GB over the same 8 devices of one node, on two streams, issued at
  // once: every device port carries both rings. Alone one takes W + L with W = 2·7/8 · S/B =
  // 0.0175 s and L = 2·7·α = 14 µs (0.017514 s). Sharing each port max-min fairly, each ring moves
  // at B/2: both end at L + 2W = 0.035014 s, 1.9992 × one alone. The analytical backend gives each
  // collective its links whole (it does not model contention, sim/links.hpp): both end at W + L.
  const Cluster c = switched(1, 8);
  const Op ring{CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Ring};
  const double alone = lone(c, ring, Backend::SimGrid);
  CHECK_THAT(alone, WithinRel(0.017514, 0.02));
  CHECK_THAT(run(c, {ring, ring}, Backend::SimGrid), WithinRel(0.035014, 0.02));
  CHECK_THAT(run(c, {ring, ring}, Backend::SimGrid) / alone, WithinRel(2.0, 0.02));
  CHECK_THAT(run(c, {ring, ring}, Backend::Analytical), WithinRel(0.017514, 1e-9));
  // Two rings on disjoint devices (0–3 and 4–7) share no link: no slowdown under either backend.
  // Each: 2·3/4 · 1e9 / 100e9 + 2·3 · 1e-6 = 0.015006 s.
  const Op left{CollectiveKind::AllReduce, iota(4), 1e9, CollectiveAlgorithm::Ring};
  const Op right{CollectiveKind::AllReduce, iota(4, 4), 1e9, CollectiveAlgorithm::Ring};
  CHECK_THAT(run(c, {left, right}, Backend::SimGrid), WithinRel(0.015006, 0.02));
}

TEST_CASE("2:1 oversubscribed fat-tree: all-to-all across leaves slows by 22/12, a ring all-reduce not at all", "[sim][simgrid][fat-tree]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  // 4 nodes × 4 devices, one 10 GB/s NIC per device, rail-optimised, 2 nodes per leaf: 8 leaves
  // (2 node pairs × 4 rails), each with 2 NIC ports and an uplink of 2 · 10e9 / oversubscription.
  const Cluster nonblocking = switched(4, 4, 1, 2);
  const Cluster oversubscribed = switched(4, 4, 2, 2);

  // All-to-all of S = 1 GB over the 16 devices: S/16 = 6.25e7 B to each peer. A device sends 12
  // messages out of its node over its NIC: 7.5e8 B / 10e9 = 0.075 s. A leaf (pair g, rail r) holds
  // the NICs of two devices; of the 12 messages each sends off-node, 1 goes to the other node of the
  // pair on the same rail (same leaf) and 11 cross the leaf's uplink: 22 · 6.25e7 = 1.375e9 B.
  //   non-blocking: uplink 20e9 → 0.06875 s < the NIC's 0.075 s: the NIC sets the pace;
  //   2:1:          uplink 10e9 → 0.1375 s, the slowest link.
  // Latency: max(3 · α_intra, 12 · α_inter) = 60 µs. So 0.07506 s and 0.13756 s, a ratio of 1.8326
  // (22/12 on the bandwidth term: about 2×, not quite, because 1 message in 12 stays on its leaf).
  const Op a2a{CollectiveKind::AllToAll, iota(16), 1e9, CollectiveAlgorithm::Direct};
  const double a2a_nb = lone(nonblocking, a2a, backend);
  const double a2a_os = lone(oversubscribed, a2a, backend);
  CHECK_THAT(a2a_nb, WithinRel(0.07506, tolerance(backend)));
  CHECK_THAT(a2a_os, WithinRel(0.13756, tolerance(backend)));
  CHECK_THAT(a2a_os / a2a_nb, WithinRel(0.13756 / 0.07506, 0.02));

  // Ring all-reduce over the 16 devices: 4 channels (one per rail), B = min(100e9, 4 · 10e9) = 40e9,
  // α = 5 µs: 2·15/16 · 1e9 / 40e9 + 2·15 · 5e-6 = 0.046875 + 0.00015 = 0.047025 s. Channel r leaves
  // each leaf of rail r once and enters it once, at most 10 GB/s (its NIC), and the 2:1 uplink holds
  // 10 GB/s: not slowed.
  const Op ring{CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::Ring};
  CHECK_THAT(lone(nonblocking, ring, backend), WithinRel(0.047025, tolerance(backend)));
  CHECK_THAT(lone(oversubscribed, ring, backend), WithinRel(0.047025, tolerance(backend)));
}

TEST_CASE("4x4x4 torus: per-dimension rings give the closed form, all-to-all is bisection-bound", "[sim][simgrid][torus]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  const Cluster c = torus({4, 4, 4});
  // All-reduce by per-dimension bidirectional rings: 2(p−1)/p · S/(2B) + 2 · Σ(g_i − 1) · α
  // = 2 · 63/64 · 1e9 / 100e9 + 2 · 9 · 1e-6 = 0.0196875 + 0.000018 = 0.0197055 s.
  CHECK_THAT(lone(c, Op{CollectiveKind::AllReduce, iota(64), 1e9, CollectiveAlgorithm::TorusRings}, backend),
             WithinRel(0.0197055, tolerance(backend)));

  // All-to-all of S = 1 GB: cut the torus across one dimension of 4 into halves of 32 chips; 32 · 32
  // messages of S/64 = 1.5625e7 B, 1.6e10 B, cross the cut each way, over two cut planes (wraparound)
  // of 16 links each: 1.6e10 / (32 · 50e9) = 0.01 s. (Dimension-ordered
  // routing loads every link alike: each + link of a ring of 4 carries 2 of its 12 (src, dst) x-pairs,
  // 32 messages of S/64 = S/2 = 5e8 B, 0.01 s.) Latency Σ(g_i − 1) · α = 9 µs: 0.010009 s.
  const double torus_a2a = lone(c, Op{CollectiveKind::AllToAll, iota(64), 1e9, CollectiveAlgorithm::Direct}, backend);
  CHECK_THAT(torus_a2a, WithinRel(0.010009, tolerance(backend)));

  // A non-blocking switch with the same per-link bandwidth as the chip injects: each of the 64 chips
  // on a 6 · 50 GB/s = 300 GB/s port (the 6 torus links of a chip, one per dimension and direction),
  // 1 µs. All-to-all: 63/64 · 1e9 / 300e9 + 63 · 1e-6 = 0.0032813 + 0.000063 = 0.0033443 s. The
  // torus is slower by the bisection over the injection bound: (S·g_max/(8B)) / (S·63/64/(6B)) =
  // (4/8) · 6 · 64/63 = 3.048 on the bandwidth term, 0.010009 / 0.0033443 = 2.993 with latencies.
  Cluster star;
  star.nodes = 1;
  star.devices_per_node = 64;
  for (std::int64_t id = 0; id < 64; ++id) star.devices.push_back(Device{id, 0, "chip", 1, ""});
  star.intra = flat("port", 300e9, 1e-6);
  star.inter = star.intra;
  star.nics_per_node = 64;
  const double star_a2a = lone(star, Op{CollectiveKind::AllToAll, iota(64), 1e9, CollectiveAlgorithm::Direct}, backend);
  CHECK_THAT(star_a2a, WithinRel(63.0 / 64 * 1e9 / 300e9 + 63e-6, tolerance(backend)));
  CHECK_THAT(torus_a2a / star_a2a, WithinRel(0.010009 / (63.0 / 64 * 1e9 / 300e9 + 63e-6), 0.02));
}

TEST_CASE("the scenario's algorithm choice wins over auto, and both backends run the chosen algorithm", "[sim][simgrid][collectives]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  // An all-reduce of 1 GB over 2 nodes × 4 asks for Auto. Auto picks the least predicted time:
  // hierarchical, 0.040016 s, against ring 0.04382 s and tree 0.05003 s (tests/sim/collectives_test.cpp).
  Cluster c = switched(2, 4);
  TaskGraphBuilder b(8, {Stream::Compute, Stream::TensorComm});
  b.enqueue(b.add_collective(b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, b.group(iota(8)), 1e9, -1}), 1,
                             Category::GradientComm, -1, b.label("ar"), {}));
  const TaskGraph g = std::move(b).finish();
  CHECK(estimate_collectives(g, c).at(0).algorithm == CollectiveAlgorithm::Hierarchical);
  CHECK_THAT(lone(c, Op{CollectiveKind::AllReduce, iota(8), 1e9}, backend), WithinRel(0.040016, tolerance(backend)));
  // cluster.algorithms.all_reduce = ring: the ring's 0.04382 s, under either backend.
  c.algorithms.all_reduce = CollectiveAlgorithm::Ring;
  CHECK(estimate_collectives(g, c).at(0).algorithm == CollectiveAlgorithm::Ring);
  CHECK_THAT(lone(c, Op{CollectiveKind::AllReduce, iota(8), 1e9}, backend), WithinRel(0.04382, tolerance(backend)));
}

namespace {

/// The counts a progress sink heard, in order.
struct HeardProgress final : ProgressSink {
  std::vector<std::size_t> updates;
  void begin(std::string_view, std::size_t) override {}
  void update(std::size_t done) override { updates.push_back(done); }
  void end() override {}
};

}  // namespace

TEST_CASE("simgrid: a long run reports how many tasks have finished while it runs", "[sim][simgrid][progress]") {
  // Issue 19, fault 12: a SimGrid run printed nothing between its start and its end. 400,000
  // all-reduces of 4 KiB between two devices, one after another: SimGrid simulates each as flows,
  // so the run lasts past several of the parent's 0.2 s ticks (about 1.2 s here; longer under the
  // sanitizers), and the child counts its finished tasks every 4,096.
  const Cluster cluster = switched(1, 2);
  TaskGraphBuilder b(2, {Stream::Compute, Stream::TensorComm});
  const std::vector<std::int64_t> pair{0, 1};
  const auto group = b.group(pair);
  const auto label = b.label("all-reduce");
  constexpr int kTasks = 400000;
  std::vector<TaskId> previous;
  for (int i = 0; i < kTasks; ++i) {
    const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, group, 4096.0, -1});
    const TaskId t = b.add_collective(cid, 1, Category::GradientComm, -1, label, previous);
    b.enqueue(t);
    previous = {t};
  }
  const TaskGraph g = std::move(b).finish();
  const std::vector<CollectiveEstimate> estimates = estimate_collectives(g, cluster);
  const std::vector<CollectiveFlows> flows = collective_flows_of(g, cluster, estimates);
  const std::vector<double> speeds(2, 1e12);
  HeardProgress heard;
  const SimGridRun run = simulate_simgrid(g, cluster, flows, speeds, {}, &heard);
  CHECK(run.timeline.makespan.count > 0);
  REQUIRE_FALSE(heard.updates.empty());
  CHECK(std::is_sorted(heard.updates.begin(), heard.updates.end()));
  CHECK(heard.updates.back() <= static_cast<std::size_t>(kTasks));
  // The counts come in steps of 4,096 finished tasks.
  for (const std::size_t n : heard.updates) CHECK(n % 4096 == 0);
}
