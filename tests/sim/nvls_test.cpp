// In-network reduction as collective algorithms (sim/collectives/nvls.cpp, collnet.cpp): NVLink SHARP
// inside a node, NVLS-tree across nodes, InfiniBand SHARP (CollNet); their closed forms derived by
// hand on small clusters whose links have efficiency 1, what `auto` picks, the published H100 NVLS
// figures the datasheet profile reproduces, and the cluster fields that enable them.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "test_clusters.hpp"

#include "sim/collectives.hpp"

using namespace parasim::sim;
using Catch::Matchers::WithinRel;

namespace {

using parasim::testing::switched;
using parasim::testing::switched_sharp;

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

std::string problem_of(const ClusterSpec& spec) {
  const auto p = check_cluster_spec(spec, datasheet_profile());
  return p ? p->pointer + ": " + p->message : "no problem";
}

}  // namespace

TEST_CASE("NVLS all-reduce inside a node: α + (p+1)/p · S / B_nvls", "[sim][collectives][nvls]") {
  const Cluster c = switched_sharp(1, 8);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Nvls);
  CHECK(e.algorithm == CollectiveAlgorithm::Nvls);
  // 2 µs + 9/8 · 1e9 / 100e9 = 0.000002 + 0.01125 = 0.011252 s; 1.125e9 B over each port.
  CHECK_THAT(e.time.seconds(), WithinRel(0.011252, 1e-12));
  CHECK_THAT(e.intra_bytes_per_device, WithinRel(1.125e9, 1e-12));
  CHECK(e.inter_bytes_per_device == 0);
  // Auto: the ring's 0.017514 s (tests/sim/collectives_test.cpp) and the tree's 0.02 s lose to it.
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9).algorithm == CollectiveAlgorithm::Nvls);
  // Two GPUs: NVLS moves 3/2 · S, the ring 2·1/2 · S = S: 1e9/100e9 + 2 µs = 0.010002 s against
  // 2 µs + 0.015 s, so auto picks the ring.
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(2), 1e9).algorithm == CollectiveAlgorithm::Ring);
  // NVLS does not run other collectives, nor where the switch has no SHARP: a request falls back.
  CHECK(collective_time(c, CollectiveKind::AllGather, iota(8), 1e9, CollectiveAlgorithm::Nvls).algorithm == CollectiveAlgorithm::Ring);
  CHECK(collective_time(switched(1, 8), CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Nvls).algorithm ==
        CollectiveAlgorithm::Ring);
  // Across nodes NVLS alone does not apply (NVLS-tree or CollNet do).
  CHECK(collective_time(switched_sharp(2, 4), CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Nvls).algorithm !=
        CollectiveAlgorithm::Nvls);
}

TEST_CASE("NVLS-tree across nodes: max(NVLS stage, tree stage) + α_nvls + 2⌈log2 n⌉·α_inter", "[sim][collectives][nvls]") {
  const Cluster c = switched_sharp(4, 4);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::NvlsTree);
  CHECK(e.algorithm == CollectiveAlgorithm::NvlsTree);
  // k = 4: NVLS stage 5/4 · 1e9 / 100e9 = 0.0125 s; tree stage 2 · 1e9 / (4 · 10e9) = 0.05 s;
  // latency 2 µs + 2 · 2 · 5 µs = 22 µs: 0.050022 s. Traffic: 1.25e9 B per port; 2 · 1e9 · 3/16 =
  // 3.75e8 B per device between nodes.
  CHECK_THAT(e.time.seconds(), WithinRel(0.050022, 1e-12));
  CHECK_THAT(e.intra_bytes_per_device, WithinRel(1.25e9, 1e-12));
  CHECK_THAT(e.inter_bytes_per_device, WithinRel(3.75e8, 1e-12));
}

