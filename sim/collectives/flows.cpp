// Collectives as flows: each algorithm of sim/collectives/ decomposed into the point-to-point
// transfers its ranks make, phase by phase, for the SimGrid backend to share links between and for
// link-level accounting. The same notation as the closed forms (S, p, n, k, α, T = bytes each rank
// sends in the algorithm).
//
// Coarsening, so that a thousand-GPU step stays fast: an algorithm's many steps between the same
// two ranks become ONE flow per phase carrying all their bytes, paying the latency of all its steps
// up front. A ring all-reduce is one phase of p flows (rank i → i+1, 2(p−1)/p·S each, latency
// 2(p−1)·α) instead of 2(p−1) rounds of p messages: the ranks of a ring advance in lockstep, so on
// an idle network both take the closed form's time; under contention the coarse flow is slowed
// over the whole phase rather than step by step. Phases that depend on each other (hierarchical:
// reduce-scatter inside nodes, all-reduce between them, all-gather inside) stay separate.
//
// Agreement with the closed forms on an idle network (uncontended_seconds == collective_time):
// exact for ring, hierarchical (two levels, and three across sites), torus rings, NVLS inside one node, CollNet, direct all-to-all (whose switched closed form IS the
// uncontended time of these flows) and send-recv where each device has its own NIC; the double
// binary tree's closed form (and NVLS-tree's, which uses it between nodes) is exact only when some
// node is an inner node of a tree (4 nodes or more, or one node); a send-recv between nodes sharing NICs is slower in the closed form, which
// assumes all the node's devices send at once (its stand-in for contention).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"
#include "sim/topology.hpp"

