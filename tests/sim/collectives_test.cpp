#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "test_clusters.hpp"

#include "sim/collectives.hpp"

using namespace parasim::sim;
using Catch::Matchers::WithinRel;

namespace {

using parasim::testing::flat;
using parasim::testing::switched;
using parasim::testing::torus;

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

double seconds(const Cluster& c, CollectiveKind k, const std::vector<std::int64_t>& g, double bytes, CollectiveAlgorithm a) {
  const auto e = collective_time(c, k, g, bytes, a);
  INFO("algorithm used: " << to_string(e.algorithm));
  CHECK(e.algorithm == a);
  return e.time.seconds();
}

}  // namespace

TEST_CASE("ring all-reduce: 2(p-1)/p · S/B + 2(p-1)·α", "[sim][collectives]") {
  const Cluster c = switched(1, 8);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Ring);
  CHECK(e.algorithm == CollectiveAlgorithm::Ring);
  // 2·7/8 · 1e9 / 100e9 + 2·7 · 1e-6 = 0.0175 + 0.000014 = 0.017514 s.
  CHECK_THAT(e.time.seconds(), WithinRel(0.017514, 1e-12));
  // Each device sends 2·7/8 · 1e9 = 1.75e9 bytes, all inside the node.
  CHECK(e.intra_bytes_per_device == 1.75e9);
  CHECK(e.inter_bytes_per_device == 0);
}

TEST_CASE("ring reduce-scatter and all-gather: (p-1)/p · S/B + (p-1)·α", "[sim][collectives]") {
  const auto kind = GENERATE(CollectiveKind::ReduceScatter, CollectiveKind::AllGather);
  // 7/8 · 1e9 / 100e9 + 7 · 1e-6 = 0.00875 + 0.000007 = 0.008757 s.
  CHECK_THAT(seconds(switched(1, 8), kind, iota(8), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.008757, 1e-12));
}

// A link with an all-gather curve of its own (calibrate --backend mpi measures one): the all-gather
// takes it, the other kinds keep the link's curve (1 on the test link).
TEST_CASE("a collective kind's own curve prices that kind only", "[sim][collectives]") {
  Cluster c = switched(1, 8);
  c.intra.collective_efficiency[CollectiveKind::AllGather] = EfficiencyCurve{{{1, 0.5}}};
  // 7/8 · 1e9 / (100e9 · 0.5) + 7 · 1e-6 = 0.0175 + 0.000007 = 0.017507 s.
  CHECK_THAT(seconds(c, CollectiveKind::AllGather, iota(8), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.017507, 1e-12));
  CHECK_THAT(seconds(c, CollectiveKind::ReduceScatter, iota(8), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.008757, 1e-12));
  CHECK_THAT(seconds(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.017514, 1e-12));
  // The flows SimGrid runs carry the same curve: alone on the links, the same time.
  CHECK_THAT(uncontended_seconds(c, collective_flows(c, CollectiveKind::AllGather, iota(8), 1e9, CollectiveAlgorithm::Ring)),
             WithinRel(0.017507, 1e-9));
}

TEST_CASE("ring across nodes: B = min(B_intra, k · B_inter per device), α of the slowest link", "[sim][collectives]") {
  const Cluster c = switched(2, 4);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Ring);
  // B = min(100e9, 4 · 10e9) = 40e9; α = max(1, 5) µs.
  // 2·7/8 · 1e9 / 40e9 + 14 · 5e-6 = 0.04375 + 0.00007 = 0.04382 s.
  CHECK_THAT(e.time.seconds(), WithinRel(0.04382, 1e-12));
  // 1.75e9 bytes sent per device; the ring crosses n = 2 of its 8 edges between nodes: 1.75e9 · 2/8.
  CHECK(e.inter_bytes_per_device == 1.75e9 * 2 / 8);
  CHECK(e.intra_bytes_per_device == 1.75e9 * 6 / 8);
}

TEST_CASE("ring broadcast: S/B + (p-1)·α", "[sim][collectives]") {
  // 1e9 / 100e9 + 7 · 1e-6 = 0.01 + 0.000007 = 0.010007 s.
  CHECK_THAT(seconds(switched(1, 8), CollectiveKind::Broadcast, iota(8), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.010007, 1e-12));
}

