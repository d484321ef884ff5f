// InfiniBand SHARP all-reduce (NCCL's CollNet algorithms through the SHARP plugin: "CollnetDirect is
// alltoall within the node and Collnet between nodes", NVIDIA/nccl issue #1725): the fat-tree's
// switches add up what the nodes send and return the sum, so the inter-node step moves each byte
// once each way instead of a ring's 2(n−1)/n times.
//
// As the hierarchical all-reduce (hierarchical.cpp), with the switches doing the middle step: a
// ring reduce-scatter inside each node over its k members, then every member sends its S/k shard up
// the SHARP aggregation tree over its NIC share and receives the sum (S/k each way), then a ring
// all-gather inside the node:
//   T = 2[(k−1)/k · S/B_intra + (k−1)·α_intra] + (S/k)/B_inter + 2·α_inter,
// B_inter the device's NIC share (bounded by the fabric beyond the NICs as for the hierarchical
// rings), α_inter once up to the aggregation root and once down.
#include <algorithm>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> collnet_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  // Only where the fat-tree says it reduces, between nodes of equal member counts, and (as NCCL's
  // CollNet is by default) for all-reduce.
  if (kind != CollectiveKind::AllReduce || !cluster.sharp || is_torus(cluster) || shape.nodes < 2 || !shape.uniform() || shape.spans_sites)
    return std::nullopt;
  const double k = static_cast<double>(shape.max_per_node);
  const double S = bytes;
  const double shard = S / k;
  double intra_half = 0;
  if (shape.max_per_node > 1) {
    double b_intra = effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S);
    if (shape.spans_pcie_switches)
      b_intra = std::min(b_intra, effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, S));
    intra_half = (k - 1) / k * S / b_intra + (k - 1) * cluster.intra.latency_s;
  }
  const double b_inter = std::min(effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), shard),
                                  fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), shard) / k);
  const double inter = shard / b_inter + 2 * inter_latency(cluster, shape);
  return Cost{2 * intra_half + inter, 2 * (k - 1) / k * S, shard};
}

}  // namespace parasim::sim::collectives
