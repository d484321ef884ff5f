#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

double effective_bandwidth(const Link& link, double bandwidth_bytes_per_s, double bytes, CollectiveKind kind) {
  PARASIM_CHECK(bandwidth_bytes_per_s > 0, "link \"" + link.name + "\" has no bandwidth but a collective crosses it");
  return bandwidth_bytes_per_s * link.efficiency_of(kind).at(bytes);
}

GroupShape analyse_group(const Cluster& cluster, std::span<const std::int64_t> group) {
  GroupShape shape;
  shape.size = static_cast<std::int64_t>(group.size());
  std::map<std::int64_t, std::int64_t> members;  // node → members
  for (const std::int64_t d : group) ++members[cluster.node_of(d)];
  shape.nodes = static_cast<std::int64_t>(members.size());
  shape.min_per_node = shape.size;
  for (const auto& [node, count] : members) {
    shape.per_node.push_back(count);
    shape.min_per_node = std::min(shape.min_per_node, count);
    shape.max_per_node = std::max(shape.max_per_node, count);
  }
  if (!is_torus(cluster)) {
    std::set<std::pair<std::int64_t, std::int64_t>> switches;  // (node, switch)
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> per_nic;  // (node, nic) → members
    std::set<std::int64_t> leaf_groups;
    std::map<std::int64_t, std::set<std::int64_t>> site_nodes_of, site_leaves_of;  // site → its nodes, its leaf groups
    std::map<std::int64_t, std::int64_t> per_leaf;  // leaf (per rail) → members
    shape.min_leaf_uplink = std::numeric_limits<double>::infinity();
    const std::int64_t site_nodes = cluster.nodes / cluster.sites;
    for (const std::int64_t d : group) {
      const std::int64_t node = cluster.node_of(d);
      switches.insert({node, cluster.pcie_switch_of(d)});
      shape.max_per_nic = std::max(shape.max_per_nic, ++per_nic[{node, cluster.nic_of(d)}]);
      const std::int64_t site = cluster.site_of_node(node);
      const std::int64_t leaf_group = site * (site_nodes + 1) + (node - site * site_nodes) / cluster.nodes_per_leaf;
      leaf_groups.insert(leaf_group);
      site_nodes_of[site].insert(node);
      site_leaves_of[site].insert(leaf_group);
      if (cluster.nodes > 1) {
        shape.min_leaf_uplink = std::min(shape.min_leaf_uplink, cluster.leaf_uplink_bandwidth(cluster.leaf_of(d)));
        shape.max_per_leaf = std::max(shape.max_per_leaf, ++per_leaf[cluster.leaf_of(d)]);
      }
    }
    shape.spans_pcie_switches = cluster.intra_kind == IntraNodeKind::PCIe && cluster.pcie_switches > 1 &&
                                switches.size() > static_cast<std::size_t>(shape.nodes);
    shape.spans_leaves = leaf_groups.size() > 1;
    shape.spans_sites = site_nodes_of.size() > 1;
    shape.sites = static_cast<std::int64_t>(site_nodes_of.size());
    shape.min_nodes_per_site = shape.nodes;
    for (const auto& [site, nodes] : site_nodes_of) {
      shape.min_nodes_per_site = std::min(shape.min_nodes_per_site, static_cast<std::int64_t>(nodes.size()));
      shape.max_nodes_per_site = std::max(shape.max_nodes_per_site, static_cast<std::int64_t>(nodes.size()));
    }
    for (const auto& [site, leaves] : site_leaves_of) shape.spans_leaves_in_site = shape.spans_leaves_in_site || leaves.size() > 1;
  }
  if (is_torus(cluster)) {
    const std::size_t dims = cluster.torus_dims.size();
    std::vector<std::set<std::int64_t>> coords(dims);
    for (const std::int64_t d : group) {
      const auto c = cluster.torus_coordinates(d);
      for (std::size_t i = 0; i < dims; ++i) coords[i].insert(c[i]);
    }
    std::int64_t product = 1;
    for (std::size_t i = 0; i < dims; ++i) {
      const auto extent = static_cast<std::int64_t>(coords[i].size());
      shape.extents.push_back(extent);
      shape.full_ring.push_back(cluster.torus_wraparound && extent == cluster.torus_dims[i] && extent >= 3);
      product *= extent;
    }
    // The group lies inside the product of its coordinate sets; equal sizes mean it is all of it.
    shape.subgrid = product == shape.size;
  }
  return shape;
}

}  // namespace parasim::sim::collectives
