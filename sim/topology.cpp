// Link layout. Each block holds up/down pairs (up = even id: out of the device, towards the spine;
// down = odd id) or, for the torus, 2 × dims links per chip:
//   device ports  2 per device                      switched clusters
//   PCIe uplinks  2 per (node, switch)               only PCIe nodes with more than one switch
//   NICs          2 per (node, NIC)                  only fat-trees of more than one node
//   leaf uplinks  2 per leaf                         only with more than one leaf
//   torus links   2 · dims per chip: (dim, +) then (dim, −)
//   WAN links     2 per site                         only with more than one site
#include "sim/topology.hpp"

#include <cstdlib>

#include "common/error.hpp"

namespace parasim::sim {

std::string_view to_string(LinkClass c) {
  switch (c) {
    case LinkClass::DevicePort: return "device port";
    case LinkClass::PcieUplink: return "PCIe uplink";
    case LinkClass::Nic: return "NIC";
    case LinkClass::LeafUplink: return "leaf uplink";
    case LinkClass::Torus: return "torus link";
    case LinkClass::Wan: return "WAN";
  }
  return "device port";
}

std::string_view link_class_key(LinkClass c) {
  switch (c) {
    case LinkClass::DevicePort: return "device_port";
    case LinkClass::PcieUplink: return "pcie_uplink";
    case LinkClass::Nic: return "nic";
    case LinkClass::LeafUplink: return "leaf_uplink";
    case LinkClass::Torus: return "torus";
    case LinkClass::Wan: return "wan";
  }
  return "device_port";
}

namespace {

bool has_pcie_uplinks(const Cluster& c) { return c.intra_kind == IntraNodeKind::PCIe && c.pcie_switches > 1; }
bool is_torus_net(const Cluster& c) { return c.inter_kind == InterNodeKind::Torus && !c.torus_dims.empty(); }
bool has_nics(const Cluster& c) { return !is_torus_net(c) && c.nodes > 1; }

/// The PCIe switch a NIC hangs off: NICs spread over the switches in equal consecutive shares.
std::int64_t nic_switch(const Cluster& c, std::int64_t nic) { return nic * c.pcie_switches / c.nics_per_node; }

LinkId up(LinkId base, std::int64_t index) { return static_cast<LinkId>(base + 2 * index); }
LinkId down(LinkId base, std::int64_t index) { return static_cast<LinkId>(base + 2 * index + 1); }

void torus_route(const Cluster& c, const LinkLayout& layout, std::int64_t src, std::int64_t dst, std::vector<LinkId>& out) {
  const auto dims = static_cast<std::int64_t>(c.torus_dims.size());
  std::int64_t at = src;
  std::int64_t stride = 1;
  for (std::int64_t i = 0; i < dims; ++i) {
    const std::int64_t g = c.torus_dims[static_cast<std::size_t>(i)];
    const std::int64_t from = (src / stride) % g;
    const std::int64_t to = (dst / stride) % g;
    if (from != to) {
      const std::int64_t forward = (to - from + g) % g;  // hops the positive way
      bool plus = to > from;
      std::int64_t hops = std::llabs(to - from);
      if (c.torus_wraparound) {
        if (2 * forward < g) plus = true;
        else if (2 * forward > g) plus = false;
        else plus = from % 2 == 0;  // a tie: split the load by the source's parity
        hops = plus ? forward : g - forward;
      }
      for (std::int64_t h = 0; h < hops; ++h) {
        const std::int64_t coord = (at / stride) % g;
        out.push_back(static_cast<LinkId>(layout.torus + 2 * (at * dims + i) + (plus ? 0 : 1)));
        const std::int64_t next = plus ? (coord + 1) % g : (coord - 1 + g) % g;
        at += (next - coord) * stride;
      }
    }
    stride *= g;
  }
  PARASIM_CHECK(at == dst, "torus route from " + std::to_string(src) + " ends at " + std::to_string(at) + ", not " + std::to_string(dst));
}

}  // namespace

LinkLayout link_layout(const Cluster& c) {
  LinkLayout l;
  LinkId next = 0;
  const auto block = [&next](std::int64_t links) {
    const LinkId first = next;
    next = static_cast<LinkId>(next + links);
    return first;
  };
  const bool torus = is_torus_net(c);
  l.ports = block(torus ? 0 : 2 * c.device_count());
  l.pcie = block(!torus && has_pcie_uplinks(c) ? 2 * c.nodes * c.pcie_switches : 0);
  l.nics = block(has_nics(c) ? 2 * c.nodes * c.nics_per_node : 0);
  l.leaves = block(has_nics(c) && c.leaf_count() > 1 ? 2 * c.leaf_count() : 0);
  l.torus = block(torus ? 2 * c.device_count() * static_cast<std::int64_t>(c.torus_dims.size()) : 0);
  l.wan = block(has_nics(c) && c.sites > 1 ? 2 * c.sites : 0);
  l.end = next;
  return l;
}

TopologyLink link_of(const Cluster& c, const LinkLayout& layout, LinkId id) {
  PARASIM_CHECK(id < layout.end, "link " + std::to_string(id) + " out of range");
  if (id >= layout.wan) return {LinkClass::Wan, c.wan.bandwidth_bytes_per_s};
  if (id >= layout.torus) return {LinkClass::Torus, c.inter.bandwidth_bytes_per_s};
  if (id >= layout.leaves) return {LinkClass::LeafUplink, c.leaf_uplink_bandwidth((id - layout.leaves) / 2)};
  if (id >= layout.nics) return {LinkClass::Nic, c.inter.bandwidth_bytes_per_s};
  if (id >= layout.pcie) return {LinkClass::PcieUplink, c.host_bridge.bandwidth_bytes_per_s};
  return {LinkClass::DevicePort, c.intra.bandwidth_bytes_per_s};
}

std::string link_name(const Cluster& c, const LinkLayout& layout, LinkId id) {
  PARASIM_CHECK(id < layout.end, "link " + std::to_string(id) + " out of range");
  const char* dir = id % 2 == 0 ? "up" : "down";
  if (id >= layout.wan) return "site" + std::to_string((id - layout.wan) / 2) + " WAN " + dir;
  if (id >= layout.torus) {
    const std::int64_t dims = static_cast<std::int64_t>(c.torus_dims.size());
    const std::int64_t k = id - layout.torus;
    const std::int64_t chip = k / (2 * dims);
    const std::int64_t dim = (k % (2 * dims)) / 2;
    return "chip" + std::to_string(chip) + " dim" + std::to_string(dim) + (k % 2 == 0 ? "+" : "-") + " link";
  }
  if (id >= layout.leaves) return "leaf" + std::to_string((id - layout.leaves) / 2) + " uplink " + dir;
  if (id >= layout.nics) {
    const std::int64_t k = (id - layout.nics) / 2;
    return "node" + std::to_string(k / c.nics_per_node) + "/nic" + std::to_string(k % c.nics_per_node) + " " + dir;
  }
  if (id >= layout.pcie) {
    const std::int64_t k = (id - layout.pcie) / 2;
    return "node" + std::to_string(k / c.pcie_switches) + "/pcie-switch" + std::to_string(k % c.pcie_switches) + " uplink " + dir;
  }
  const std::int64_t device = (id - layout.ports) / 2;
  return "node" + std::to_string(c.node_of(device)) + "/device" + std::to_string(c.local_index(device)) + " port " + dir;
}

void route(const Cluster& c, const LinkLayout& layout, std::int64_t src, std::int64_t dst, std::vector<LinkId>& out) {
  PARASIM_CHECK(src >= 0 && src < c.device_count() && dst >= 0 && dst < c.device_count(),
                "route between devices " + std::to_string(src) + " and " + std::to_string(dst) + " of " + std::to_string(c.device_count()));
  if (src == dst) return;
  if (is_torus_net(c)) {
    torus_route(c, layout, src, dst, out);
    return;
  }
  const std::int64_t ns = c.node_of(src), nd = c.node_of(dst);
  const bool pcie = has_pcie_uplinks(c);
  const std::int64_t ss = c.pcie_switch_of(src), sd = c.pcie_switch_of(dst);
  if (ns == nd) {
    out.push_back(up(layout.ports, src));
    if (pcie && ss != sd) {
      out.push_back(up(layout.pcie, ns * c.pcie_switches + ss));
      out.push_back(down(layout.pcie, ns * c.pcie_switches + sd));
    }
    out.push_back(down(layout.ports, dst));
    return;
  }
  PARASIM_CHECK(has_nics(c), "a route between nodes of a cluster without an inter-node network");
  const std::int64_t nic_s = c.nic_of(src), nic_d = c.nic_of(dst);
  // On a PCIe node the device reaches its NIC over its own PCIe link (and the switches' uplinks when
  // the NIC hangs off another switch).
  if (c.intra_kind == IntraNodeKind::PCIe) {
    out.push_back(up(layout.ports, src));
    if (pcie && nic_switch(c, nic_s) != ss) {
      out.push_back(up(layout.pcie, ns * c.pcie_switches + ss));
      out.push_back(down(layout.pcie, ns * c.pcie_switches + nic_switch(c, nic_s)));
    }
  }
  out.push_back(up(layout.nics, ns * c.nics_per_node + nic_s));
  const std::int64_t ls = c.leaf_of(src), ld = c.leaf_of(dst);
  if (ls != ld) {
    out.push_back(up(layout.leaves, ls));
    const std::int64_t site_s = c.site_of_node(ns), site_d = c.site_of_node(nd);
    if (site_s != site_d) {
      out.push_back(up(layout.wan, site_s));
      out.push_back(down(layout.wan, site_d));
    }
    out.push_back(down(layout.leaves, ld));
  }
  out.push_back(down(layout.nics, nd * c.nics_per_node + nic_d));
  if (c.intra_kind == IntraNodeKind::PCIe) {
    if (pcie && nic_switch(c, nic_d) != sd) {
      out.push_back(up(layout.pcie, nd * c.pcie_switches + nic_switch(c, nic_d)));
      out.push_back(down(layout.pcie, nd * c.pcie_switches + sd));
    }
    out.push_back(down(layout.ports, dst));
  }
}

void device_links(const Cluster& c, const LinkLayout& layout, std::int64_t device, std::vector<LinkId>& out) {
  PARASIM_CHECK(device >= 0 && device < c.device_count(), "device " + std::to_string(device) + " is not in the cluster");
  if (is_torus_net(c)) return;
  out.push_back(up(layout.ports, device));
  out.push_back(down(layout.ports, device));
  if (has_nics(c) && c.nics_per_node == c.devices_per_node) {
    const std::int64_t nic = c.node_of(device) * c.nics_per_node + c.nic_of(device);
    out.push_back(up(layout.nics, nic));
    out.push_back(down(layout.nics, nic));
  }
}

}  // namespace parasim::sim
