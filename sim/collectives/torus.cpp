// Per-dimension rings on a 2D/3D torus (as TPU pods reduce over ICI): reduce-scatter along one
// dimension after another, then all-gather back in the reverse order.
//
// Closed form. Take the active dimensions (extent g_i > 1) in order i = 1..m. Reduce-scatter along
// dimension i works on the data left by the earlier ones, D_i = S / (g_1 ⋯ g_{i−1}), with a ring of
// g_i chips: (g_i − 1)/g_i · D_i / B_i + (g_i − 1)·α. Where the group spans a whole dimension with
// wraparound (≥ 3 chips) the ring runs both ways at once, each direction carrying half the data on
// its own link direction: B_i = 2·B_link; on a partial dimension (a line) a ring goes out and back on
// the same links: B_i = B_link. So
//   RS = AG = Σ_i [(g_i − 1)/g_i · S/(g_1⋯g_{i−1}) / B_i + (g_i − 1)·α],   AR = 2·RS.
// The bandwidth terms telescope: Σ_i (g_i−1)/g_i / (g_1⋯g_{i−1}) = 1 − 1/p, so with equal B_i the
// all-reduce is 2(p−1)/p · S/B + 2·Σ_i(g_i − 1)·α — a ring's bandwidth term at B = 2·B_link, with
// Σ(g_i − 1) steps instead of p − 1. With unequal B_i the first dimension moves the most data, so
// the bidirectional (faster) dimensions go first.
#include <algorithm>
#include <numeric>

#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

std::optional<Cost> torus_rings_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes) {
  const bool reduction = kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllGather;
  if (!reduction || !is_torus(cluster) || !shape.subgrid) return std::nullopt;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < shape.extents.size(); ++i)
    if (shape.extents[i] > 1) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return shape.full_ring[a] && !shape.full_ring[b]; });
  const Link& link = cluster.inter;
  double data = bytes;
  double half = 0;  // one reduce-scatter (or all-gather) pass
  for (const std::size_t i : order) {
    const double g = static_cast<double>(shape.extents[i]);
    const double b = (shape.full_ring[i] ? 2.0 : 1.0) * effective_bandwidth(link, link.bandwidth_bytes_per_s, data, kind);
    half += (g - 1) / g * data / b + (g - 1) * link.latency_s;
    data /= g;
  }
  const double p = static_cast<double>(shape.size);
  const double sent = (p - 1) / p * bytes;  // the telescoped sum above
  if (kind == CollectiveKind::AllReduce) return Cost{2 * half, 0, 2 * sent};
  return Cost{half, 0, sent};
}

}  // namespace parasim::sim::collectives
