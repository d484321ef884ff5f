// NCCL's double binary tree all-reduce (NCCL 2.4; S. Jeaugey, "Massively Scale Your Deep Learning
// Training with NCCL 2.4", NVIDIA developer blog, 2019): two binary trees over the nodes, each
// carrying half the data, in which every node is a leaf of one tree and an inner node of the other;
// inside a node the ranks form a chain. Reduce up, broadcast down, both pipelined in chunks.
#include <cmath>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  // NCCL runs trees for all-reduce only, and only over switched fabrics.
  if (kind != CollectiveKind::AllReduce || is_torus(cluster)) return std::nullopt;
  const double p = static_cast<double>(shape.size);
  const double S = bytes;
  // Bottleneck as for the ring (the same channels on the same NIC shares). Pipelined, each of the
  // two passes streams S through the bottleneck: 2·S/B; the latency is that of the trees' depth,
  // up and down: 2·⌈log2 p⌉·α. T = 2·S/B + 2·⌈log2 p⌉·α.
  const Path path = ring_path(cluster, shape, S);
  const double seconds = 2 * S / path.bandwidth + 2 * std::ceil(std::log2(p)) * path.latency;
  // Traffic: p−1 tree edges each carry S up and S down: 2S(p−1)/p per device; n−1 of those edges
  // join nodes.
  const double total = 2 * S * (p - 1) / p;
  const double inter = 2 * S * static_cast<double>(shape.nodes - 1) / p;
  return Cost{seconds, total - inter, inter};
}

}  // namespace parasim::sim::collectives
