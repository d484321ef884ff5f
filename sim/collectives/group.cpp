#include <algorithm>
#include <limits>
#include <vector>
#include <set>

#include "common/error.hpp"
#include "sim/collectives/algorithms.hpp"

namespace parasim::sim::collectives {

double effective_bandwidth(const Link& link, double bandwidth_bytes_per_s, double bytes, CollectiveKind kind) {
  PARASIM_CHECK(bandwidth_bytes_per_s > 0, "link \"" + link.name + "\" has no bandwidth but a collective crosses it");
  return bandwidth_bytes_per_s * link.efficiency_of(kind).at(bytes);
}

GroupShape analyse_group(const Cluster& cluster, std::span<const std::int64_t> group_in) {
  // One pass over the members in increasing order (task-graph groups are: TaskGraphBuilder::group):
  // a node's devices have consecutive ids, so the members of a node, of a NIC or PCIe switch of
  // it, and the nodes of a site or leaf group each come as one run, counted as it ends; a leaf is a
  // leaf group's rail, so its members are counted per rail over the leaf group's run.
  std::vector<std::int64_t> sorted;
  std::span<const std::int64_t> group = group_in;
  if (!std::is_sorted(group.begin(), group.end())) {
    sorted.assign(group.begin(), group.end());
    std::sort(sorted.begin(), sorted.end());
    group = sorted;
  }
  GroupShape shape;
  shape.size = static_cast<std::int64_t>(group.size());
  std::int64_t prev_node = -1, run = 0;
  for (const std::int64_t d : group) {
    const std::int64_t node = cluster.node_of(d);
    if (node != prev_node && run > 0) shape.per_node.push_back(run), run = 0;
    ++run;
    prev_node = node;
  }
  if (run > 0) shape.per_node.push_back(run);
  shape.nodes = static_cast<std::int64_t>(shape.per_node.size());
  shape.min_per_node = shape.size;
  for (const std::int64_t count : shape.per_node) {
    shape.min_per_node = std::min(shape.min_per_node, count);
    shape.max_per_node = std::max(shape.max_per_node, count);
  }
  if (!is_torus(cluster)) {
    std::int64_t switches = 0, leaf_groups = 0;
    std::int64_t node_seen = -1, switch_seen = -1, nic_seen = -1, nic_run = 0;
    std::int64_t site_seen = -1, leaf_group_seen = -1, site_first_leaf_group = -1, site_nodes_run = 0;
    shape.sites = 0;
    shape.min_nodes_per_site = shape.nodes;
    auto end_site = [&] {
      if (site_nodes_run == 0) return;
      shape.min_nodes_per_site = std::min(shape.min_nodes_per_site, site_nodes_run);
      shape.max_nodes_per_site = std::max(shape.max_nodes_per_site, site_nodes_run);
    };
    const std::size_t rails = cluster.rail_optimized ? static_cast<std::size_t>(cluster.nics_per_node) : 1;
    std::vector<std::int64_t> per_rail(rails, 0);  // members of the current leaf group on each rail
    auto end_leaf_group = [&] {
      for (std::int64_t& n : per_rail) {
        shape.max_per_leaf = std::max(shape.max_per_leaf, n);
        n = 0;
      }
    };
    shape.min_leaf_uplink = std::numeric_limits<double>::infinity();
    const std::int64_t site_nodes = cluster.nodes / cluster.sites;
    for (const std::int64_t d : group) {
      const std::int64_t node = cluster.node_of(d);
      const bool new_node = node != node_seen;
      const std::int64_t sw = cluster.pcie_switch_of(d), nic = cluster.nic_of(d);
      if (new_node || sw != switch_seen) ++switches;
      if (new_node || nic != nic_seen) nic_run = 0;
      shape.max_per_nic = std::max(shape.max_per_nic, ++nic_run);
      switch_seen = sw;
      nic_seen = nic;
      if (new_node) {
        const std::int64_t site = cluster.site_of_node(node);
        const std::int64_t leaf_group = site * (site_nodes + 1) + (node - site * site_nodes) / cluster.nodes_per_leaf;
        if (site != site_seen) {
          end_site();
          ++shape.sites;
          site_nodes_run = 0;
          site_first_leaf_group = leaf_group;
        } else if (leaf_group != site_first_leaf_group) {
          shape.spans_leaves_in_site = true;
        }
        ++site_nodes_run;
        if (leaf_group != leaf_group_seen) {
          ++leaf_groups;
          end_leaf_group();
        }
        site_seen = site;
        leaf_group_seen = leaf_group;
        node_seen = node;
      }
      if (cluster.nodes > 1) {
        shape.min_leaf_uplink = std::min(shape.min_leaf_uplink, cluster.leaf_uplink_bandwidth(cluster.leaf_of(d)));
        ++per_rail[cluster.rail_optimized ? static_cast<std::size_t>(nic) : 0];  // Cluster::leaf_of's rail
      }
    }
    end_site();
    end_leaf_group();
    shape.spans_pcie_switches = cluster.intra_kind == IntraNodeKind::PCIe && cluster.pcie_switches > 1 && switches > shape.nodes;
    shape.spans_leaves = leaf_groups > 1;
    shape.spans_sites = shape.sites > 1;
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