TEST_CASE("tree all-reduce: 2·S/B + 2·ceil(log2 p)·α", "[sim][collectives]") {
  // 2 · 1e9 / 40e9 + 2 · 3 · 5e-6 = 0.05 + 0.00003 = 0.05003 s.
  CHECK_THAT(seconds(switched(2, 4), CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Tree), WithinRel(0.05003, 1e-12));
}

TEST_CASE("hierarchical on 2 nodes x 4: intra reduce-scatter, inter all-reduce of S/k, intra all-gather", "[sim][collectives]") {
  const Cluster c = switched(2, 4);
  SECTION("all-reduce") {
    const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Hierarchical);
    CHECK(e.algorithm == CollectiveAlgorithm::Hierarchical);
    // intra half: 3/4 · 1e9 / 100e9 + 3 · 1e-6 = 0.0075 + 0.000003 = 0.007503;
    // inter: 2 · 1/2 · (1e9/4) / 10e9 + 2 · 1 · 5e-6 = 0.025 + 0.00001 = 0.02501;
    // total 2 · 0.007503 + 0.02501 = 0.040016 s.
    CHECK_THAT(e.time.seconds(), WithinRel(0.040016, 1e-12));
    // intra 2 · 3/4 · 1e9 = 1.5e9; inter 2 · 1/2 · 1e9/4 = 2.5e8.
    CHECK(e.intra_bytes_per_device == 1.5e9);
    CHECK(e.inter_bytes_per_device == 2.5e8);
  }
  SECTION("reduce-scatter and all-gather are one half") {
    const auto kind = GENERATE(CollectiveKind::ReduceScatter, CollectiveKind::AllGather);
    // 0.007503 + (1/2 · 2.5e8 / 10e9 + 5e-6) = 0.007503 + 0.012505 = 0.020008 s.
    CHECK_THAT(seconds(c, kind, iota(8), 1e9, CollectiveAlgorithm::Hierarchical), WithinRel(0.020008, 1e-12));
  }
}

TEST_CASE("send-recv: S/B + α over the link between the two devices", "[sim][collectives]") {
  const Cluster c = switched(2, 4);
  // Same node: 1e8 / 100e9 + 1e-6 = 0.001001 s.
  const auto near = collective_time(c, CollectiveKind::SendRecv, std::vector<std::int64_t>{1, 2}, 1e8);
  CHECK(near.algorithm == CollectiveAlgorithm::Direct);
  CHECK_THAT(near.time.seconds(), WithinRel(0.001001, 1e-12));
  CHECK(near.intra_bytes_per_device == 1e8);
  // Across nodes, on the sender's NIC share: 1e8 / 10e9 + 5e-6 = 0.010005 s; either order.
  CHECK_THAT(collective_time(c, CollectiveKind::SendRecv, std::vector<std::int64_t>{6, 1}, 1e8).time.seconds(), WithinRel(0.010005, 1e-12));
  // On a 4x4x4 torus from (0,0,0) to (2,3,0) — device 2 + 4·3 = 14 — is 2 + 1 = 3 hops with
  // wraparound: 1e8 / 50e9 + 3 · 1e-6 = 0.002003 s.
  CHECK_THAT(collective_time(torus({4, 4, 4}), CollectiveKind::SendRecv, std::vector<std::int64_t>{0, 14}, 1e8).time.seconds(),
             WithinRel(0.002003, 1e-12));
}

