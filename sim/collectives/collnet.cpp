// InfiniBand SHARP all-reduce (NCCL's CollNet algorithms through the SHARP plugin: "CollnetDirect is
// alltoall within the node and Collnet between nodes", NVIDIA/nccl issue #1725): the fat-tree's
// switches add up what the nodes send and return the sum, so the inter-node step moves each byte
// once each way instead of a ring's 2(n−1)/n times.
//
// As the hierarchical all-reduce (hierarchical.cpp), with the switches doing the middle step: a
// ring reduce-scatter inside each node over its k members, then every member sends its S/k shard up
// the SHARP aggregation tree over its NIC share and receives the sum (S/k each way), then a ring
// all-gather inside the node. NCCL pipelines the three in chunks (CollNet's channels reduce, send and
// broadcast at once), and they use different links — the NVLink ports carry the reduce-scatter and
// the all-gather, 2(k−1)/k · S each way, the NICs the shards — so the slower sets the pace:
//   T = max(2(k−1)/k · S/B_intra, (S/k)/B_inter) + 2(k−1)·α_intra + 2·α_inter,
// B_inter the device's NIC share (bounded by the fabric beyond the NICs as for the hierarchical
// rings), α_inter once up to the aggregation root and once down. Check: 64 H100 (8 DGX H100, NDR),
// NCCL_ALGO=COLLNETCHAIN with SHARP, measured 386.56 GB/s bus bandwidth at 8 GiB
// (coreweave/nccl-tests README.md at commit cb86553328f8c9ed6f9d682971f5f9b17a926ab4); this form
// gives 390 GB/s on the datasheet dgx-h100 (tests/sim/nvls_test.cpp).
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
  double intra = 0, latency = 2 * inter_latency(cluster, shape);
  if (shape.max_per_node > 1) {
    double b_intra = effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S, CollectiveKind::AllReduce);
    if (shape.spans_pcie_switches)
      b_intra = std::min(b_intra, effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, S, CollectiveKind::AllReduce));
    intra = 2 * (k - 1) / k * S / b_intra;
    latency += 2 * (k - 1) * cluster.intra.latency_s;
  }
  const double b_inter = std::min(effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), shard, CollectiveKind::AllReduce),
                                  fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), shard, CollectiveKind::AllReduce) / k);
  return Cost{std::max(intra, shard / b_inter) + latency, 2 * (k - 1) / k * S, shard};
}

}  // namespace parasim::sim::collectives
