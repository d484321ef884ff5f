// Point-to-point (pipeline stage to stage): one message over the route between two devices.
#include <algorithm>
#include <limits>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"
#include "sim/topology.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> send_recv_cost(const Cluster& cluster, std::span<const std::int64_t> group, CollectiveKind kind, double bytes) {
  if (kind != CollectiveKind::SendRecv) return std::nullopt;
  PARASIM_CHECK(group.size() == 2, "a send-recv names exactly two devices, got " + std::to_string(group.size()));
  const double S = bytes;
  // T = S/B + α: B the slowest link on the route, α = send_recv_latency (hops × α on a torus, where
  // dimension-ordered cut-through routing streams the message at one link's rate). A NIC counts at
  // the sender's share of its node's NICs — pipeline stages send all at once, as the share assumes —
  // which is the closed form's stand-in for contention; the flow (flows.cpp) gets the whole NIC
  // when it is alone. The bytes are the sender's.
  const bool inside = !is_torus(cluster) && cluster.node_of(group[0]) == cluster.node_of(group[1]);
  const Link& cls = inside ? cluster.intra : cluster.inter;
  const LinkLayout layout = link_layout(cluster);
  std::vector<LinkId> path;
  route(cluster, layout, group[0], group[1], path);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const LinkId l : path) {
    const TopologyLink link = link_of(cluster, layout, l);
    const double raw = link.link_class == LinkClass::Nic ? cluster.inter_bandwidth_per_device() : link.bandwidth_bytes_per_s;
    bandwidth = std::min(bandwidth, effective_bandwidth(cls, raw, S, CollectiveKind::SendRecv));
  }
  PARASIM_CHECK(!path.empty(), "a send-recv between two devices crosses at least one link");
  const double seconds = S / bandwidth + send_recv_latency(cluster, group[0], group[1]);
  return inside ? Cost{seconds, S, 0} : Cost{seconds, 0, S};
}

}  // namespace parasim::sim::collectives