namespace parasim::sim {
namespace {

using collectives::GroupShape;

struct Members {
  std::vector<std::int64_t> nodes;                 ///< distinct nodes in ascending order
  std::vector<std::vector<std::int64_t>> on_node;  ///< the members of each, ascending
};

Members by_node(const Cluster& cluster, std::span<const std::int64_t> group) {
  std::map<std::int64_t, std::vector<std::int64_t>> m;
  for (const std::int64_t d : group) m[cluster.node_of(d)].push_back(d);
  Members out;
  for (auto& [node, devices] : m) {
    std::sort(devices.begin(), devices.end());
    out.nodes.push_back(node);
    out.on_node.push_back(std::move(devices));
  }
  return out;
}

double intra_efficiency(const Cluster& c, double size, CollectiveKind kind) { return c.intra.efficiency_of(kind).at(size); }
double inter_efficiency(const Cluster& c, double size, CollectiveKind kind) { return c.inter.efficiency_of(kind).at(size); }

/// The order of a ring through a torus sub-grid: boustrophedon (a reflected mixed-radix Gray code
/// over each dimension's used coordinates), so consecutive members are neighbours and, with an even
/// count along the outer dimensions, the last is a wrap-around neighbour of the first.
std::vector<std::int64_t> torus_ring_order(const Cluster& cluster, std::span<const std::int64_t> group) {
  const std::size_t dims = cluster.torus_dims.size();
  std::vector<std::set<std::int64_t>> used(dims);
  for (const std::int64_t d : group) {
    const auto c = cluster.torus_coordinates(d);
    for (std::size_t i = 0; i < dims; ++i) used[i].insert(c[i]);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> keyed;
  for (const std::int64_t d : group) {
    const auto c = cluster.torus_coordinates(d);
    std::int64_t key = 0;
    bool flip = false;
    for (std::size_t i = dims; i-- > 0;) {
      const auto g = static_cast<std::int64_t>(used[i].size());
      std::int64_t position = std::distance(used[i].begin(), used[i].find(c[i]));
      if (flip) position = g - 1 - position;
      key = key * g + position;
      flip = position % 2 == 1;
    }
    keyed.push_back({key, d});
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> order;
  for (const auto& [key, d] : keyed) order.push_back(d);
  return order;
}

/// A chain through `members` (one node's, ascending) that starts at index `entry` and ends at index
/// `exit`: descending from the entry, wrapping round, with the exit moved to the end. Every
/// rotation of a node's members is a valid ring order on a switch; descending from e ends at e + 1,
/// which is what makes successive nodes' crossings rail-aligned (see ring_flows).
std::vector<std::int64_t> chain(const std::vector<std::int64_t>& members, std::int64_t entry, std::int64_t exit) {
  const auto k = static_cast<std::int64_t>(members.size());
  std::vector<std::int64_t> out{members[static_cast<std::size_t>(entry)]};
  for (std::int64_t step = 1; step < k; ++step) {
    const std::int64_t i = ((entry - step) % k + k) % k;
    if (i != exit) out.push_back(members[static_cast<std::size_t>(i)]);
  }
  if (exit != entry) out.push_back(members[static_cast<std::size_t>(exit)]);
  return out;
}

/// Ring algorithms (ring.cpp). One node: one ring in id order (in boustrophedon order on a torus).
/// Several nodes: k = min k_i channels, each carrying T/k; channel c enters node i at local index
/// e_i = (c + i) mod k_i and runs down from it to e_i + 1, where it leaves for node i + 1, whose
/// entry is that same local index — the same NIC rail, so rail-optimised fabrics carry the crossing
/// on one leaf per rail; the last node leaves from index c, node 0's entry. Each device leaves its
/// node in one channel and sends inside it in the others, as ring_path assumes.
CollectiveFlows ring_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, CollectiveKind kind,
                           double S, std::int64_t root) {
  const double p = static_cast<double>(shape.size);
  double T = 0, steps = 0;
  switch (kind) {
    case CollectiveKind::AllReduce: T = 2 * (p - 1) / p * S, steps = 2 * (p - 1); break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather: T = (p - 1) / p * S, steps = p - 1; break;
    case CollectiveKind::Broadcast: T = S, steps = p - 1; break;
    default: PARASIM_CHECK(false, std::string("no ring for ") + std::string(to_string(kind)));
  }
  // The closed form's protocol (ring.cpp): its latency, and its share of every link's bandwidth.
  const collectives::Path path = collectives::ring_path(cluster, shape, S, kind);
  const collectives::RingSteps rs = collectives::ring_steps(shape, kind);
  const double moved = kind == CollectiveKind::Broadcast ? S : T;
  const collectives::ProtocolTerms terms =
      collectives::protocol_terms(cluster, shape, rs.steps - rs.inter, rs.inter, moved, path.bandwidth, steps * path.latency);
  const double latency = terms.latency;
  FlowPhase phase;
  const auto flow = [&](std::int64_t a, std::int64_t b, double bytes) {
    if (kind == CollectiveKind::Broadcast && b == root) return;  // a broadcast chain ends before its root
    const double eff = collectives::is_torus(cluster) || cluster.node_of(a) != cluster.node_of(b) ? inter_efficiency(cluster, S, kind)
                                                                                                  : intra_efficiency(cluster, S, kind);
    phase.flows.push_back(Flow{a, b, bytes, latency, eff * terms.fraction});
  };
  if (collectives::is_torus(cluster) || shape.nodes == 1) {
    const std::vector<std::int64_t> order = collectives::is_torus(cluster) ? torus_ring_order(cluster, group)
                                                                           : std::vector<std::int64_t>(group.begin(), group.end());
    for (std::size_t i = 0; i < order.size(); ++i) flow(order[i], order[(i + 1) % order.size()], T);
    return CollectiveFlows{{std::move(phase)}};
  }
  const Members m = by_node(cluster, group);
  const std::int64_t n = shape.nodes;
  const std::int64_t channels = shape.min_per_node;
  for (std::int64_t c = 0; c < channels; ++c) {
    std::vector<std::vector<std::int64_t>> chains;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& members = m.on_node[static_cast<std::size_t>(i)];
      const auto k = static_cast<std::int64_t>(members.size());
      const std::int64_t entry = (c + i) % k;
      std::int64_t exit = i + 1 < n ? (entry + 1) % k : c % k;
      if (exit == entry && k > 1) exit = (entry + 1) % k;
      chains.push_back(chain(members, entry, exit));
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const auto& ch = chains[static_cast<std::size_t>(i)];
      for (std::size_t j = 0; j + 1 < ch.size(); ++j) flow(ch[j], ch[j + 1], T / static_cast<double>(channels));
      flow(ch.back(), chains[static_cast<std::size_t>((i + 1) % n)].front(), T / static_cast<double>(channels));
    }
  }
  return CollectiveFlows{{std::move(phase)}};
}

/// NCCL's double binary tree over n nodes (ncclGetBtree / ncclGetDtree, NCCL src/graph/trees.cc):
/// the parent of each node in tree 0 and tree 1, −1 for a root.
std::int64_t btree_parent(std::int64_t n, std::int64_t rank) {
  if (rank == 0) return -1;
  std::int64_t bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  std::int64_t up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}
std::int64_t dtree_parent(std::int64_t n, std::int64_t rank, int tree) {
  if (tree == 0) return btree_parent(n, rank);
  if (n % 2 == 1) {  // shifted by one
    const std::int64_t u = btree_parent(n, (rank - 1 + n) % n);
    return u < 0 ? -1 : (u + 1) % n;
  }
  const std::int64_t u = btree_parent(n, n - 1 - rank);  // mirrored
  return u < 0 ? -1 : n - 1 - u;
}

/// The double binary tree between `n` nodes: each tree edge carries S/2 up and S/2 down, split over
/// the nodes' first k members (channel c joins member c of each node).
void add_double_tree_flows(const Cluster& cluster, const Members& m, std::int64_t n, std::int64_t k, double S, double latency,
                           FlowPhase& phase, double fraction = 1) {
  for (int tree = 0; tree < 2; ++tree)
    for (std::int64_t child = 0; child < n; ++child) {
      const std::int64_t parent = dtree_parent(n, child, tree);
      if (parent < 0) continue;
      for (std::int64_t c = 0; c < k; ++c) {
        const std::int64_t a = m.on_node[static_cast<std::size_t>(child)][static_cast<std::size_t>(c)];
        const std::int64_t b = m.on_node[static_cast<std::size_t>(parent)][static_cast<std::size_t>(c)];
        const double bytes = S / 2 / static_cast<double>(k);
        phase.flows.push_back(Flow{a, b, bytes, latency, inter_efficiency(cluster, S, CollectiveKind::AllReduce) * fraction});
        phase.flows.push_back(Flow{b, a, bytes, latency, inter_efficiency(cluster, S, CollectiveKind::AllReduce) * fraction});
      }
    }
}

/// Double binary tree (tree.cpp): inside each node a chain of its members, S each way on every
/// edge; between nodes the two trees' edges, each carrying S/2 up and S/2 down, split over the
/// node's k members (channel c joins member c of each node). One phase: reduce and broadcast are
/// pipelined. Latency 2·⌈log2 p⌉·α.
CollectiveFlows tree_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, double S) {
  // The closed form's protocol (tree.cpp): its latency, and its share of every flow's bandwidth.
  const collectives::Path path = collectives::tree_path(cluster, shape, S);
  const collectives::ProtocolTerms terms = collectives::tree_terms(cluster, shape, 2 * S, path.bandwidth, path.latency);
  const double latency = terms.latency;
  const Members m = by_node(cluster, group);
  FlowPhase phase;
  for (const auto& members : m.on_node)
    for (std::size_t j = 0; j + 1 < members.size(); ++j) {
      phase.flows.push_back(Flow{members[j], members[j + 1], S, latency, intra_efficiency(cluster, S, CollectiveKind::AllReduce) * terms.fraction});
      phase.flows.push_back(Flow{members[j + 1], members[j], S, latency, intra_efficiency(cluster, S, CollectiveKind::AllReduce) * terms.fraction});
    }
  add_double_tree_flows(cluster, m, shape.nodes, shape.min_per_node, S, latency, phase, terms.fraction);
  return CollectiveFlows{{std::move(phase)}};
}

/// Hierarchical (hierarchical.cpp): a ring inside every node over its k members moving
/// (k−1)/k·S per rank; k rings between nodes, one per local rank j, moving 2(n−1)/n·S/k per rank for
/// an all-reduce ((n−1)/n·S/k for the halves); then the intra-node ring again. Reduce-scatter is
/// intra then inter; all-gather inter then intra.
/// Across sites (hierarchical.cpp, three levels): the ring inside every node (k members, (k−1)/k·S
/// per rank), k rings between the m nodes of every site on the S/k shard ((m−1)/m·S/k per rank),
/// k·m rings between the s sites on the S/(k·m) shard ((s−1)/s of it per rank and half), then back.
/// A level of one member per ring moves nothing and has no phase.
CollectiveFlows site_hierarchical_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group,
                                        CollectiveKind kind, double S) {
  const Members members = by_node(cluster, group);
  const double k = static_cast<double>(shape.max_per_node), m = static_cast<double>(shape.max_nodes_per_site),
               s = static_cast<double>(shape.sites);
  // site → its nodes' member lists, in ascending order.
  std::map<std::int64_t, std::vector<const std::vector<std::int64_t>*>> sites;
  for (std::size_t i = 0; i < members.nodes.size(); ++i) sites[cluster.site_of_node(members.nodes[i])].push_back(&members.on_node[i]);
  std::vector<std::vector<const std::vector<std::int64_t>*>> by_site;
  for (auto& [site, nodes] : sites) by_site.push_back(std::move(nodes));
  FlowPhase intra, site, wan;
  if (k >= 2)
    for (const auto& on_node : members.on_node)
      for (std::size_t j = 0; j < on_node.size(); ++j)
        intra.flows.push_back(Flow{on_node[j], on_node[(j + 1) % on_node.size()], (k - 1) / k * S, (k - 1) * cluster.intra.latency_s,
                                   intra_efficiency(cluster, S, kind)});
  const double shard2 = S / k, shard3 = shard2 / m;
  if (m >= 2)
    for (const auto& nodes : by_site)
      for (std::size_t i = 0; i < nodes.size(); ++i)
        for (std::size_t j = 0; j < nodes[i]->size(); ++j)
          site.flows.push_back(Flow{(*nodes[i])[j], (*nodes[(i + 1) % nodes.size()])[j], (m - 1) / m * shard2, (m - 1) * cluster.inter.latency_s,
                                    inter_efficiency(cluster, shard2, kind)});
  const double passes = kind == CollectiveKind::AllReduce ? 2 : 1;
  for (std::size_t t = 0; t < by_site.size(); ++t)
    for (std::size_t i = 0; i < by_site[t].size(); ++i)
      for (std::size_t j = 0; j < by_site[t][i]->size(); ++j)
        wan.flows.push_back(Flow{(*by_site[t][i])[j], (*by_site[(t + 1) % by_site.size()][i])[j], passes * (s - 1) / s * shard3,
                                 passes * (s - 1) * cluster.wan.latency_s, inter_efficiency(cluster, shard3, kind)});
  std::vector<FlowPhase> down, up;  // reduce-scatter levels inward, all-gather levels outward
  if (!intra.flows.empty()) down.push_back(intra);
  if (!site.flows.empty()) down.push_back(site);
  up.assign(down.rbegin(), down.rend());
  CollectiveFlows out;
  switch (kind) {
    case CollectiveKind::AllReduce:
      out.phases = down;
      out.phases.push_back(std::move(wan));
      out.phases.insert(out.phases.end(), up.begin(), up.end());
      break;
    case CollectiveKind::ReduceScatter:
      out.phases = down;
      out.phases.push_back(std::move(wan));
      break;
    case CollectiveKind::AllGather:
      out.phases.push_back(std::move(wan));
      out.phases.insert(out.phases.end(), up.begin(), up.end());
      break;
    default: PARASIM_CHECK(false, std::string("no hierarchical ") + std::string(to_string(kind)));
  }
  return out;
}

