#pragma once
/// What a user writes about a cluster (no JSON here; scenarios/ decodes into it). sim/cluster.hpp
/// turns a ClusterSpec and a Profile into a Cluster: devices, nodes, links, topology.
///
/// Units: bandwidths are per device (or per NIC), per direction, in Gbit/s as network datasheets
/// state them (NVLink3's 300 GB/s per direction = 2400 Gbit/s); latencies in microseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parasim::sim {

enum class IntraNodeKind { NVSwitch, PCIe };
enum class InterNodeKind { FatTree, Torus, None };

struct IntraNodeSpec {
  IntraNodeKind kind = IntraNodeKind::NVSwitch;
  std::string link;  ///< link profile name ("nvlink3", "pcie4", ...); empty = the device's default
  std::optional<double> bandwidth_gbps;  ///< overrides the link profile
  std::optional<double> latency_us;
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
  std::vector<std::int64_t> torus_dims;  ///< chips per torus dimension (TPU slices), product = device count
  /// With torus_dims empty: the number of torus dimensions (2 or 3 for TPU pods), and the dims are
  /// derived from the device count as the most balanced factorisation, smallest first (64 → 4×4×4,
  /// 128 → 4×4×8). Lets a preset name the topology without knowing the node count. 0 = unset.
  std::int64_t torus_ndims = 0;
  bool torus_wraparound = true;
  bool operator==(const InterNodeSpec&) const = default;
};

struct ClusterSpec {
  std::string device = "a100-80gb";  ///< device profile name
  std::int64_t nodes = 1;
  std::int64_t devices_per_node = 8;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  bool operator==(const ClusterSpec&) const = default;

  [[nodiscard]] std::int64_t device_count() const { return nodes * devices_per_node; }
};

}  // namespace parasim::sim
