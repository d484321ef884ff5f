// collective_time: validates the call, analyses the group, evaluates every algorithm that applies,
// and returns the requested one or — for Auto, or when the requested one does not apply — the one
// with the least predicted time, as NCCL's tuner picks among its algorithms by its cost model.
#include <algorithm>
#include <cmath>
#include <set>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"

namespace parasim::sim {

CollectiveEstimate collective_time(const Cluster& cluster, CollectiveKind kind, std::span<const std::int64_t> group, double bytes,
                                   CollectiveAlgorithm algorithm) {
  PARASIM_CHECK(std::isfinite(bytes) && bytes >= 0, "collective of " + std::to_string(bytes) + " bytes");
  std::set<std::int64_t> seen;
  for (const std::int64_t d : group) {
    PARASIM_CHECK(d >= 0 && d < cluster.device_count(), "device " + std::to_string(d) + " is not in the cluster");
    PARASIM_CHECK(seen.insert(d).second, "device " + std::to_string(d) + " appears twice in a collective group");
  }
  PARASIM_CHECK(kind != CollectiveKind::SendRecv || group.size() <= 2, "a send-recv names two devices");

  const CollectiveAlgorithm natural =
      (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv) ? CollectiveAlgorithm::Direct : CollectiveAlgorithm::Ring;
  // Nothing to move: a group of one, or an empty buffer (NCCL returns at once for count 0).
  if (group.size() <= 1 || bytes == 0)
    return CollectiveEstimate{Picoseconds(0), algorithm == CollectiveAlgorithm::Auto ? natural : algorithm, 0, 0};

  const collectives::GroupShape shape = collectives::analyse_group(cluster, group);
  struct Candidate {
    CollectiveAlgorithm algorithm;
    std::optional<collectives::Cost> cost;
  };
  const Candidate candidates[] = {
      {CollectiveAlgorithm::Ring, collectives::ring_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::Tree, collectives::tree_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::Hierarchical, collectives::hierarchical_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::TorusRings, collectives::torus_rings_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::Nvls, collectives::nvls_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::NvlsTree, collectives::nvls_tree_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::CollNet, collectives::collnet_cost(cluster, shape, kind, bytes)},
      {CollectiveAlgorithm::Direct, kind == CollectiveKind::SendRecv ? collectives::send_recv_cost(cluster, group, kind, bytes)
                                                                     : collectives::all_to_all_cost(cluster, shape, group, kind, bytes)},
  };
  const Candidate* chosen = nullptr;
  for (const auto& c : candidates)
    if (c.algorithm == algorithm && c.cost) chosen = &c;
  if (!chosen) {
    // Least predicted time; ties go to the earlier (simpler) algorithm in the list above.
    for (const auto& c : candidates)
      if (c.cost && (!chosen || c.cost->seconds < chosen->cost->seconds)) chosen = &c;
  }
  PARASIM_CHECK(chosen != nullptr, std::string("no algorithm applies to ") + std::string(to_string(kind)));
  // Rounded to picoseconds only here, once, so no per-term rounding accumulates.
  return CollectiveEstimate{Picoseconds::from_seconds(chosen->cost->seconds), chosen->algorithm, chosen->cost->intra_bytes,
                            chosen->cost->inter_bytes};
}

double nccl_channels_across_nodes(const Cluster& cluster, std::span<const std::int64_t> group) {
  if (group.size() <= 1) return 0;
  const collectives::GroupShape shape = collectives::analyse_group(cluster, group);
  if (shape.nodes <= 1 || collectives::is_torus(cluster)) return 0;
  const auto nics = static_cast<double>(std::min(shape.min_per_node, cluster.nics_per_node));
  return std::min(32.0, 2 * std::max(1.0, nics));
}

}  // namespace parasim::sim