CollectiveFlows hierarchical_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group,
                                   CollectiveKind kind, double S) {
  if (shape.spans_sites) return site_hierarchical_flows(cluster, shape, group, kind, S);
  const Members m = by_node(cluster, group);
  const double k = static_cast<double>(shape.max_per_node);
  const double n = static_cast<double>(shape.nodes);
  const double shard = S / k;
  FlowPhase intra, inter;
  for (const auto& members : m.on_node)
    for (std::size_t j = 0; j < members.size(); ++j)
      intra.flows.push_back(Flow{members[j], members[(j + 1) % members.size()], (k - 1) / k * S, (k - 1) * cluster.intra.latency_s,
                                 intra_efficiency(cluster, S, kind)});
  const double passes = kind == CollectiveKind::AllReduce ? 2 : 1;
  const double alpha = collectives::inter_latency(cluster, shape);
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    for (std::size_t j = 0; j < m.on_node[i].size(); ++j)
      inter.flows.push_back(Flow{m.on_node[i][j], m.on_node[(i + 1) % m.nodes.size()][j], passes * (n - 1) / n * shard,
                                 passes * (n - 1) * alpha, inter_efficiency(cluster, shard, kind)});
  switch (kind) {
    case CollectiveKind::AllReduce: return CollectiveFlows{{intra, std::move(inter), intra}};
    case CollectiveKind::ReduceScatter: return CollectiveFlows{{std::move(intra), std::move(inter)}};
    case CollectiveKind::AllGather: return CollectiveFlows{{std::move(inter), std::move(intra)}};
    default: PARASIM_CHECK(false, std::string("no hierarchical ") + std::string(to_string(kind)));
  }
  return {};
}

