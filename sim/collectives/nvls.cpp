// NVLink SHARP (NVLS): the all-reduce the NVSwitch performs in the network (3rd-generation NVSwitch
// and later; NCCL's NVLS and NVLS_TREE algorithms, NCCL src/device/all_reduce.h).
//
// One node (nvls_cost). Every rank owns a shard of S/p. It reads its shard through the switch's
// multicast address with multimem.ld_reduce: the switch pulls that shard from all p GPUs (the rank
// itself included), adds them up and returns the sum; the rank then writes the sum back with one
// multicast store, which the switch copies to all p GPUs. Per rank, over its port to the switch:
// up, S/p to each of the p shards' reads plus S/p stored = (p+1)/p · S; down, the S/p sum plus S/p
// from each of the p stores = (p+1)/p · S. Both directions at once, pipelined in chunks:
//   T = α_nvls + (p+1)/p · S / (B_nvls · e_nvls(S)),
// B_nvls the port's line rate and e_nvls the fraction an NVLS all-reduce reaches (its link profile).
// Against a ring's 2(p−1)/p · S this moves 1.75/1.125 = 1.56× less per rank at p = 8. The (p+1)/p
// factor reproduces the measured scaling with the GPU count: NCCL_ALGO=NVLS on 5, 6, 7 and 8 H100
// gave algbw 258, 265, 270 and 273 GB/s (NVIDIA/nccl issue #1455), and 273·(9/8)/((p+1)/p) gives
// 256, 263, 269 (tests/sim/nvls_test.cpp).
//
// Several nodes with a tree between them (nvls_tree_cost, NCCL's NVLS_TREE: "NVLink SHARP within the
// node and Tree between nodes", NVIDIA/nccl issue #1725): inside each node the NVLS reduction and
// multicast as above, over the node's k members; between nodes NCCL's double binary tree (tree.cpp)
// on the node's k NIC shares; the two stages are pipelined in chunks, so the slower sets the pace:
//   T = max((k+1)/k · S / (B_nvls·e_nvls), 2S / B_tree) + α_nvls + 2⌈log2 n⌉ · α_inter,
// with B_tree = min(k · B_inter_per_device · e_inter, fabric bound) as for the tree.
#include <algorithm>
#include <cmath>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

namespace {

/// The in-switch stage over k members of one node: (k+1)/k · S per rank each way.
double nvls_stage_seconds(const Cluster& cluster, double k, double S) {
  return (k + 1) / k * S / effective_bandwidth(cluster.nvls, cluster.nvls.bandwidth_bytes_per_s, S, CollectiveKind::AllReduce);
}

}  // namespace

std::optional<Cost> nvls_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  // NCCL runs NVLS all-reduce where the node's switch has NVLink SHARP (multicast), inside one node.
  // (NVLS all-gather and reduce-scatter move as much as a ring does — NVIDIA/nccl issue #1506 — and
  // are not modelled.)
  if (kind != CollectiveKind::AllReduce || !cluster.has_nvls() || cluster.intra_kind != IntraNodeKind::NVSwitch || is_torus(cluster) ||
      shape.nodes != 1)
    return std::nullopt;
  const double p = static_cast<double>(shape.size);
  const double sent = (p + 1) / p * bytes;
  return Cost{cluster.nvls.latency_s + nvls_stage_seconds(cluster, p, bytes), sent, 0};
}

std::optional<Cost> nvls_tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  // Needs NVLS inside every node (at least two members on each, the same number) and several nodes.
  if (kind != CollectiveKind::AllReduce || !cluster.has_nvls() || cluster.intra_kind != IntraNodeKind::NVSwitch || is_torus(cluster) ||
      shape.nodes < 2 || shape.min_per_node < 2 || !shape.uniform())
    return std::nullopt;
  const double S = bytes;
  const double k = static_cast<double>(shape.min_per_node);
  const double p = static_cast<double>(shape.size);
  const double intra = nvls_stage_seconds(cluster, k, S);
  const double b_tree = std::min(k * effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), S, CollectiveKind::AllReduce),
                                 fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), S, CollectiveKind::AllReduce));
  const double inter = 2 * S / b_tree;
  const double n = static_cast<double>(shape.nodes);
  const double latency = cluster.nvls.latency_s + 2 * std::ceil(std::log2(n)) * inter_latency(cluster, shape);
  // Traffic per device: (k+1)/k · S over its port; the tree's n−1 edges of 2S (S/2 each way in
  // each of two trees, up and down) split over the p members.
  return Cost{latency + std::max(intra, inter), (k + 1) / k * S, 2 * S * (n - 1) / p};
}

}  // namespace parasim::sim::collectives
