// Two-level (hierarchical) collectives, as Horovod's hierarchical all-reduce and NCCL's
// collnet/"2D" schemes: reduce-scatter inside each node over its k devices, an all-reduce of the
// S/k shards between nodes (k rings in parallel, one per local rank, each on that device's share of
// the NICs), then an all-gather inside each node.
//
// Across sites, three levels, as hybrid-sharded data parallelism (PyTorch HSDP, and DiLoCo's outer
// step, arXiv:2311.08105) keeps the WAN to one exchange: reduce-scatter inside each node (S → S/k),
// then between the m nodes of each site (S/k → S/(k·m), k rings per site), an all-reduce of the
// S/(k·m) shards between the s sites (k·m rings of s members, which share each site's one WAN link:
// together they put (s−1)/s · S on it each way per half), then the two all-gathers back.
#include <algorithm>
#include <cmath>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

namespace {

std::optional<Cost> across_sites(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double S) {
  // Every node the same members and every site the same nodes (local rank i of node j pairs with
  // local rank i of node j in every other site), and a level to gain over a plain ring.
  if (!shape.uniform() || shape.min_nodes_per_site != shape.max_nodes_per_site) return std::nullopt;
  const double k = static_cast<double>(shape.max_per_node), m = static_cast<double>(shape.max_nodes_per_site),
               s = static_cast<double>(shape.sites);
  if (k < 2 && m < 2) return std::nullopt;
  // Inside a node: a ring over k (as below).
  double intra_half = 0;
  if (k >= 2) {
    double b_intra = effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S, kind);
    if (shape.spans_pcie_switches)
      b_intra = std::min(b_intra, effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, S, kind));
    intra_half = (k - 1) / k * S / b_intra + (k - 1) * cluster.intra.latency_s;
  }
  // Between the nodes of a site: k rings of m members on the S/k shard, bounded as the two-level
  // form's rings between nodes are, on one site's fabric.
  const double shard2 = S / k;
  double site_half = 0;
  if (m >= 2) {
    GroupShape site = shape;
    site.nodes = shape.max_nodes_per_site;
    site.size = shape.max_nodes_per_site * shape.max_per_node;
    site.sites = 1;
    site.spans_sites = false;
    site.spans_leaves = shape.spans_leaves_in_site;
    const double b = std::min(effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), shard2, kind),
                              fabric_bound(cluster, site, k, channels_per_leaf(cluster, site), shard2, kind) / k);
    site_half = (m - 1) / m * shard2 / b + (m - 1) * cluster.inter.latency_s;
  }
  // Between the sites: k·m rings of s members on the S/(k·m) shard, each sending (s−1)/s of it per
  // half; all of a site's rings share its WAN link ((s−1)/s · S each way), k/NICs of them a NIC,
  // and the members behind one leaf uplink that uplink.
  const double shard3 = shard2 / m, sent3 = (s - 1) / s * shard3;
  const double eff = cluster.inter.efficiency_of(kind).at(shard3);
  double wan_half = sent3 * k * m / (eff * cluster.wan.bandwidth_bytes_per_s);
  wan_half = std::max(wan_half, sent3 / (eff * cluster.inter_bandwidth_per_device()));
  if (shape.max_per_leaf > 0 && std::isfinite(shape.min_leaf_uplink))
    wan_half = std::max(wan_half, sent3 * static_cast<double>(shape.max_per_leaf) / (eff * shape.min_leaf_uplink));
  wan_half += (s - 1) * cluster.wan.latency_s;
  const double passes = kind == CollectiveKind::AllReduce ? 2 : 1;
  return Cost{passes * (intra_half + site_half + wan_half), passes * (k - 1) / k * S, passes * ((m - 1) / m * shard2 + sent3)};
}

}  // namespace

std::optional<Cost> hierarchical_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  const bool reduction = kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllGather;
  if (reduction && !is_torus(cluster) && shape.spans_sites) return across_sites(cluster, shape, kind, bytes);
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
