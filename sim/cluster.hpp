#pragma once
/// A cluster: devices grouped in nodes, the links between them, and the topology of the network.
/// Built from a ClusterSpec and a Profile; the engines read it, never the spec.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.hpp"
#include "sim/profile.hpp"

namespace parasim::sim {

/// A resolved link class: the figures the cost model uses for one kind of hop.
struct Link {
  std::string name;  ///< link profile name, e.g. "nvlink3"
  double bandwidth_bytes_per_s = 0;  ///< per device (NIC, torus link), per direction
  double latency_s = 0;
  EfficiencyCurve efficiency;
  /// The collective library's protocols over the link (sim/profile.hpp, Protocol); empty: one
  /// protocol of latency_s per step at full bandwidth.
  std::vector<Protocol> protocols;
  std::map<CollectiveKind, EfficiencyCurve> collective_efficiency;  ///< LinkProfile::collective_efficiency
  /// The curve collectives of `kind` reach over this link: the kind's own where the profile has one,
  /// else `efficiency`.
  [[nodiscard]] const EfficiencyCurve& efficiency_of(CollectiveKind kind) const {
    const auto it = collective_efficiency.find(kind);
    return it != collective_efficiency.end() ? it->second : efficiency;
  }
  bool operator==(const Link&) const = default;
};

struct Device {
  std::int64_t id = 0;
  std::int64_t node = 0;
  std::string kind;  ///< device profile name
  double speed_factor = 1;  ///< 1 = the profile's speed; 0.5 = a straggler twice as slow; includes the profile's rank spread (DeviceProfile::rank_spread) in a cluster of two or more
  /// The profile's device entry whose figures price this device, where it is not `kind`'s own: the
  /// kind's shared-host entry (DeviceProfile::shared_host) on a node of two devices or more.
  std::string priced_as;
  /// The profile device entry to price this device with: `priced_as`, else `kind`.
  [[nodiscard]] const std::string& figures() const { return priced_as.empty() ? kind : priced_as; }
  bool operator==(const Device&) const = default;
};

struct Cluster {
  std::vector<Device> devices;  ///< ids 0..n-1; devices of node k are k·devices_per_node …
  std::int64_t nodes = 1;
  std::int64_t devices_per_node = 1;
  IntraNodeKind intra_kind = IntraNodeKind::NVSwitch;
  InterNodeKind inter_kind = InterNodeKind::FatTree;
  Link intra;  ///< device ↔ device inside a node
  Link inter;  ///< NIC ↔ NIC between nodes (or one torus link)
  std::int64_t nics_per_node = 1;
  double oversubscription = 1;
  bool rail_optimized = true;
  std::int64_t nodes_per_leaf = 1;  ///< fat-tree: nodes on one leaf switch (per rail when rail-optimised)
  std::vector<std::int64_t> torus_dims;
  bool torus_wraparound = true;
  std::int64_t pcie_switches = 1;  ///< PCIe nodes: switches per node, devices in equal consecutive shares
  Link host_bridge;                ///< PCIe nodes: one switch's uplink to the host bridge (efficiency of `intra`)
  std::int64_t sites = 1;          ///< sites joined by the WAN, nodes in equal consecutive shares
  Link wan;                        ///< one site's link to the WAN (efficiency of `inter`); used when sites > 1
  /// NVSwitch nodes with NVLink SHARP: the in-switch all-reduce's link (per device port, per
  /// direction; its efficiency is NVLS's); name empty when the nodes have none.
  Link nvls;
  bool sharp = false;              ///< fat-tree: its switches reduce (InfiniBand SHARP)
  CollectiveAlgorithmSpec algorithms;  ///< checked against the network: what estimate_collectives asks for
  bool operator==(const Cluster&) const = default;

