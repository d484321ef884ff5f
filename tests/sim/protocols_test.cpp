// NCCL's protocols (sim/profile.hpp, Protocol): a ring or tree collective is priced under each
// protocol its links list — base latency + hops × the protocol's hop latency + bytes / (bandwidth ×
// its share) — and runs under the least, as NCCL's tuner does (src/graph/tuning.cc); both backends.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "test_clusters.hpp"

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

/// switched(2, 4) (100 GB/s, 1 µs ports; a 10 GB/s, 5 µs NIC per device) whose links list two of
/// NCCL's protocols with its ring figures: LL (hop 0.6 µs over NVLink, 2.7 µs over the network, half
/// the bandwidth, 6.6 µs base) and Simple (3.4 and 14 µs, all of it, 8.4 µs base).
Cluster with_protocols() {
  Cluster c = parasim::testing::switched(2, 4);
  c.intra.protocols = {Protocol{"ll", 0.6e-6, 0.5, 6.6e-6}, Protocol{"simple", 3.4e-6, 1.0, 8.4e-6}};
  c.inter.protocols = {Protocol{"ll", 2.7e-6, 0.5, 6.6e-6}, Protocol{"simple", 14e-6, 1.0, 8.4e-6}};
  return c;
}

std::vector<std::int64_t> eight() { return {0, 1, 2, 3, 4, 5, 6, 7}; }

/// The time of one collective alone on `cluster` under `backend`.
double alone(const Cluster& cluster, CollectiveKind kind, double bytes, CollectiveAlgorithm algorithm, Backend backend) {
  TaskGraphBuilder b(cluster.device_count(), {Stream::Compute, Stream::DataComm});
  const auto cid = b.collective(CollectiveSpec{kind, algorithm, b.group(eight()), bytes, -1});
  b.enqueue(b.add_collective(cid, 1, Category::GradientComm, -1, b.label("c"), {}));
  const TaskGraph g = std::move(b).finish();
  const auto estimates = estimate_collectives(g, cluster);
  if (backend == Backend::Analytical) return simulate_fifo(g, std::vector<Picoseconds>{estimates[0].time}).makespan.seconds();
  const std::vector<double> speeds(static_cast<std::size_t>(cluster.device_count()), 1e12);
  return simulate_simgrid(g, cluster, collective_flows_of(g, cluster, estimates), speeds).timeline.makespan.seconds();
}

}  // namespace

TEST_CASE("protocols: a small ring all-gather runs LL, a large one Simple, on both backends", "[sim][collectives][protocols][simgrid]") {
  const Backend backend = GENERATE(Backend::Analytical, Backend::SimGrid);
  INFO(to_string(backend));
  const Cluster c = with_protocols();
  // The ring over 2 nodes of 4: B = min(4/3 · 100e9, 4 · 10e9) = 40e9 B/s. An all-gather takes
  // p − 1 = 7 steps, n − 1 = 1 of them between nodes, 6 inside.
  // 8 KiB: 7/8 · 8192 = 7168 B sent. LL: 6.6 + 6 · 0.6 + 2.7 = 12.9 µs + 7168 / 20e9 = 0.3584 µs →
  // 13.2584 µs; Simple: 8.4 + 6 · 3.4 + 14 = 42.8 µs + 7168 / 40e9 = 0.1792 µs → 42.9792 µs. LL.
  CHECK_THAT(alone(c, CollectiveKind::AllGather, 8192, CollectiveAlgorithm::Ring, backend), WithinRel(13.2584e-6, 1e-6));
  // 1 GB: 0.875e9 B sent. LL: 12.9 µs + 0.875e9 / 20e9 = 43.7629 ms; Simple: 42.8 µs + 21.875 ms =
  // 21.9178 ms. Simple.
  CHECK_THAT(alone(c, CollectiveKind::AllGather, 1e9, CollectiveAlgorithm::Ring, backend), WithinRel(0.0219178, 1e-6));
}

TEST_CASE("protocols: NCCL's tree latency counts the chain inside each node and the tree's depth between them", "[sim][collectives][protocols]") {
  const Cluster c = with_protocols();
  // Tree all-reduce over 2 nodes of 4: 2 · ((4 − 1) chain hops + ⌈log2 2⌉ = 1 tree hop), under LL:
  // 6.6 + 2 · (3 · 0.6 + 2.7) = 15.6 µs; the tree moves 2S at B = min(100e9, 4 · 10e9) = 40e9, at
  // half of it under LL. 4 KiB: 15.6 µs + 8192 / 20e9 = 0.4096 µs → 16.0096 µs (Simple: 8.4 +
  // 2 · (3 · 3.4 + 14) = 56.8 µs + 0.2048 → 57.0048 µs).
  CHECK_THAT(collective_time(c, CollectiveKind::AllReduce, eight(), 4096, CollectiveAlgorithm::Tree).time.seconds(), WithinRel(16.0096e-6, 1e-9));
  // Without protocols (a hand-built cluster's α per step): 2 · ⌈log2 8⌉ · 5 µs + 8192 / 40e9 = 30.2048 µs.
  CHECK_THAT(collective_time(parasim::testing::switched(2, 4), CollectiveKind::AllReduce, eight(), 4096, CollectiveAlgorithm::Tree).time.seconds(),
             WithinRel(30.2048e-6, 1e-9));
}
