#pragma once
/// Internals of sim/collectives.hpp: the shape of a group on a cluster, and one closed-form cost
/// function per algorithm (one file each). Each returns nothing when the algorithm does not apply to
/// that collective kind, cluster or group, so choose.cpp can try them all (as NCCL's tuner does).
///
/// Notation in every file: S = the `bytes` argument (size convention in collectives.hpp), p = group
/// size, n = nodes the group spans, k = members per node, B = a bandwidth in bytes/s after the link's
/// efficiency at the message size, α = a per-step latency in seconds.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/collectives.hpp"

namespace parasim::sim::collectives {

/// Where a group's members sit.
struct GroupShape {
  std::int64_t size = 0;          ///< p
  std::int64_t nodes = 0;         ///< n: distinct nodes spanned
  std::int64_t min_per_node = 0;  ///< fewest members on one spanned node
  std::int64_t max_per_node = 0;  ///< most members on one spanned node
  std::vector<std::int64_t> per_node;  ///< members on each spanned node
  // ---- torus clusters only ----
  std::vector<std::int64_t> extents;  ///< per torus dimension: distinct coordinates the group uses
  std::vector<bool> full_ring;        ///< per dimension: the group spans it whole, with wraparound, over ≥ 3 chips
  bool subgrid = false;               ///< the group is the full product of its per-dimension coordinate sets

  [[nodiscard]] bool uniform() const { return min_per_node == max_per_node; }
};

/// Seconds and bytes sent per device (averaged over the group) of one algorithm.
struct Cost {
  double seconds = 0;
  double intra_bytes = 0;
  double inter_bytes = 0;
};

/// Precondition: group ids are valid and distinct, size ≥ 1.
[[nodiscard]] GroupShape analyse_group(const Cluster& cluster, std::span<const std::int64_t> group);

[[nodiscard]] inline bool is_torus(const Cluster& cluster) {
  return cluster.inter_kind == InterNodeKind::Torus && !cluster.torus_dims.empty();
}

/// `bandwidth_bytes_per_s` × the link's efficiency at a message of `bytes`.
[[nodiscard]] double effective_bandwidth(const Link& link, double bandwidth_bytes_per_s, double bytes);

/// The bottleneck bandwidth and the per-step latency of a ring (or chain, or tree) through the group.
struct Path {
  double bandwidth = 0;  ///< bytes/s, after efficiency
  double latency = 0;    ///< seconds per step
};
[[nodiscard]] Path ring_path(const Cluster& cluster, const GroupShape& shape, double bytes);

[[nodiscard]] std::optional<Cost> ring_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> hierarchical_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> torus_rings_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> all_to_all_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> send_recv_cost(const Cluster& cluster, std::span<const std::int64_t> group, CollectiveKind kind,
                                                 double bytes);

}  // namespace parasim::sim::collectives