TEST_CASE("CollNet (InfiniBand SHARP): max(intra ring halves, (S/k)/B_inter) + latencies", "[sim][collectives][collnet]") {
  const Cluster c = switched_sharp(4, 4);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::CollNet);
  CHECK(e.algorithm == CollectiveAlgorithm::CollNet);
  // Pipelined: the NVLink ports carry 2 · 3/4 · 1e9 B at 100 GB/s, 0.015 s; the NICs the 2.5e8 B
  // shard at 10 GB/s, 0.025 s; latency 2 · 3 · 1 µs + 2 · 5 µs = 16 µs: 0.025016 s. The hierarchical
  // all-reduce moves 2 · 3/4 of the shard between nodes, phase after phase:
  // 2 · (0.0075 + 3 µs) + 0.0375 + 6 · 5 µs = 0.052536 s.
  CHECK_THAT(e.time.seconds(), WithinRel(0.025016, 1e-12));
  CHECK_THAT(collective_time(c, CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::Hierarchical).time.seconds(),
             WithinRel(0.052536, 1e-12));
  CHECK_THAT(e.intra_bytes_per_device, WithinRel(1.5e9, 1e-12));
  CHECK_THAT(e.inter_bytes_per_device, WithinRel(2.5e8, 1e-12));
  // Auto at 1 GB: CollNet 0.025016 s beats NVLS-tree's 0.050022 s (tree stage 2S over the NICs).
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(16), 1e9).algorithm == CollectiveAlgorithm::CollNet);
  // Only where the fat-tree reduces.
  CHECK(collective_time(switched(4, 4), CollectiveKind::AllReduce, iota(16), 1e9, CollectiveAlgorithm::CollNet).algorithm !=
        CollectiveAlgorithm::CollNet);
}

TEST_CASE("datasheet DGX H100 with InfiniBand SHARP: CollNet all-reduce bus bandwidth matches the published 64-GPU figure", "[sim][collectives][collnet]") {
  ClusterSpec spec = *cluster_preset("dgx-h100");
  spec.nodes = 8;
  spec.inter_node.sharp = true;
  const Cluster c = build_cluster(spec, datasheet_profile());
  const double S = 8.0 * (1 << 30);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(64), S, CollectiveAlgorithm::CollNet);
  REQUIRE(e.algorithm == CollectiveAlgorithm::CollNet);
  // NVLink: 2 · 7/8 · S / (450 GB/s · 0.772) = 43.27 ms; NICs: S/8 / (50 GB/s · 0.96) = 22.37 ms;
  // latency 14 · 1.9 + 2 · 4 µs: 43.31 ms, a bus bandwidth 2 · 63/64 · S / t of 390 GB/s against the
  // 386.56 GB/s measured with NCCL_ALGO=COLLNETCHAIN and SHARP on 8 x 8 H100 (coreweave/nccl-tests
  // README.md at commit cb86553328f8c9ed6f9d682971f5f9b17a926ab4).
  CHECK_THAT(2.0 * 63 / 64 * S / e.time.seconds(), WithinRel(386.56e9, 0.02));
}

TEST_CASE("both engines' flows of the in-network reductions take their closed forms on an idle network", "[sim][collectives][nvls]") {
  struct Case {
    Cluster cluster;
    std::int64_t p;
    CollectiveAlgorithm algorithm;
  };
  const auto c = GENERATE(Case{switched_sharp(1, 8), 8, CollectiveAlgorithm::Nvls}, Case{switched_sharp(4, 4), 16, CollectiveAlgorithm::NvlsTree},
                          Case{switched_sharp(4, 4), 16, CollectiveAlgorithm::CollNet});
  INFO(to_string(c.algorithm));
  const auto group = iota(c.p);
  const double closed = collective_time(c.cluster, CollectiveKind::AllReduce, group, 1e9, c.algorithm).time.seconds();
  const CollectiveFlows flows = collective_flows(c.cluster, CollectiveKind::AllReduce, group, 1e9, c.algorithm);
  CHECK_THAT(uncontended_seconds(c.cluster, flows), WithinRel(closed, 1e-9));
}

TEST_CASE("datasheet DGX H100: NVLS all-reduce bus bandwidth matches the published 8-GPU figures", "[sim][collectives][nvls]") {
  const ClusterSpec spec = *cluster_preset("dgx-h100");
  const Cluster c = build_cluster(spec, datasheet_profile());
  REQUIRE(c.has_nvls());
  const double S = 8.0 * (1 << 30);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), S);
  CHECK(e.algorithm == CollectiveAlgorithm::Nvls);
  // nccl-tests bus bandwidth 2(p−1)/p · S / t: 480.16 GB/s at 8 GiB on a DGX H100
  // (NVIDIA/dgxc-benchmarking nccl/README.md; tests/data/calibrate/all_reduce_8xh100_nvls.log).
  CHECK_THAT(2.0 * 7 / 8 * S / e.time.seconds(), WithinRel(480.16e9, 0.01));
  // The ring on the same node stays near the ~370 GB/s NCCL reaches without NVLS (NVIDIA/nccl-tests
  // issue #212: "an effective NVLink bandwidth of 370GB/s ... with NCCL_ALGO=RING"): 450 · 0.772.
  const auto ring = collective_time(c, CollectiveKind::AllReduce, iota(8), S, CollectiveAlgorithm::Ring);
  CHECK_THAT(2.0 * 7 / 8 * S / ring.time.seconds(), WithinRel(347.4e9, 0.01));
  // With fewer GPUs NVLS moves (p+1)/p · S per port, so its algorithm bandwidth S/t falls as 1/(1 + 1/p):
  // NCCL_ALGO=NVLS on 5, 6, 7, 8 H100 measured 258, 265, 270, 273 GB/s (NVIDIA/nccl issue #1455,
  // a user's report); the model's ratio to 8 GPUs, (9/8) / ((p+1)/p), gives 0.9375, 0.964, 0.984, 1
  // against the measured 0.945, 0.971, 0.989, 1: within 1.5%.
  const double at8 = S / e.time.seconds();
  const double measured[] = {258, 265, 270, 273};
  for (std::int64_t p = 5; p <= 8; ++p) {
    INFO(p << " GPUs");
    const double algbw = S / collective_time(c, CollectiveKind::AllReduce, iota(p), S, CollectiveAlgorithm::Nvls).time.seconds();
    CHECK_THAT(algbw / at8, WithinRel(measured[p - 5] / 273.0, 0.015));
  }
}

