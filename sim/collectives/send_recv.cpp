// Point-to-point (pipeline stage to stage): one message over the link between two devices.
#include <cstdlib>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> send_recv_cost(const Cluster& cluster, std::span<const std::int64_t> group, CollectiveKind kind, double bytes) {
  if (kind != CollectiveKind::SendRecv) return std::nullopt;
  PARASIM_CHECK(group.size() == 2, "a send-recv names exactly two devices, got " + std::to_string(group.size()));
  const double S = bytes;
  if (is_torus(cluster)) {
    // Dimension-ordered routing, cut-through: the message streams at one link's rate and pays α per
    // hop: T = S/B_link + hops·α, hops = the torus distance.
    const auto a = cluster.torus_coordinates(group[0]);
    const auto b = cluster.torus_coordinates(group[1]);
    double hops = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::int64_t d = std::llabs(a[i] - b[i]);
      hops += static_cast<double>(cluster.torus_wraparound ? std::min(d, cluster.torus_dims[i] - d) : d);
    }
    const Link& link = cluster.inter;
    return Cost{S / effective_bandwidth(link, link.bandwidth_bytes_per_s, S) + hops * link.latency_s, 0, S};
  }
  // T = S/B + α over the link between them: the intra-node link in one node, else the sender's share
  // of its node's NICs (pipeline stages send all at once, as the share assumes). The bytes are the
  // sender's.
  if (cluster.node_of(group[0]) == cluster.node_of(group[1])) {
    const Link& link = cluster.intra;
    return Cost{S / effective_bandwidth(link, link.bandwidth_bytes_per_s, S) + link.latency_s, S, 0};
  }
  const Link& link = cluster.inter;
  return Cost{S / effective_bandwidth(link, cluster.inter_bandwidth_per_device(), S) + link.latency_s, 0, S};
}

}  // namespace parasim::sim::collectives