/// NVLS inside each node (nvls.cpp), as flows between the node's members: the switch's reduction and
/// multicast have no device-to-device counterpart, so each member sends every other (p+1)/(p(p−1))·S,
/// which puts on every port the (p+1)/p · S each way of the closed form; the flows run at the NVLS
/// efficiency scaled to the port's line rate (the in-switch link's rate may differ from the ring's).
void nvls_node_flows(const Cluster& cluster, const std::vector<std::int64_t>& members, double S, double latency, FlowPhase& phase) {
  const double k = static_cast<double>(members.size());
  const double eff = cluster.nvls.efficiency.at(S) * cluster.nvls.bandwidth_bytes_per_s / cluster.intra.bandwidth_bytes_per_s;
  for (const std::int64_t a : members)
    for (const std::int64_t b : members)
      if (a != b) phase.flows.push_back(Flow{a, b, (k + 1) / (k * (k - 1)) * S, latency, eff});
}

/// NVLS (one node) and NVLS-tree (nvls.cpp): one phase, the in-switch stage of every node and, across
/// nodes, the double binary tree's flows of tree_flows, pipelined; every flow pays the whole latency
/// α_nvls + 2⌈log2 n⌉·α_inter, so the phase takes that plus its busiest link's time, the closed form.
CollectiveFlows nvls_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, double S) {
  const std::int64_t n = shape.nodes;
  const double latency =
      cluster.nvls.latency_s + (n > 1 ? 2 * std::ceil(std::log2(static_cast<double>(n))) * collectives::inter_latency(cluster, shape) : 0);
  const Members m = by_node(cluster, group);
  FlowPhase phase;
  for (const auto& members : m.on_node) nvls_node_flows(cluster, members, S, latency, phase);
  if (n > 1) add_double_tree_flows(cluster, m, n, shape.min_per_node, S, latency, phase);
  return CollectiveFlows{{std::move(phase)}};
}

