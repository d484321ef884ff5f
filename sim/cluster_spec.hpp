#pragma once
/// What a user writes about a cluster (no JSON here; scenarios/ decodes into it). sim/cluster.hpp
/// turns a ClusterSpec and a Profile into a Cluster: devices, nodes, links, topology.
///
/// Units: bandwidths are per device (or per NIC, per torus link, per PCIe switch uplink, per site's
/// WAN link), per direction, in Gbit/s as network datasheets state them (NVLink3's 300 GB/s per
/// direction = 2400 Gbit/s); latencies in microseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/collectives/names.hpp"

namespace parasim::sim {

enum class IntraNodeKind { NVSwitch, PCIe };
enum class InterNodeKind { FatTree, Torus, None };

struct IntraNodeSpec {
  IntraNodeKind kind = IntraNodeKind::NVSwitch;
  std::string link;  ///< link profile name ("nvlink3", "pcie4", ...); empty = the device's default
  std::optional<double> bandwidth_gbps;  ///< overrides the link profile
  std::optional<double> latency_us;
  /// PCIe nodes: the PCIe switches the node's devices hang off, in equal shares (device i of the node
  /// on switch i·switches/devices_per_node); traffic between switches crosses each one's uplink to
  /// the host bridge (CPU root complex). 1 = every device on one switch (a non-blocking star).
  std::int64_t pcie_switches = 1;
  /// PCIe nodes: bandwidth of each switch's uplink to the host bridge; absent = the device link's.
  std::optional<double> host_bridge_gbps;
  /// NVSwitch nodes whose switch reduces in the network (NVLink SHARP, "NVLS": 3rd-generation
  /// NVSwitch and later, Hopper GPUs and later, CUDA multicast): the link profile of that in-switch
  /// all-reduce ("nvlink4-sharp", "nvlink5-sharp"). Empty: the node has none, as NCCL finds none
  /// without multicast support (NCCL src/transport/nvls.cc, ncclNvlsInit).
  std::string nvls_link;
  bool operator==(const IntraNodeSpec&) const = default;
};

struct InterNodeSpec {
  InterNodeKind kind = InterNodeKind::FatTree;
  std::string link;  ///< link profile name ("ib-hdr", "ib-ndr", "roce-400", "ici-v4", ...)
  std::int64_t nics_per_node = 0;        ///< 0 = one per device
  std::optional<double> bandwidth_gbps;  ///< per NIC (or per torus link), overrides the link profile
  std::optional<double> latency_us;
  double oversubscription = 1;  ///< leaf-to-spine oversubscription of the fat-tree (1 = non-blocking)
  bool rail_optimized = true;   ///< NIC i of every node on leaf switch i (rail-optimised fat-tree)
  /// Fat-tree: nodes whose NICs share one leaf switch (per rail when rail-optimised); traffic between
  /// nodes of different leaves crosses the leaves' uplinks to the spine, whose capacity is the
  /// leaf's NIC ports × NIC bandwidth / oversubscription. 1 = a leaf (top-of-rack) switch per node.
  std::int64_t nodes_per_leaf = 1;
  std::vector<std::int64_t> torus_dims;  ///< chips per torus dimension (TPU slices), product = device count
  /// With torus_dims empty: the number of torus dimensions (2 or 3 for TPU pods), and the dims are
  /// derived from the device count as the most balanced factorisation, smallest first (64 → 4×4×4,
  /// 128 → 4×4×8). Lets a preset name the topology without knowing the node count. 0 = unset.
  std::int64_t torus_ndims = 0;
  bool torus_wraparound = true;
  /// Fat-tree: its switches reduce in the network (InfiniBand SHARP, used by NCCL's CollNet
  /// algorithms through the SHARP plugin). False: they only forward.
  bool sharp = false;
  bool operator==(const InterNodeSpec&) const = default;
};

/// Heterogeneous clusters: a run of consecutive nodes with their own device kind and speed.
struct NodeGroupSpec {
  std::int64_t nodes = 1;
  std::string device;  ///< device profile name; empty = the cluster's `device`
  double speed_factor = 1;  ///< compute speed relative to the profile (0.5 = twice as slow)
  bool operator==(const NodeGroupSpec&) const = default;
};

/// One device slower (or faster) than its profile: a straggler.
struct StragglerSpec {
  std::int64_t device = 0;  ///< device id, 0 .. device count − 1
  double speed_factor = 0.5;  ///< multiplies the device's speed (its node group's factor included)
  bool operator==(const StragglerSpec&) const = default;
};

/// Several sites (data centres), each a fat-tree of consecutive nodes in equal shares, joined by a
/// wide-area network: every site reaches the WAN over one link of this bandwidth and latency.
struct WanSpec {
  std::int64_t sites = 2;
  double bandwidth_gbps = 100;  ///< per site, per direction
  double latency_us = 1000;     ///< one way, site to site (it replaces the fabric's latency)
  bool operator==(const WanSpec&) const = default;
};

/// The collective algorithm each kind uses (scenarios name them as sim/collectives/names.hpp does:
/// "auto", "ring", "tree", "hierarchical", "torus-rings", "nvls", "nvls-tree", "collnet"). Auto: the one with the least predicted
/// time, per collective and size, as NCCL's tuner picks; a named one that does not apply to a group
/// (hierarchical over unequal nodes, torus rings off a torus, NVLS across nodes) falls back to auto
/// for that group.
/// All-to-all and point-to-point have one algorithm (direct).
struct CollectiveAlgorithmSpec {
  CollectiveAlgorithm all_reduce = CollectiveAlgorithm::Auto;
  CollectiveAlgorithm reduce_scatter = CollectiveAlgorithm::Auto;
  CollectiveAlgorithm all_gather = CollectiveAlgorithm::Auto;
  CollectiveAlgorithm broadcast = CollectiveAlgorithm::Auto;
  bool operator==(const CollectiveAlgorithmSpec&) const = default;
};

struct ClusterSpec {
  std::string device = "a100-80gb";  ///< device profile name
  std::int64_t nodes = 1;
  std::int64_t devices_per_node = 8;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  /// Empty: every node holds `device` at speed 1. Otherwise the nodes in order, group by group; the
  /// groups' node counts sum to `nodes`.
  std::vector<NodeGroupSpec> node_groups;
  std::vector<StragglerSpec> stragglers;
  std::optional<WanSpec> wan;  ///< absent: one site
  CollectiveAlgorithmSpec algorithms;
  bool operator==(const ClusterSpec&) const = default;

  [[nodiscard]] std::int64_t device_count() const { return nodes * devices_per_node; }
};

}  // namespace parasim::sim