  [[nodiscard]] std::int64_t device_count() const { return static_cast<std::int64_t>(devices.size()); }
  [[nodiscard]] std::int64_t node_of(std::int64_t device) const { return devices[static_cast<std::size_t>(device)].node; }
  /// Inter-node bandwidth available to one device when every device of its node sends at once
  /// (nics_per_node × NIC bandwidth / devices_per_node), per direction, in bytes/s, before the
  /// link's efficiency. On a torus, build_cluster sets one "NIC" per chip: one torus link.
  [[nodiscard]] double inter_bandwidth_per_device() const;
  /// The nodes' switch reduces in the network (NVLink SHARP).
  [[nodiscard]] bool has_nvls() const { return !nvls.name.empty(); }
  /// Torus coordinates of a device (dimension 0 varies fastest with the id). Precondition: torus_dims
  /// is set and `device` is in range.
  [[nodiscard]] std::vector<std::int64_t> torus_coordinates(std::int64_t device) const;

  // ---- where a device sits (switched clusters); every id must be in range ----
  /// Index of the device inside its node, 0 .. devices_per_node − 1.
  [[nodiscard]] std::int64_t local_index(std::int64_t device) const { return device % devices_per_node; }
  /// PCIe switch of the device inside its node, 0 .. pcie_switches − 1.
  [[nodiscard]] std::int64_t pcie_switch_of(std::int64_t device) const;
  /// The NIC (0 .. nics_per_node − 1 inside the node) the device's inter-node traffic leaves by:
  /// devices share NICs in equal consecutive shares.
  [[nodiscard]] std::int64_t nic_of(std::int64_t device) const;
  /// Site of a node, 0 .. sites − 1.
  [[nodiscard]] std::int64_t site_of_node(std::int64_t node) const;
  /// Number of leaf switches, and the leaf of the device's NIC (0 .. leaf_count − 1): per site, per
  /// run of nodes_per_leaf nodes, per rail (the NIC index) when rail-optimised.
  [[nodiscard]] std::int64_t leaf_count() const;
  [[nodiscard]] std::int64_t leaf_of(std::int64_t device) const;
  /// Capacity of a leaf's uplink to the spine, per direction, bytes/s before efficiency: its NIC
  /// ports × NIC bandwidth / oversubscription.
  [[nodiscard]] double leaf_uplink_bandwidth(std::int64_t leaf) const;
  /// NIC ports on a leaf switch.
  [[nodiscard]] std::int64_t leaf_ports(std::int64_t leaf) const;
};

/// A problem with a cluster spec against a profile: the field (JSON pointer under the scenario's
/// "/cluster") and the message.
struct ClusterProblem {
  std::string pointer;
  std::string message;
};

/// The first problem with `spec` (unknown device or link name — with "did you mean" —, zero sizes or
/// bandwidths, a topology that does not cover the devices: torus dims whose product is not the device
/// count, node groups that do not sum to the nodes, sites that do not split them evenly, a straggler
/// that is not a device; fields that apply to another kind of network), or nothing.
[[nodiscard]] std::optional<ClusterProblem> check_cluster_spec(const ClusterSpec& spec, const Profile& profile);

/// Precondition: check_cluster_spec found nothing.
[[nodiscard]] Cluster build_cluster(const ClusterSpec& spec, const Profile& profile);

/// What build_cluster divides a device's speed by for its kind's measured rank spread
/// (DeviceProfile::rank_spread) in a cluster of `devices`: the slowest rank's time over the mean
/// where the kind has one and the cluster has two devices or more, else 1.
[[nodiscard]] double rank_spread_slowdown(const DeviceProfile& device, std::size_t devices);

/// The profile device entry that prices a device of `kind` on a node of `devices_per_node` devices:
/// the kind's shared-host entry (DeviceProfile::shared_host) where it has one and the node holds two
/// devices or more, else `kind` itself.
[[nodiscard]] const std::string& shared_host_entry(const Profile& profile, const std::string& kind, std::int64_t devices_per_node);

/// Named cluster presets ("dgx-a100", "dgx-h100", "pcie-v100", "tpu-v4-pod", ...), for the
/// scenario's "cluster": {"preset": ...}; each sets every field of the spec but `nodes` (torus
/// presets set `torus_ndims`, so their dims follow from the node count).
[[nodiscard]] std::optional<ClusterSpec> cluster_preset(const std::string& name);
[[nodiscard]] std::vector<std::string> cluster_preset_names();

}  // namespace parasim::sim