/// InfiniBand SHARP (collnet.cpp), pipelined in one phase: the intra-node ring carrying both the
/// reduce-scatter and the all-gather (2(k−1)/k · S per rank), and the members' S/k shards through
/// the switches. The switches' reduction has no device-to-device counterpart: local rank j of each
/// node sends its shard to local rank j of the next node, which puts the closed form's S/k each way
/// on every NIC. Every flow pays the whole latency 2(k−1)·α_intra + 2·α_inter.
CollectiveFlows collnet_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, double S) {
  const Members m = by_node(cluster, group);
  const double k = static_cast<double>(shape.max_per_node);
  const double shard = S / k;
  const double latency =
      2 * collectives::inter_latency(cluster, shape) + (shape.max_per_node > 1 ? 2 * (k - 1) * cluster.intra.latency_s : 0);
  FlowPhase phase;
  if (shape.max_per_node > 1)
    for (const auto& members : m.on_node)
      for (std::size_t j = 0; j < members.size(); ++j)
        phase.flows.push_back(Flow{members[j], members[(j + 1) % members.size()], 2 * (k - 1) / k * S, latency, intra_efficiency(cluster, S, CollectiveKind::AllReduce)});
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    for (std::size_t j = 0; j < m.on_node[i].size(); ++j)
      phase.flows.push_back(Flow{m.on_node[i][j], m.on_node[(i + 1) % m.nodes.size()][j], shard, latency, inter_efficiency(cluster, shard, CollectiveKind::AllReduce)});
  return CollectiveFlows{{std::move(phase)}};
}

