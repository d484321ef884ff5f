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
  // ---- switched clusters only ----
  bool spans_pcie_switches = false;  ///< some node's members sit on more than one PCIe switch (with uplinks)
  bool spans_leaves = false;         ///< members on nodes of more than one leaf group (or site)
  bool spans_sites = false;          ///< members in more than one site (WAN)
  std::int64_t sites = 1;            ///< sites spanned
  std::int64_t min_nodes_per_site = 0, max_nodes_per_site = 0;  ///< of the group's nodes, per spanned site
  bool spans_leaves_in_site = false;  ///< some site's members sit on nodes of more than one of its leaf groups
  std::int64_t max_per_leaf = 0;      ///< most members whose traffic leaves by one leaf uplink (per rail when rail-optimised)
  std::int64_t max_per_nic = 0;      ///< most members of one node sharing one NIC
  double min_leaf_uplink = 0;        ///< least leaf uplink capacity among the members' leaves, bytes/s (raw)
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

/// `bandwidth_bytes_per_s` × the link's efficiency for collectives of `kind` at a message of `bytes`.
[[nodiscard]] double effective_bandwidth(const Link& link, double bandwidth_bytes_per_s, double bytes, CollectiveKind kind);

/// The bottleneck bandwidth and the per-step latency of a ring (or chain, or tree) through the group.
struct Path {
  double bandwidth = 0;  ///< bytes/s, after efficiency
  double latency = 0;    ///< seconds per step
};
/// The ring of ring.cpp (one channel per member of a node when it spans nodes).
[[nodiscard]] Path ring_path(const Cluster& cluster, const GroupShape& shape, double bytes, CollectiveKind kind);
/// The bound that the fabric beyond the NICs puts on `channels` flows that each leave every leaf
/// group (and site) the group spans once and enter it once, as a ring's channels do: on each leaf
/// uplink `per_leaf` of them share U_min, and all of them share a site's WAN link. Bytes/s of all
/// channels together, after the inter-node efficiency at `bytes`; infinity when nothing binds.
[[nodiscard]] double fabric_bound(const Cluster& cluster, const GroupShape& shape, double channels, double per_leaf, double bytes,
                                  CollectiveKind kind);
/// Channels of a ring that share one leaf uplink: rail-optimised, those on one NIC; else all of a node's.
[[nodiscard]] double channels_per_leaf(const Cluster& cluster, const GroupShape& shape);
/// The latency of one step between nodes: the WAN's when the group spans sites, else the NICs'.
[[nodiscard]] double inter_latency(const Cluster& cluster, const GroupShape& shape);

/// The latency and bandwidth share of the fastest of the links' protocols (sim/profile.hpp, Protocol)
/// for a collective of `intra_hops` algorithm steps inside nodes and `inter_hops` between them, moving
/// `sent` bytes per device at `bandwidth` (NCCL's tuner: src/graph/tuning.cc predicts base latency +
/// hops × hop latency + bytes / (bus bandwidth × the protocol's share) for LL, LL128 and Simple and
/// runs the least). Links without protocols count `legacy_latency` for the whole collective at full
/// bandwidth (a hand-built cluster's single α per step).
struct ProtocolTerms {
  double latency = 0;   ///< seconds: base + hops
  double fraction = 1;  ///< of the bandwidth
  std::string protocol;  ///< its name (empty: the links' single α)
};
[[nodiscard]] ProtocolTerms protocol_terms(const Cluster& cluster, const GroupShape& shape, double intra_hops, double inter_hops, double sent,
                                           double bandwidth, double legacy_latency);
/// A ring's steps of `kind` and how many of them cross nodes (NCCL: nsteps and nInterSteps):
/// all-reduce 2(p − 1) and 2(n − 1), reduce-scatter, all-gather and broadcast p − 1 and n − 1.
struct RingSteps {
  double steps = 0, inter = 0;
};
[[nodiscard]] RingSteps ring_steps(const GroupShape& shape, CollectiveKind kind);
/// The bottleneck bandwidth and per-step latency of NCCL's double binary tree through the group.
[[nodiscard]] Path tree_path(const Cluster& cluster, const GroupShape& shape, double bytes);
/// The double binary tree's protocol terms moving `sent` at `bandwidth`; without protocols
/// 2·⌈log2 p⌉·`alpha`.
[[nodiscard]] ProtocolTerms tree_terms(const Cluster& cluster, const GroupShape& shape, double sent, double bandwidth, double alpha);

[[nodiscard]] std::optional<Cost> ring_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
/// Hierarchical: two levels (nodes, then between them); three when the group spans sites (nodes, the
/// nodes of each site, then between the sites over the WAN).
[[nodiscard]] std::optional<Cost> hierarchical_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> nvls_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> nvls_tree_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> collnet_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> torus_rings_cost(const Cluster& cluster, const GroupShape& shape, CollectiveKind kind, double bytes);
[[nodiscard]] std::optional<Cost> all_to_all_cost(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group,
                                                  CollectiveKind kind, double bytes);
/// The latency of one message between two devices: α of the link class between them (the WAN's
/// between sites), or hops × α on a torus.
[[nodiscard]] double send_recv_latency(const Cluster& cluster, std::int64_t a, std::int64_t b);
[[nodiscard]] std::optional<Cost> send_recv_cost(const Cluster& cluster, std::span<const std::int64_t> group, CollectiveKind kind,
                                                 double bytes);

}  // namespace parasim::sim::collectives
