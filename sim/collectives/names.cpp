// Names of collective kinds and algorithms, as scenarios, results and traces write them.
#include "sim/collectives/names.hpp"

namespace parasim::sim {

std::string_view to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all-reduce";
    case CollectiveKind::ReduceScatter: return "reduce-scatter";
    case CollectiveKind::AllGather: return "all-gather";
    case CollectiveKind::AllToAll: return "all-to-all";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "send-recv";
  }
  return "all-reduce";
}

std::string_view to_string(CommKernel k) {
  switch (k) {
    case CommKernel::Nccl: return "nccl";
    case CommKernel::RingExchange: return "userbuffers-ring-exchange";
    case CommKernel::Pipelined: return "userbuffers-pipeline";
  }
  return "nccl";
}

std::string_view to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Auto: return "auto";
    case CollectiveAlgorithm::Ring: return "ring";
    case CollectiveAlgorithm::Tree: return "tree";
    case CollectiveAlgorithm::Hierarchical: return "hierarchical";
    case CollectiveAlgorithm::TorusRings: return "torus-rings";
    case CollectiveAlgorithm::Direct: return "direct";
    case CollectiveAlgorithm::Nvls: return "nvls";
    case CollectiveAlgorithm::NvlsTree: return "nvls-tree";
    case CollectiveAlgorithm::CollNet: return "collnet";
  }
  return "auto";
}

const std::vector<std::string>& collective_algorithm_names() {
  static const std::vector<std::string> names{"auto", "ring", "tree", "hierarchical", "torus-rings", "direct",
                                                "nvls", "nvls-tree", "collnet"};
  return names;
}

std::optional<CollectiveAlgorithm> collective_algorithm_from_string(std::string_view s) {
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree,
                                CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::TorusRings, CollectiveAlgorithm::Direct,
                                CollectiveAlgorithm::Nvls, CollectiveAlgorithm::NvlsTree, CollectiveAlgorithm::CollNet})
    if (to_string(a) == s) return a;
  return std::nullopt;
}

}  // namespace parasim::sim