/// Torus rings (torus.cpp): one pass per active dimension, the bidirectional (full-ring) ones
/// first; in a pass every line of the sub-grid along that dimension runs a ring over its g chips
/// moving (g−1)/g of the pass's data D — both ways at once on a full ring with wrap-around (half
/// each way), one way on a line (whose closing edge runs back along the line). Reduce-scatter
/// passes in that order, all-gather in the reverse order, all-reduce both.
CollectiveFlows torus_rings_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group,
                                  CollectiveKind kind, double S) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < shape.extents.size(); ++i)
    if (shape.extents[i] > 1) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return shape.full_ring[a] && !shape.full_ring[b]; });
  const std::size_t dims = cluster.torus_dims.size();
  std::vector<FlowPhase> passes;
  double data = S;
  for (const std::size_t dim : order) {
    // Lines along `dim`: members sharing every other coordinate, ordered by their coordinate in `dim`.
    std::map<std::vector<std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> lines;
    for (const std::int64_t d : group) {
      auto c = cluster.torus_coordinates(d);
      const std::int64_t along = c[dim];
      c[dim] = -1;
      lines[c].push_back({along, d});
    }
    const double g = static_cast<double>(shape.extents[dim]);
    const bool both = shape.full_ring[dim];
    const double bytes = (g - 1) / g * data / (both ? 2 : 1);
    const double latency = (g - 1) * cluster.inter.latency_s;
    const double eff = inter_efficiency(cluster, data, kind);
    FlowPhase pass;
    for (auto& [key, line] : lines) {
      std::sort(line.begin(), line.end());
      for (std::size_t j = 0; j < line.size(); ++j) {
        const std::int64_t a = line[j].second, b = line[(j + 1) % line.size()].second;
        pass.flows.push_back(Flow{a, b, bytes, latency, eff});
        if (both) pass.flows.push_back(Flow{b, a, bytes, latency, eff});
      }
    }
    passes.push_back(std::move(pass));
    data /= g;
  }
  (void)dims;
  CollectiveFlows out;
  if (kind != CollectiveKind::AllGather) out.phases = passes;
  if (kind != CollectiveKind::ReduceScatter) out.phases.insert(out.phases.end(), passes.rbegin(), passes.rend());
  return out;
}

/// Direct all-to-all (all_to_all.cpp): every member sends S/p to every other at once. One latency
/// for all: on a switched fabric the slowest member's messages, max_i((k_i−1)·α_intra, (p−k_i)·α_inter);
/// on a torus Σ(g_i − 1)·α of a dimension-ordered exchange.
CollectiveFlows all_to_all_flows(const Cluster& cluster, const GroupShape& shape, std::span<const std::int64_t> group, double S) {
  const double p = static_cast<double>(shape.size);
  double latency = 0;
  if (collectives::is_torus(cluster)) {
    for (const std::int64_t e : shape.extents) latency += static_cast<double>(e - 1) * cluster.inter.latency_s;
  } else {
    for (const std::int64_t members : shape.per_node) {
      const double k = static_cast<double>(members);
      if (members > 1) latency = std::max(latency, (k - 1) * cluster.intra.latency_s);
      if (members < shape.size) latency = std::max(latency, (p - k) * collectives::inter_latency(cluster, shape));
    }
  }
  FlowPhase phase;
  phase.flows.reserve(group.size() * (group.size() - 1));
  for (const std::int64_t a : group)
    for (const std::int64_t b : group) {
      if (a == b) continue;
      const bool inside = !collectives::is_torus(cluster) && cluster.node_of(a) == cluster.node_of(b);
      phase.flows.push_back(Flow{a, b, S / p, latency, inside ? intra_efficiency(cluster, S, CollectiveKind::AllToAll) : inter_efficiency(cluster, S, CollectiveKind::AllToAll)});
    }
  return CollectiveFlows{{std::move(phase)}};
}

}  // namespace

namespace collectives {

/// Send-recv latency: one step between two devices (send_recv.cpp).
double send_recv_latency(const Cluster& cluster, std::int64_t a, std::int64_t b) {
  if (is_torus(cluster)) {
    const auto ca = cluster.torus_coordinates(a);
    const auto cb = cluster.torus_coordinates(b);
    double hops = 0;
    for (std::size_t i = 0; i < ca.size(); ++i) {
      const std::int64_t d = std::llabs(ca[i] - cb[i]);
      hops += static_cast<double>(cluster.torus_wraparound ? std::min(d, cluster.torus_dims[i] - d) : d);
    }
    return hops * cluster.inter.latency_s;
  }
  if (cluster.node_of(a) == cluster.node_of(b)) return cluster.intra.latency_s;
  if (cluster.site_of_node(cluster.node_of(a)) != cluster.site_of_node(cluster.node_of(b))) return cluster.wan.latency_s;
  return cluster.inter.latency_s;
}

}  // namespace collectives

