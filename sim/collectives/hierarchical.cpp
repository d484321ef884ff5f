// Two-level (hierarchical) collectives, as Horovod's hierarchical all-reduce and NCCL's
// collnet/"2D" schemes: reduce-scatter inside each node over its k devices, an all-reduce of the
// S/k shards between nodes (k rings in parallel, one per local rank, each on that device's share of
// the NICs), then an all-gather inside each node.
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
  const double b_intra = effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S);
  const double b_inter = effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), shard);
  const double a_intra = cluster.intra.latency_s;
  const double a_inter = cluster.inter.latency_s;
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