TEST_CASE("GB200 NVL72 preset: 72 GPUs in one NVLink domain whose switches reduce", "[sim][cluster][nvls]") {
  ClusterSpec spec = *cluster_preset("gb200-nvl72");
  spec.nodes = 2;
  CHECK(problem_of(spec) == "no problem");
  const Cluster c = build_cluster(spec, datasheet_profile());
  CHECK(c.devices_per_node == 72);
  CHECK(c.device_count() == 144);
  CHECK(c.devices[0].kind == "gb200");
  CHECK(c.nvls.name == "nvlink5-sharp");
  // One rack: NVLS; two racks: NVLS inside each, a tree between (no IB SHARP in the preset).
  const double S = 8.0 * (1 << 30);
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(72), S).algorithm == CollectiveAlgorithm::Nvls);
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(144), S).algorithm == CollectiveAlgorithm::NvlsTree);
  // GB200's dense bf16 peak: 360 PFLOPS sparse for 72 GPUs / 72 / 2 = 2.5 PFLOPS.
  CHECK(datasheet_profile().device("gb200").peak_for(parasim::models::DType::BF16) == 2.5e15);
}

TEST_CASE("in-network reduction: cluster fields and algorithms that do not fit are located errors", "[sim][cluster][nvls]") {
  ClusterSpec spec = *cluster_preset("dgx-a100");
  spec.nodes = 2;
  SECTION("nvls on a PCIe node") {
    spec.intra_node.kind = IntraNodeKind::PCIe;
    spec.intra_node.nvls_link = "nvlink4-sharp";
    CHECK(problem_of(spec) == "/intra_node/nvls_link: nvls_link applies only to an \"nvswitch\" node (NVLink SHARP is the NVSwitch's)");
  }
  SECTION("an unknown NVLS link") {
    spec.intra_node.nvls_link = "nvlink4-sharpp";
    CHECK(problem_of(spec).rfind("/intra_node/nvls_link: unknown link \"nvlink4-sharpp\" (did you mean \"nvlink4-sharp\"?)", 0) == 0);
  }
  SECTION("nvls asked of a node without NVLink SHARP (A100)") {
    spec.algorithms.all_reduce = CollectiveAlgorithm::Nvls;
    CHECK(problem_of(spec) == "/algorithms/all_reduce: nvls needs NVSwitch nodes with NVLink SHARP: name their intra_node.nvls_link");
  }
  SECTION("collnet on a fat-tree without SHARP") {
    spec.algorithms.all_reduce = CollectiveAlgorithm::CollNet;
    CHECK(problem_of(spec) == "/algorithms/all_reduce: collnet needs a fat-tree with InfiniBand SHARP: set inter_node.sharp");
  }
  SECTION("nvls for an all-gather") {
    spec.algorithms.all_gather = CollectiveAlgorithm::Nvls;
    CHECK(problem_of(spec).rfind("/algorithms/all_gather: all_gather has no nvls algorithm; expected one of ", 0) == 0);
  }
  SECTION("sharp on a torus") {
    ClusterSpec tpu = *cluster_preset("tpu-v4-pod");
    tpu.nodes = 16;
    tpu.inter_node.sharp = true;
    CHECK(problem_of(tpu) == "/inter_node/sharp: sharp (InfiniBand SHARP in-network reduction) applies only to a fat-tree inter-node network");
  }
}