CollectiveFlows collective_flows(const Cluster& cluster, CollectiveKind kind, std::span<const std::int64_t> group, double bytes,
                                 CollectiveAlgorithm algorithm, std::int64_t root) {
  PARASIM_CHECK(algorithm != CollectiveAlgorithm::Auto, "collective_flows needs the algorithm collective_time resolved");
  PARASIM_CHECK(std::isfinite(bytes) && bytes >= 0, "collective of " + std::to_string(bytes) + " bytes");
  if (group.size() <= 1 || bytes == 0) return {};
  const GroupShape shape = collectives::analyse_group(cluster, group);
  const std::int64_t first = root >= 0 ? root : group[0];
  switch (algorithm) {
    case CollectiveAlgorithm::Ring: return ring_flows(cluster, shape, group, kind, bytes, first);
    case CollectiveAlgorithm::Tree:
      PARASIM_CHECK(kind == CollectiveKind::AllReduce, "a tree runs all-reduce only");
      return tree_flows(cluster, shape, group, bytes);
    case CollectiveAlgorithm::Hierarchical: return hierarchical_flows(cluster, shape, group, kind, bytes);
    case CollectiveAlgorithm::TorusRings: return torus_rings_flows(cluster, shape, group, kind, bytes);
    case CollectiveAlgorithm::Nvls:
    case CollectiveAlgorithm::NvlsTree:
      PARASIM_CHECK(kind == CollectiveKind::AllReduce && cluster.has_nvls(), "NVLS runs all-reduce on NVLink SHARP nodes only");
      return nvls_flows(cluster, shape, group, bytes);
    case CollectiveAlgorithm::CollNet:
      PARASIM_CHECK(kind == CollectiveKind::AllReduce && cluster.sharp, "CollNet runs all-reduce on a fat-tree with SHARP only");
      return collnet_flows(cluster, shape, group, bytes);
    case CollectiveAlgorithm::Direct:
      if (kind == CollectiveKind::SendRecv) {
        PARASIM_CHECK(group.size() == 2, "a send-recv names exactly two devices");
        const std::int64_t dst = group[0] == first ? group[1] : group[0];
        const bool inside = !collectives::is_torus(cluster) && cluster.node_of(first) == cluster.node_of(dst);
        return CollectiveFlows{{FlowPhase{{Flow{first, dst, bytes, collectives::send_recv_latency(cluster, first, dst),
                                                inside ? intra_efficiency(cluster, bytes, kind) : inter_efficiency(cluster, bytes, kind)}}}}};
      }
      PARASIM_CHECK(kind == CollectiveKind::AllToAll, "direct runs all-to-all and send-recv only");
      return all_to_all_flows(cluster, shape, group, bytes);
    case CollectiveAlgorithm::Auto: break;
  }
  return {};
}

double uncontended_seconds(const Cluster& cluster, const CollectiveFlows& flows) {
  const LinkLayout layout = link_layout(cluster);
  std::vector<LinkId> path;
  double total = 0;
  for (const FlowPhase& phase : flows.phases) {
    // Per latency, the wire bytes (bytes / efficiency) on each link.
    std::map<double, std::map<LinkId, double>> loads;
    for (const Flow& f : phase.flows) {
      path.clear();
      route(cluster, layout, f.src, f.dst, path);
      auto& on = loads[f.latency_s];
      for (const LinkId l : path) on[l] += f.bytes / f.efficiency;
    }
    double phase_s = 0;
    for (const auto& [latency, on] : loads) {
      double busiest = 0;
      for (const auto& [l, wire] : on) busiest = std::max(busiest, wire / link_of(cluster, layout, l).bandwidth_bytes_per_s);
      phase_s = std::max(phase_s, latency + busiest);
    }
    total += phase_s;
  }
  return total;
}

}  // namespace parasim::sim
