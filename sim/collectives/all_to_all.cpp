// Direct all-to-all (NCCL's grouped send/recv to every peer; MoE token dispatch): each rank sends
// S/p to each of the p−1 others, S·(p−1)/p in all.
#include <algorithm>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {
namespace {

/// Switched fabric. Every message goes at once, so the exchange lasts as long as its most loaded
/// link needs for what crosses it — a device's port ((k_i−1)·S/p inside its node; on a PCIe node
/// everything it sends), a PCIe switch's uplink, a NIC (the messages of the devices sharing it,
/// (p−k_i)·S/p each), a leaf's uplink (everything its NICs send to other leaves, over ports × B_NIC
/// / oversubscription) or a site's WAN link — each byte counted at its link class's efficiency:
///   T = max over links ℓ of Σ_{messages crossing ℓ} (S/p) / eff / B_ℓ
///       + max over nodes of max((k_i−1)·α_intra, (p−k_i)·α_inter),
/// the latency being that of the slowest member's messages (α_WAN between sites). This is
/// uncontended_seconds of the flows in flows.cpp, counted link by link along their routes.
/// For a 2:1 oversubscribed fat-tree with one node of one device per leaf it reduces to
/// (p−1)·(S/p)/(B_NIC/2): the whole exchange at half the NIC rate.
Cost switched(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, double S) {
  const double p = static_cast<double>(shape.size);
  const double chunk = S / p;
  double intra_total = 0;
  double inter_total = 0;
  for (const std::int64_t members : shape.per_node) {
    const double k = static_cast<double>(members);
    intra_total += k * (k - 1) * chunk;
    inter_total += k * (p - k) * chunk;
  }
  const CollectiveFlows flows = collective_flows(cluster, CollectiveKind::AllToAll, group, S, CollectiveAlgorithm::Direct);
  return Cost{uncontended_seconds(cluster, flows), intra_total / p, inter_total / p};
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
  const double b = effective_bandwidth(link, link.bandwidth_bytes_per_s, S, CollectiveKind::AllToAll);
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

std::optional<Cost> all_to_all_cost(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group,
                                    CollectiveKind kind, double bytes) {
  if (kind != CollectiveKind::AllToAll) return std::nullopt;
  return is_torus(cluster) ? torus(cluster, shape, bytes) : switched(cluster, shape, group, bytes);
}

}  // namespace parasim::sim::collectives
