// Ring algorithms (NCCL's default for large messages): all-reduce as reduce-scatter + all-gather
// around a ring, and the pipelined ring broadcast.
#include <algorithm>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

double channels_per_leaf(const Cluster& cluster, const GroupShape& shape) {
  return static_cast<double>(cluster.rail_optimized ? shape.max_per_nic : shape.min_per_node);
}

double inter_latency(const Cluster& cluster, const GroupShape& shape) {
  return shape.spans_sites ? cluster.wan.latency_s : cluster.inter.latency_s;
}

double fabric_bound(const Cluster& cluster, const GroupShape& shape, double channels, double per_leaf, double bytes, CollectiveKind kind) {
  double bound = std::numeric_limits<double>::infinity();
  // Each channel crosses a leaf uplink at most once each way, and `per_leaf` channels share one: a
  // channel gets U_min / per_leaf, all of them channels × that.
  if (shape.spans_leaves)
    bound = std::min(bound, channels / per_leaf * effective_bandwidth(cluster.inter, shape.min_leaf_uplink, bytes, kind));
  // Every channel leaves and enters each site once through the site's one WAN link.
  if (shape.spans_sites) bound = std::min(bound, effective_bandwidth(cluster.wan, cluster.wan.bandwidth_bytes_per_s, bytes, kind));
  return bound;
}

Path ring_path(const Cluster& cluster, const GroupShape& shape, double bytes, CollectiveKind kind) {
  if (is_torus(cluster)) {
    // A ring embedded in the torus: every hop is one torus link, one direction.
    return {effective_bandwidth(cluster.inter, cluster.inter.bandwidth_bytes_per_s, bytes, kind), cluster.inter.latency_s};
  }
  // Bottleneck of a ring through n nodes with k members each. NCCL builds as many channels (rings)
  // as there are NICs near the devices, each entering and leaving a node through its own NIC, and
  // each channel carries 1/k of the data; with k members per node there are k channels on k NIC
  // shares, so the node-crossing edges of "the ring" move data at k × inter_bandwidth_per_device.
  // Inside a node the ring's edges are the devices' intra-node links at B_intra; across nodes each
  // device leaves its node in one channel of the k and sends intra-node in the other k − 1, so its
  // port carries (k−1)/k of the data: B_intra · k/(k−1) (the same for every node only when every
  // node holds k members; with members spread unevenly some device sends all of it inside: B_intra;
  // on a PCIe node the crossing leaves through the device's own PCIe link too: B_intra).
  // On PCIe nodes with several switches every channel crosses each switch's uplink once each way:
  // B_host_bridge. The ring runs at the slowest of these (and of the fabric beyond the NICs, see
  // fabric_bound). With members spread unevenly, the node with the fewest members has the fewest
  // channels and limits the crossing: k = min k_i. α is the latency of the slowest link class the
  // ring crosses (the WAN's when it spans sites).
  Path path{std::numeric_limits<double>::infinity(), 0};
  if (shape.max_per_node > 1) {
    const double k = static_cast<double>(shape.min_per_node);
    const double share = (shape.nodes > 1 && shape.uniform() && cluster.intra_kind != IntraNodeKind::PCIe) ? k / (k - 1) : 1.0;
    path.bandwidth = std::min(path.bandwidth, share * effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, bytes, kind));
    path.latency = std::max(path.latency, cluster.intra.latency_s);
  }
  if (shape.spans_pcie_switches)
    path.bandwidth = std::min(path.bandwidth, effective_bandwidth(cluster.host_bridge, cluster.host_bridge.bandwidth_bytes_per_s, bytes, kind));
  if (shape.nodes > 1) {
    const double k = static_cast<double>(shape.min_per_node);
    path.bandwidth = std::min(path.bandwidth, k * effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), bytes, kind));
    path.bandwidth = std::min(path.bandwidth, fabric_bound(cluster, shape, k, channels_per_leaf(cluster, shape), bytes, kind));
    path.latency = std::max(path.latency, inter_latency(cluster, shape));
  }
  PARASIM_CHECK(path.bandwidth < std::numeric_limits<double>::infinity(), "a ring of one device has no path");
  return path;
}

/// Splits `total` bytes sent per device between intra- and inter-node links, given that `crossing`
/// of the ring's p edges leave a node (the same count of edges in every channel).
Cost split(const Cluster& cluster, const GroupShape& shape, double seconds, double total, double crossing) {
  if (is_torus(cluster)) return {seconds, 0, total};
  const double inter = total * crossing / static_cast<double>(shape.size);
  return {seconds, total - inter, inter};
}

