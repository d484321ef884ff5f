#pragma once
/// Collective kinds and algorithms, and their names as scenarios, results and traces write them.
/// Apart from sim/collectives.hpp so that a cluster spec (sim/cluster_spec.hpp) can hold the
/// algorithm each kind uses.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::sim {

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, SendRecv };
/// Nvls: NVLink SHARP (the NVSwitch reduces) inside one node; NvlsTree: NVLS inside each node and a
/// tree between nodes; CollNet: InfiniBand SHARP (the fat-tree's switches reduce) between nodes.
enum class CollectiveAlgorithm { Auto, Ring, Tree, Hierarchical, TorusRings, Direct, Nvls, NvlsTree, CollNet };

/// What runs a collective on its devices, which decides what it takes from the compute beside it
/// (sim/interference.hpp): NCCL's kernels, or one of Transformer Engine's userbuffers methods that
/// overlap tensor-parallel communication with the GEMMs — the ring exchange (peer-to-peer copies on
/// the copy engines, 1 SM) and the pipelined split (16 SMs the GEMMs leave free)
/// (transformer_engine/pytorch/module/base.py, initialize_ub's default_cfg).
enum class CommKernel : std::uint8_t { Nccl, RingExchange, Pipelined };

[[nodiscard]] std::string_view to_string(CollectiveKind k);
[[nodiscard]] std::string_view to_string(CommKernel k);
[[nodiscard]] std::string_view to_string(CollectiveAlgorithm a);
[[nodiscard]] const std::vector<std::string>& collective_algorithm_names();
[[nodiscard]] std::optional<CollectiveAlgorithm> collective_algorithm_from_string(std::string_view s);

}  // namespace parasim::sim
