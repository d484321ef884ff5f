#pragma once
/// Collective communication cost: the closed-form (alpha–beta) time of each algorithm on a cluster,
/// and the automatic choice of the fastest (as NCCL's tuner picks by predicted time). Pure functions:
/// the analytical engine calls them; the SimGrid engine decomposes the same algorithms into flows.
///
/// Size convention (S = `bytes`): all-reduce — the buffer on each rank; all-gather — the gathered
/// output on each rank (each contributes S/p); reduce-scatter — the input on each rank; all-to-all —
/// what each rank sends in total (S/p to each peer); broadcast — the buffer; p2p — the message.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/sim_time.hpp"
#include "sim/cluster.hpp"
#include "sim/collectives/names.hpp"

namespace parasim::sim {

/// The predicted time of one collective and how it was obtained.
struct CollectiveEstimate {
  Picoseconds time;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;  ///< the one used (resolved when Auto)
  double intra_bytes_per_device = 0;  ///< bytes each device sends over intra-node links
  double inter_bytes_per_device = 0;  ///< bytes each device sends over the inter-node network
  bool operator==(const CollectiveEstimate&) const = default;
};

/// One point-to-point transfer of a collective's algorithm, coarsened: it stands for every message
/// its source sends its destination during one phase of the algorithm.
struct Flow {
  std::int64_t src = 0;  ///< device id
  std::int64_t dst = 0;  ///< device id
  double bytes = 0;      ///< payload moved
  /// The latency the flow pays before its bytes move: the algorithm steps it stands for × the
  /// per-step latency α of the closed form.
  double latency_s = 0;
  /// The fraction of a link's bandwidth the protocol achieves for this flow (the link's efficiency at
  /// the closed form's message size): the flow occupies its links for bytes / efficiency.
  double efficiency = 1;
  bool operator==(const Flow&) const = default;
};

/// The flows of one phase of an algorithm: they run at once; the phase ends when all have ended.
struct FlowPhase {
  std::vector<Flow> flows;
  bool operator==(const FlowPhase&) const = default;
};

/// A collective as data both engines share: its phases, one after the other. On an otherwise idle
/// network, a phase takes the largest, over its flows' latencies, of that latency plus the time its
/// most loaded link needs for the bytes/efficiency of the flows of that latency crossing it
/// (uncontended_seconds); for every algorithm this equals collective_time's closed form, except
/// where the closed form says it approximates (see sim/collectives/flows.cpp).
struct CollectiveFlows {
  std::vector<FlowPhase> phases;
  bool operator==(const CollectiveFlows&) const = default;
};

/// The flows of `kind` over `group` moving `bytes` with `algorithm` — the one collective_time
/// resolved (not Auto). `root`: a send-recv's sender (−1: the first of the group), a broadcast's
/// root (−1: the first of the group). No phases for a group of one or zero bytes. Preconditions as
/// for collective_time, and the algorithm applies (InternalError otherwise).
[[nodiscard]] CollectiveFlows collective_flows(const Cluster& cluster, CollectiveKind kind, std::span<const std::int64_t> group,
                                               double bytes, CollectiveAlgorithm algorithm, std::int64_t root = -1);

/// The time the flows take on an otherwise idle network, in seconds (see CollectiveFlows).
[[nodiscard]] double uncontended_seconds(const Cluster& cluster, const CollectiveFlows& flows);

/// Time of `kind` over the devices in `group` (distinct device ids, ascending) moving `bytes` (see the
/// size convention above) with `algorithm` (Auto = the fastest applicable). A group of one device, or
/// zero bytes, costs zero. SendRecv takes a group of exactly two: {src, dst} in any order.
///
/// Which algorithms apply (each formula is derived in its file under sim/collectives/):
///  - Ring: all-reduce, reduce-scatter, all-gather, broadcast; on any cluster.
///  - Tree (NCCL double binary tree): all-reduce, on switched (non-torus) clusters.
///  - Hierarchical: all-reduce, reduce-scatter, all-gather over ≥ 2 nodes with the same number (≥ 2)
///    of members on each, on switched clusters.
///  - TorusRings: all-reduce, reduce-scatter, all-gather on a torus, for a group that is a sub-grid
///    (the product of its coordinates along each dimension).
///  - Direct: all-to-all and send-recv (the only algorithm for those).
///  - Nvls (NVLink SHARP, the NVSwitch reduces): all-reduce inside one node whose switch has it
///    (Cluster::has_nvls).
///  - NvlsTree: all-reduce over ≥ 2 nodes with NVLink SHARP and the same number (≥ 2) of members on
///    each: NVLS inside the nodes, a double binary tree between them.
///  - CollNet (InfiniBand SHARP, the fat-tree's switches reduce): all-reduce over ≥ 2 nodes with the
///    same number of members on each, on a fat-tree with `sharp`, within one site.
/// A requested algorithm that does not apply is replaced by the fastest that does; the estimate's
/// `algorithm` always names the one used. Bytes per device are averages over the group (for
/// send-recv, the sender's). On a torus every byte counts as inter-node (torus links).
/// Preconditions (checked, InternalError): ids in range and distinct, bytes finite and ≥ 0.
[[nodiscard]] CollectiveEstimate collective_time(const Cluster& cluster, CollectiveKind kind, std::span<const std::int64_t> group,
                                                 double bytes, CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto);

/// The channels NCCL runs a collective of `group` with when the group spans nodes of a switched
/// cluster: two per NIC its rings leave a node through (one ring per NIC, duplicated:
/// ncclTopoPostset; NVIDIA/nccl issue #689: "on DGX with 8 NICs ... it would use 16 SMs", a PCIe
/// system with one NIC 2), at most NCCL's 32 channels (MAXCHANNELS, src/include/devcomm.h,
/// v2.8–2.24). 0 for a group inside one node or on a torus.
[[nodiscard]] double nccl_channels_across_nodes(const Cluster& cluster, std::span<const std::int64_t> group);

}  // namespace parasim::sim
