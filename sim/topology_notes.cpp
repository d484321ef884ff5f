#include "sim/topology_notes.hpp"

#include <algorithm>

namespace parasim::sim {
namespace {

/// The scenario fields that set the capacity of a link class.
const char* capacity_fields(LinkClass c) {
  switch (c) {
    case LinkClass::DevicePort: return "cluster.intra_node.link and bandwidth_gbps";
    case LinkClass::PcieUplink: return "cluster.intra_node.pcie_switches and host_bridge_gbps";
    case LinkClass::Nic: return "cluster.inter_node.link, bandwidth_gbps and nics_per_node";
    case LinkClass::LeafUplink: return "cluster.inter_node.oversubscription, nodes_per_leaf and rail_optimized";
    case LinkClass::Torus: return "cluster.inter_node.link and bandwidth_gbps";
    case LinkClass::Wan: return "cluster.wan.bandwidth_gbps";
  }
  return "";
}

/// Every scenario field that describes a link class.
const char* all_fields(LinkClass c) {
  switch (c) {
    case LinkClass::DevicePort: return "cluster.intra_node (link, bandwidth_gbps, latency_us)";
    case LinkClass::PcieUplink: return "cluster.intra_node.pcie_switches and host_bridge_gbps";
    case LinkClass::Nic: return "cluster.inter_node.link, bandwidth_gbps, latency_us and nics_per_node";
    case LinkClass::LeafUplink: return "cluster.inter_node.oversubscription, nodes_per_leaf and rail_optimized";
    case LinkClass::Torus: return "cluster.inter_node (link, bandwidth_gbps, latency_us, torus_dims, torus_wraparound)";
    case LinkClass::Wan: return "cluster.wan (bandwidth_gbps, latency_us)";
  }
  return "";
}

std::string plural(LinkClass c) { return std::string(to_string(c)) + "s"; }

}  // namespace

std::vector<std::string> topology_notes(const Cluster& cluster, const LinkUsage& usage, bool models_contention) {
  std::vector<std::string> notes;
  const auto has = [&](LinkClass c) {
    return std::any_of(usage.classes.begin(), usage.classes.end(), [c](const LinkClassLoad& l) { return l.link_class == c; });
  };
  const bool torus = cluster.inter_kind == InterNodeKind::Torus && !cluster.torus_dims.empty();
  if (!torus && cluster.nodes == 1)
    notes.push_back("The cluster has one node, so no traffic leaves it: cluster.inter_node (link, bandwidth_gbps, latency_us, "
                    "nics_per_node, oversubscription, nodes_per_leaf, rail_optimized) has no effect.");
  else if (!torus && !has(LinkClass::LeafUplink))
    notes.push_back("Every NIC is on one leaf switch, so no traffic crosses the spine: cluster.inter_node.oversubscription, "
                    "nodes_per_leaf and rail_optimized have no effect.");
  if (!torus && cluster.intra_kind == IntraNodeKind::PCIe && cluster.pcie_switches == 1)
    notes.push_back("With one PCIe switch per node no traffic crosses the host bridge: cluster.intra_node.host_bridge_gbps has no effect, "
                    "and more pcie_switches change the result only where a switch's uplink becomes the slowest link of a collective "
                    "(a ring crosses each uplink once each way, at one device link's rate, so it is not slowed while the uplink "
                    "is as fast as a device link).");
  for (const LinkClassLoad& c : usage.classes) {
    if (c.links_used == 0) {
      notes.push_back("No traffic crosses a " + std::string(to_string(c.link_class)) + " in this scenario: " + all_fields(c.link_class) +
                      " " + (c.link_class == LinkClass::Torus || c.link_class == LinkClass::DevicePort || c.link_class == LinkClass::Wan
                                 ? "has"
                                 : "have") +
                      " no effect.");
    } else if (c.bottleneck_phases == 0 && !(models_contention && c.shared_links > 0)) {
      // (Under a backend that shares links, a class whose links carried collectives at the same
      // time can slow them even though it is never one collective's slowest link: no note then.)
      notes.push_back(plural(c.link_class) + " carry traffic but never set a collective's pace (another link is always slower): " +
                      capacity_fields(c.link_class) +
                      (std::string(capacity_fields(c.link_class)).find(" and ") == std::string::npos ? " changes" : " change") +
                      " the result only where they make a " +
                      std::string(to_string(c.link_class)) + " the slowest link of a collective.");
    }
  }
  if (!models_contention && usage.shared_links > 0)
    notes.push_back(std::to_string(usage.shared_links) +
                    " links carried collectives in flight at the same time; the analytical backend gives each collective the whole "
                    "link (it does not model contention): run with --backend simgrid to share them.");
  return notes;
}

}  // namespace parasim::sim
