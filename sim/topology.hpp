#pragma once
/// The links of a Cluster one by one, and the route between any two devices: what the SimGrid
/// backend builds its platform from and what link-level accounting (sim/links.hpp) counts bytes on.
///
/// Every link here is one direction of a physical link (a split-duplex link is two), with its own
/// capacity, so traffic each way is shared separately. Link classes:
///  - device port: a device's link into its node's switch (NVLink into an NVSwitch, or a PCIe x16
///    link into a PCIe switch); an NVSwitch (or one PCIe switch) is a non-blocking star of ports;
///  - PCIe uplink: a PCIe switch's link to the host bridge, crossed between switches of one node;
///  - NIC: a network adapter's port into its leaf switch;
///  - leaf uplink: a leaf switch's links to the spine, one aggregate per leaf of the leaf's NIC
///    ports × NIC bandwidth / oversubscription (the spine itself is non-blocking);
///  - torus: one chip-to-neighbour link of a 2D/3D torus (TPU ICI), per dimension and direction;
///  - WAN: a site's link to the wide-area network joining the sites.
///
/// Routes. Inside a node: source port, [uplinks of the two PCIe switches], destination port.
/// Between nodes: [PCIe ports and uplinks to the NIC on PCIe nodes], source NIC, [source leaf
/// uplink, [both sites' WAN links], destination leaf uplink when the leaves differ], destination
/// NIC, [PCIe to the device]. NVSwitch nodes reach their NICs directly (GPUDirect RDMA through a
/// PCIe switch that is not modelled). On a torus: dimension-ordered routing, dimension 0 first,
/// the shorter way round; a tie (exactly half way round a ring) goes the positive way from an even
/// coordinate and the negative way from an odd one, so all-to-all traffic loads both directions
/// equally.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.hpp"

namespace parasim::sim {

enum class LinkClass : std::uint8_t { DevicePort, PcieUplink, Nic, LeafUplink, Torus, Wan };
inline constexpr int kLinkClassCount = 6;
/// "device port", "PCIe uplink", "NIC", "leaf uplink", "torus link", "WAN".
[[nodiscard]] std::string_view to_string(LinkClass c);
/// The identifier used in result.json: "device_port", "pcie_uplink", "nic", "leaf_uplink", "torus", "wan".
[[nodiscard]] std::string_view link_class_key(LinkClass c);

using LinkId = std::uint32_t;

/// One direction of one physical link.
struct TopologyLink {
  LinkClass link_class = LinkClass::DevicePort;
  double bandwidth_bytes_per_s = 0;  ///< raw, before any efficiency
  bool operator==(const TopologyLink&) const = default;
};

/// Where each block of links starts (link ids are dense, block by block; see topology.cpp). O(1) to
/// compute from a cluster, so the cost functions use it without building a Topology.
struct LinkLayout {
  LinkId ports = 0, pcie = 0, nics = 0, leaves = 0, torus = 0, wan = 0, end = 0;
  bool operator==(const LinkLayout&) const = default;
};
[[nodiscard]] LinkLayout link_layout(const Cluster& cluster);
/// Class and capacity of one link. Precondition: id < layout.end.
[[nodiscard]] TopologyLink link_of(const Cluster& cluster, const LinkLayout& layout, LinkId id);
/// A readable unique name: "node3/device5 port up", "node0/pcie-switch1 uplink down", "node2/nic5 up",
/// "leaf4 uplink up", "chip12 dim0+ link", "site1 WAN up".
[[nodiscard]] std::string link_name(const Cluster& cluster, const LinkLayout& layout, LinkId id);
/// Appends to `out` the links a message from `src` to `dst` crosses, in order (none when src ==
/// dst). Preconditions: both are device ids of the cluster.
void route(const Cluster& cluster, const LinkLayout& layout, std::int64_t src, std::int64_t dst, std::vector<LinkId>& out);

/// Appends to `out` the links only `device` drives: its port up and down, and its NIC up and down
/// when its node has a NIC per device (a torus chip's links are its neighbours' too: none).
void device_links(const Cluster& cluster, const LinkLayout& layout, std::int64_t device, std::vector<LinkId>& out);

/// A cluster with its link layout: a plain value (it keeps a copy of the cluster).
class Topology {
 public:
  explicit Topology(Cluster cluster) : cluster_(std::move(cluster)), layout_(link_layout(cluster_)) {}

  [[nodiscard]] const Cluster& cluster() const { return cluster_; }
  [[nodiscard]] const LinkLayout& layout() const { return layout_; }
  [[nodiscard]] std::size_t link_count() const { return layout_.end; }
  [[nodiscard]] TopologyLink link(LinkId id) const { return link_of(cluster_, layout_, id); }
  [[nodiscard]] std::string link_name(LinkId id) const { return sim::link_name(cluster_, layout_, id); }
  void route(std::int64_t src, std::int64_t dst, std::vector<LinkId>& out) const { sim::route(cluster_, layout_, src, dst, out); }

  bool operator==(const Topology&) const = default;

 private:
  Cluster cluster_;
  LinkLayout layout_;
};

}  // namespace parasim::sim
