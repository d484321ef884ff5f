// Direct all-to-all (NCCL's grouped send/recv to every peer; MoE token dispatch): each rank sends
// S/p to each of the p−1 others, S·(p−1)/p in all.
#include <algorithm>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {
namespace {

/// Switched fabric. A device with k_i − 1 peers in its node and p − k_i outside sends to both at
/// once, over separate paths: the intra-node part over its intra link, the inter-node part over its
/// share of the NICs, slowed by the fat-tree's oversubscription (all-to-all traffic leaves the leaf
/// switches, unlike a rail-aligned ring). Each peer message pays one α on its path:
///   T_i = max((k_i−1)·(S/p)/B_intra + (k_i−1)·α_intra, (p−k_i)·(S/p)/(B_inter/oversub) + (p−k_i)·α_inter),
/// and the collective ends with its slowest node: T = max_i T_i.
Cost switched(const Cluster& cluster, const GroupShape& shape, double S) {
  const double p = static_cast<double>(shape.size);
  const double chunk = S / p;
  double seconds = 0;
  double intra_total = 0;
  double inter_total = 0;
  for (const std::int64_t members : shape.per_node) {
    const double k = static_cast<double>(members);
    double intra_t = 0;
    double inter_t = 0;
    if (members > 1)
      intra_t = (k - 1) * chunk / effective_bandwidth(cluster.intra, cluster.intra.bandwidth_bytes_per_s, S) + (k - 1) * cluster.intra.latency_s;
    if (members < shape.size) {
      const double b = effective_bandwidth(cluster.inter, cluster.inter_bandwidth_per_device(), S) / cluster.oversubscription;
      inter_t = (p - k) * chunk / b + (p - k) * cluster.inter.latency_s;
    }
    seconds = std::max({seconds, intra_t, inter_t});
    intra_total += k * (k - 1) * chunk;
    inter_total += k * (p - k) * chunk;
  }
  return Cost{seconds, intra_total / p, inter_total / p};
}

/// Torus. Two bounds, whichever is slower:
/// - bisection: cut the group across its longest dimension (g_max chips) into halves; p/2 · p/2
///   messages of S/p, i.e. p·S/4 bytes, cross the cut each way over p/g_max links per cut plane, and
///   a ring (wraparound) has two cut planes: T_bis = (p·S/4) / (c · p/g_max · B) = S·g_max / (4·c·B),
///   c = 2 with wraparound, 1 on a line;
/// - injection: each chip sends S·(p−1)/p over its links (2 per active dimension of ≥ 3 chips, 1 for
///   2 chips): T_inj = S·(p−1)/p / (L·B).
/// Latency: a dimension-ordered exchange takes g_i − 1 steps per active dimension: Σ(g_i − 1)·α.
Cost torus(const Cluster& cluster, const GroupShape& shape, double S) {
  const double p = static_cast<double>(shape.size);
  const Link& link = cluster.inter;
  const double b = effective_bandwidth(link, link.bandwidth_bytes_per_s, S);
  std::size_t longest = 0;
  double links = 0;
  double steps = 0;
  for (std::size_t i = 0; i < shape.extents.size(); ++i) {
    if (shape.extents[i] > shape.extents[longest]) longest = i;
    if (shape.extents[i] > 1) {
      links += shape.extents[i] >= 3 ? 2 : 1;
      steps += static_cast<double>(shape.extents[i] - 1);
    }
  }
  const double g_max = static_cast<double>(shape.extents[longest]);
  const double c = shape.full_ring[longest] ? 2 : 1;
  const double bisection = S * g_max / (4 * c * b);
  const double injection = S * (p - 1) / p / (links * b);
  return Cost{std::max(bisection, injection) + steps * link.latency_s, 0, S * (p - 1) / p};
}

}  // namespace

std::optional<Cost> all_to_all_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  if (kind != CollectiveKind::AllToAll) return std::nullopt;
  return is_torus(cluster) ? torus(cluster, shape, bytes) : switched(cluster, shape, bytes);
}

}  // namespace parasim::sim::collectives
