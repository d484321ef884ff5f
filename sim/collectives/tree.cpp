// NCCL's double binary tree all-reduce (NCCL 2.4; S. Jeaugey, "Massively Scale Your Deep Learning
// Training with NCCL 2.4", NVIDIA developer blog, 2019): two binary trees over the nodes, each
// carrying half the data, in which every node is a leaf of one tree and an inner node of the other;
// inside a node the ranks form a chain. Reduce up, broadcast down, both pipelined in chunks.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

ProtocolTerms tree_terms(const Cluster& cluster, const GroupShape& shape, double sent, double bandwidth, double alpha) {
  const double k = static_cast<double>(shape.max_per_node), n = static_cast<double>(shape.nodes);
  const double inter = shape.nodes > 1 ? std::ceil(std::log2(n)) : 0;
  return protocol_terms(cluster, shape, 2 * (k - 1), 2 * inter, sent, bandwidth,
                        2 * std::ceil(std::log2(static_cast<double>(shape.size))) * alpha);
}

Path tree_path(const Cluster& cluster, const GroupShape& shape, double bytes) {
  const double S = bytes;
  // Inside a node the ranks form a chain, and every device sends S up and S down it (both trees,
  // half each, reduce and broadcast pipelined): 2S over its port, T = 2S/B_intra; a PCIe chain
  // crosses each switch uplink once each way, S each: B ≤ 2·B_host_bridge. Between nodes, a node
  // is an inner node (a parent and two children) of one tree and a leaf of the other: four tree
  // edges of S/2 each way, 2S split over its k members' NIC shares: B ≤ k·B_inter_per_device. The
  // fabric beyond the NICs is bounded as for a ring's k channels (fabric_bound), an approximation:
  // tree edges do not follow the ring's one crossing per leaf group.
  Path path{std::numeric_limits<double>::infinity(), 0};
  if (shape.max_per_node > 1) {
    path.bandwidth = std::min(path.bandwidth, effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S, CollectiveKind::AllReduce));
    path.latency = std::max(path.latency, cluster.intra.latency_s);
  }
  if (shape.spans_pcie_switches)
    path.bandwidth = std::min(path.bandwidth, 2 * effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, S, CollectiveKind::AllReduce));
  if (shape.nodes > 1) {
    const double k = static_cast<double>(shape.min_per_node);
    path.bandwidth = std::min(path.bandwidth, k * effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), S, CollectiveKind::AllReduce));
    path.bandwidth = std::min(path.bandwidth, fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), S, CollectiveKind::AllReduce));
    path.latency = std::max(path.latency, inter_latency(cluster, shape));
  }
  return path;
}

std::optional<Cost> tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  // NCCL runs trees for all-reduce only, and only over switched fabrics.
  if (kind != CollectiveKind::AllReduce || is_torus(cluster)) return std::nullopt;
  const double p = static_cast<double>(shape.size);
  const double S = bytes;
  // Pipelined, T = 2·S/B + 2·⌈log2 p⌉·α (latency of the trees' depth, up and down); with the
  // links' protocols, base + 2·((k − 1) intra hops + ⌈log2 n⌉ inter hops) (NCCL's tree latency,
  // src/graph/tuning.cc) and the protocol's share of B.
  const Path path = tree_path(cluster, shape, S);
  const ProtocolTerms t = tree_terms(cluster, shape, 2 * S, path.bandwidth, path.latency);
  const double seconds = t.latency + 2 * S / (path.bandwidth * t.fraction);
  // Traffic: p−1 tree edges each carry S up and S down: 2S(p−1)/p per device; n−1 of those edges
  // join nodes.
  const double total = 2 * S * (p - 1) / p;
  const double inter = 2 * S * static_cast<double>(shape.nodes - 1) / p;
  return Cost{seconds, total - inter, inter};
}

}  // namespace parasim::sim::collectives