TEST_CASE("all-to-all: intra and inter parts at once, the inter part slowed by oversubscription", "[sim][collectives]") {
  // p = 8 on 2 nodes × 4; each device sends S/p = 1.25e8 to each peer, 3 in its node, 4 outside.
  // intra: 3 · 1.25e8 / 100e9 + 3 · 1e-6 = 0.003753 s.
  SECTION("non-blocking") {
    const auto e = collective_time(switched(2, 4), CollectiveKind::AllToAll, iota(8), 1e9);
    CHECK(e.algorithm == CollectiveAlgorithm::Direct);
    // inter: 4 · 1.25e8 / 10e9 + 4 · 5e-6 = 0.05002 s, the slower part.
    CHECK_THAT(e.time.seconds(), WithinRel(0.05002, 1e-12));
    CHECK(e.intra_bytes_per_device == 3 * 1.25e8);
    CHECK(e.inter_bytes_per_device == 4 * 1.25e8);
  }
  SECTION("2:1 oversubscribed fat-tree") {
    // inter: 4 · 1.25e8 / (10e9 / 2) + 4 · 5e-6 = 0.10002 s.
    CHECK_THAT(collective_time(switched(2, 4, 2), CollectiveKind::AllToAll, iota(8), 1e9).time.seconds(), WithinRel(0.10002, 1e-12));
  }
  SECTION("4x4x4 torus: bisection-bound") {
    // Bisection: S · g_max / (4 · 2 · B) = 1e9 · 4 / (8 · 50e9) = 0.01 s; injection 1e9 · 63/64 / (6 · 50e9)
    // = 0.00328 s is less. Latency 3 · (4 − 1) · 1e-6. Total 0.010009 s.
    CHECK_THAT(collective_time(torus({4, 4, 4}), CollectiveKind::AllToAll, iota(64), 1e9).time.seconds(), WithinRel(0.010009, 1e-12));
  }
}

TEST_CASE("torus rings on 4x4x4: per-dimension bidirectional rings", "[sim][collectives]") {
  const Cluster c = torus({4, 4, 4});
  SECTION("all-reduce of the whole torus") {
    const auto e = collective_time(c, CollectiveKind::AllReduce, iota(64), 1e9, CollectiveAlgorithm::TorusRings);
    CHECK(e.algorithm == CollectiveAlgorithm::TorusRings);
    // 2(p−1)/p · S/(2B) + 2 · Σ(g_i − 1) · α = 2 · 63/64 · 1e9 / 100e9 + 2 · 9 · 1e-6 = 0.0196875 + 0.000018.
    CHECK_THAT(e.time.seconds(), WithinRel(0.0197055, 1e-12));
    CHECK(e.inter_bytes_per_device == 2 * 63.0 / 64 * 1e9);
  }
  SECTION("reduce-scatter is one half") {
    // 63/64 · 1e9 / 100e9 + 9 · 1e-6 = 0.00984375 + 0.000009.
    CHECK_THAT(seconds(c, CollectiveKind::ReduceScatter, iota(64), 1e9, CollectiveAlgorithm::TorusRings), WithinRel(0.00985275, 1e-12));
  }
  SECTION("a 4x4 plane (z = 0) of the torus") {
    // Two full dims of 4, both bidirectional: 2 · 15/16 · 1e9 / 100e9 + 2 · 6 · 1e-6 = 0.01875 + 0.000012.
    CHECK_THAT(seconds(c, CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::TorusRings), WithinRel(0.018762, 1e-12));
  }
  SECTION("a line of 2 along x is not a full ring: one direction") {
    // Devices 0 and 1: 1/2 · 1e9 / 50e9 + 1e-6, twice: 0.02 + 0.000002.
    CHECK_THAT(seconds(c, CollectiveKind::AllReduce, std::vector<std::int64_t>{0, 1}, 1e9, CollectiveAlgorithm::TorusRings),
               WithinRel(0.020002, 1e-12));
  }
  SECTION("the plain ring embedded in the torus uses one link direction") {
    // 2 · 63/64 · 1e9 / 50e9 + 2 · 63 · 1e-6 = 0.039375 + 0.000126.
    CHECK_THAT(seconds(c, CollectiveKind::AllReduce, iota(64), 1e9, CollectiveAlgorithm::Ring), WithinRel(0.039501, 1e-12));
  }
}

TEST_CASE("Auto picks the algorithm with the least predicted time", "[sim][collectives]") {
  const Cluster c = GENERATE(switched(2, 4), switched(1, 8), switched(8, 1), torus({4, 4, 4}));
  const auto kind = GENERATE(CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather, CollectiveKind::Broadcast);
  const double bytes = GENERATE(1e3, 1e6, 1e9);
  const auto group = iota(8);
  const auto chosen = collective_time(c, kind, group, bytes);
  INFO(to_string(kind) << " of " << bytes << " bytes: auto chose " << to_string(chosen.algorithm));
  CHECK(chosen.algorithm != CollectiveAlgorithm::Auto);
  bool matched = false;
  for (auto a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::TorusRings}) {
    const auto e = collective_time(c, kind, group, bytes, a);
    if (e.algorithm != a) continue;  // does not apply here
    CHECK(chosen.time <= e.time);
    matched = matched || (a == chosen.algorithm && e == chosen);
  }
  CHECK(matched);
}

