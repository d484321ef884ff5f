#pragma once
/// The weights each pipeline stage holds. A weight used by operators of two stages — a tied
/// embedding, used by the first stage's embedding and the last stage's LM head — is held by both (as
/// Megatron-LM and DeepSpeed keep a copy on the last stage, summing the two gradients each step);
/// within one stage it is held once.
#include <cstdint>
#include <vector>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

struct StageWeight {
  std::int64_t stage = 0;
  std::int32_t chunk = 0;        ///< the first chunk of the stage that uses it
  models::OpId op = 0;           ///< the first operator of the stage that uses it
  const models::Weight* weight = nullptr;  ///< points into the graph
  double local_elements = 0;     ///< on one device, after tensor/expert sharding
  /// Data-parallel replicas of the weight: the product of the data axes (dp, ep) that do not split
  /// it. ZeRO shards its optimizer state (1), gradients (2) and parameters (3) over them.
  double zero_replicas = 1;
  bool shared_across_stages = false;
};

/// The data-parallel replicas of weight `w` under sharding `sh` (StageWeight::zero_replicas): the
/// product of the data, expert and context axes that do not split it.
[[nodiscard]] double zero_replicas(const Plan& plan, const OpSharding& sh, const models::Weight& w);

/// In graph order, each (stage, weight name) once.
[[nodiscard]] std::vector<StageWeight> stage_weights(const models::Graph& graph, const Plan& plan);

}  // namespace parasim::strategies
