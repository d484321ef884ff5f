// Two-level (hierarchical) collectives, as Horovod's hierarchical all-reduce and NCCL's
// collnet/"2D" schemes: reduce-scatter inside each node over its k devices, an all-reduce of the
// S/k shards between nodes (k rings in parallel, one per local rank, each on that device's share of
// the NICs), then an all-gather inside each node.
#include <algorithm>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> hierarchical_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  const bool reduction = kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllGather;
  // Needs two real levels: several nodes, several members on each, and the same number on each (the
  // inter-node step pairs local rank i of every node).
  if (!reduction || is_torus(cluster) || shape.nodes < 2 || shape.max_per_node < 2 || !shape.uniform()) return std::nullopt;
  const double k = static_cast<double>(shape.max_per_node);
  const double n = static_cast<double>(shape.nodes);
  const double S = bytes;
  const double shard = S / k;
  // Inside a node: a ring over its k members, on PCIe through each switch's uplink once each way.
  double b_intra = effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S, kind);
  if (shape.spans_pcie_switches)
    b_intra = std::min(b_intra, effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, S, kind));
  // Between nodes: k rings, one per local rank, each on its device's NIC share; beyond the NICs the k
  // rings are the k channels of fabric_bound, so each ring gets 1/k of that bound.
  const double b_inter =
      std::min(effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), shard, kind),
               fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), shard, kind) / k);
  const double a_intra = cluster.intra.latency_s;
  const double a_inter = inter_latency(cluster, shape);
  // Intra-node ring reduce-scatter (or all-gather) of S over k: (k−1)/k · S/B_intra + (k−1)·α_intra.
  const double intra_half = (k - 1) / k * S / b_intra + (k - 1) * a_intra;
  const double intra_sent = (k - 1) / k * S;
  // Inter-node ring over n nodes of the S/k shard, each local rank on its own NIC share:
  // reduce-scatter half (n−1)/n · (S/k)/B_inter + (n−1)·α_inter; all-reduce twice that.
  const double inter_half = (n - 1) / n * shard / b_inter + (n - 1) * a_inter;
  const double inter_sent = (n - 1) / n * shard;
  if (kind == CollectiveKind::AllReduce) {
    // T = 2[(k−1)/k · S/B_intra + (k−1)α_intra] + 2(n−1)/n · (S/k)/B_inter + 2(n−1)α_inter.
    return Cost{2 * intra_half + 2 * inter_half, 2 * intra_sent, 2 * inter_sent};
  }
  // Reduce-scatter: intra reduce-scatter, then inter reduce-scatter of the shard (S/(kn) = S/p left
  // on each rank); all-gather is the mirror image. T = intra half + inter half.
  return Cost{intra_half + inter_half, intra_sent, inter_sent};
}

}  // namespace parasim::sim::collectives