TEST_CASE("Auto on 2 nodes x 4: tree for small messages, hierarchical for large ones", "[sim][collectives]") {
  const Cluster c = switched(2, 4);
  // 1 kB: ring 14 · 5 µs = 70 µs of latency; tree 2 · 3 · 5 µs = 30 µs; hierarchical 2·3·1 + 2·5 = 16 µs
  // (+ bandwidth terms under 0.2 µs): hierarchical.
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(8), 1e3).algorithm == CollectiveAlgorithm::Hierarchical);
  // Same node, 8 ranks, 1 kB: ring 14 µs + 0.0175 µs; tree 6 µs + 0.02 µs: tree.
  CHECK(collective_time(switched(1, 8), CollectiveKind::AllReduce, iota(8), 1e3).algorithm == CollectiveAlgorithm::Tree);
  // Same node, 1 GB: ring 0.017514 s beats tree 2 · 1e9/100e9 = 0.02 s.
  CHECK(collective_time(switched(1, 8), CollectiveKind::AllReduce, iota(8), 1e9).algorithm == CollectiveAlgorithm::Ring);
}

TEST_CASE("a requested algorithm that does not apply falls back to the fastest that does", "[sim][collectives]") {
  // Hierarchical needs two nodes; TorusRings a torus.
  const auto a = GENERATE(CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::TorusRings, CollectiveAlgorithm::Direct);
  const auto e = collective_time(switched(1, 8), CollectiveKind::AllReduce, iota(8), 1e9, a);
  CHECK(e == collective_time(switched(1, 8), CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Auto));
}

TEST_CASE("a one-device group or an empty buffer costs zero", "[sim][collectives]") {
  const auto kind = GENERATE(CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather, CollectiveKind::AllToAll,
                             CollectiveKind::Broadcast, CollectiveKind::SendRecv);
  const auto algorithm = GENERATE(CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                                  CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::TorusRings, CollectiveAlgorithm::Direct);
  const Cluster c = switched(2, 4);
  const auto one = collective_time(c, kind, std::vector<std::int64_t>{5}, 1e9, algorithm);
  CHECK(one.time.count == 0);
  CHECK(one.intra_bytes_per_device == 0);
  CHECK(one.inter_bytes_per_device == 0);
  CHECK(one.algorithm != CollectiveAlgorithm::Auto);
  const std::vector<std::int64_t> pair{0, 5};
  CHECK(collective_time(c, kind, pair, 0, algorithm).time.count == 0);
}

TEST_CASE("datasheet DGX A100: 8-GPU all-reduce bus bandwidth matches the NCCL measurement", "[sim][collectives]") {
  ClusterSpec spec = *cluster_preset("dgx-a100");
  const Cluster c = build_cluster(spec, datasheet_profile());
  const double S = 8.0 * (1 << 30);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), S, CollectiveAlgorithm::Ring);
  // Bus bandwidth = 2(p−1)/p · S / t; hardware-specs.json: nccl_allreduce_8gpu_peak_busbw_GBps = 231.58
  // (the latency term, 14 · 1.9 µs, is 0.04% of t at 8 GiB).
  CHECK_THAT(2.0 * 7 / 8 * S / e.time.seconds(), WithinRel(231.58e9, 2e-3));
}

TEST_CASE("collective names round-trip", "[sim][collectives]") {
  for (const auto& name : collective_algorithm_names()) {
    const auto a = collective_algorithm_from_string(name);
    REQUIRE(a.has_value());
    CHECK(to_string(*a) == name);
  }
  CHECK_FALSE(collective_algorithm_from_string("rign").has_value());
  CHECK(to_string(CollectiveKind::ReduceScatter) == "reduce-scatter");
}