ProtocolTerms protocol_terms(const Cluster& cluster, const GroupShape& shape, double intra_hops, double inter_hops, double sent,
                             double bandwidth, double legacy_latency) {
  const bool inside = intra_hops > 0, across = inter_hops > 0;
  const Link* intra = inside ? &cluster.intra : nullptr;
  const Link* inter = across ? (shape.spans_sites ? &cluster.wan : &cluster.inter) : nullptr;
  const bool protocols = (intra && !intra->protocols.empty()) || (inter && !inter->protocols.empty());
  if (!protocols || is_torus(cluster)) return ProtocolTerms{legacy_latency, 1, {}};
  // The names either link lists; a link without that protocol crosses at its own α, full bandwidth.
  std::vector<std::string> names;
  for (const Link* l : {intra, inter})
    if (l)
      for (const Protocol& p : l->protocols)
        if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  auto on = [](const Link* l, const std::string& name) -> Protocol {
    for (const Protocol& p : l->protocols)
      if (p.name == name) return p;
    return Protocol{name, l->latency_s, 1, 0};
  };
  ProtocolTerms best;
  double best_s = std::numeric_limits<double>::infinity();
  for (const std::string& name : names) {
    double base = 0, latency = 0, fraction = 1;
    if (intra) {
      const Protocol p = on(intra, name);
      base = std::max(base, p.base_latency_s);
      latency += intra_hops * p.hop_latency_s;
      fraction = std::min(fraction, p.bandwidth_fraction);
    }
    if (inter) {
      const Protocol p = on(inter, name);
      base = std::max(base, p.base_latency_s);
      latency += inter_hops * p.hop_latency_s;
      fraction = std::min(fraction, p.bandwidth_fraction);
    }
    const double seconds = base + latency + sent / (bandwidth * fraction);
    if (seconds < best_s) {
      best_s = seconds;
      best = ProtocolTerms{base + latency, fraction, name};
    }
  }
  return best;
}

RingSteps ring_steps(const GroupShape& shape, CollectiveKind kind) {
  const double p = static_cast<double>(shape.size), n = static_cast<double>(shape.nodes);
  if (kind == CollectiveKind::AllReduce) return {2 * (p - 1), 2 * (n - 1)};
  return {p - 1, n - 1};
}

std::optional<Cost> ring_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  const double p = static_cast<double>(shape.size);
  const double S = bytes;
  const Path path = ring_path(cluster, shape, S, kind);
  const double B = path.bandwidth;
  const double alpha = path.latency;
  // A ring over n ≥ 2 nodes leaves a node n times; inside one node never.
  const double crossing = shape.nodes > 1 ? static_cast<double>(shape.nodes) : 0;
  // With the links' protocols, the steps' latency is NCCL's: base + intra steps × intra hop + inter
  // steps × inter hop, and the protocol's share of B; without, (steps) × α at B.
  const RingSteps rs = ring_steps(shape, kind);
  auto timed = [&](double moved) {
    const ProtocolTerms t = protocol_terms(cluster, shape, rs.steps - rs.inter, rs.inter, moved, B, rs.steps * alpha);
    return t.latency + moved / (B * t.fraction);
  };
  switch (kind) {
    case CollectiveKind::AllReduce: {
      // Reduce-scatter then all-gather, each p−1 steps moving S/p per step:
      // T = 2(p−1)/p · S/B + 2(p−1)·α (Thakur, Rabenseifner & Gropp 2005; Patarasuk & Yuan 2009).
      const double sent = 2 * (p - 1) / p * S;
      return split(cluster, shape, timed(sent), sent, crossing);
    }
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather: {
      // One half of the above: T = (p−1)/p · S/B + (p−1)·α.
      const double sent = (p - 1) / p * S;
      return split(cluster, shape, timed(sent), sent, crossing);
    }
    case CollectiveKind::Broadcast: {
      // Pipelined ring (chain) from the root: in small chunks, the whole buffer streams through
      // every edge at B; the last rank receives the first chunk after p−1 hops: T = S/B + (p−1)·α.
      // Every rank but the last forwards S: (p−1)/p · S per device on average.
      return split(cluster, shape, timed(S), (p - 1) / p * S, crossing);
    }
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace parasim::sim::collectives
