#pragma once
/// Every operator's sharding under a plan, as `parasim model --plan SCENARIO --shardings` prints it: its
/// dims with their mesh axes and where each came from (an annotation, the data axis, propagation, or
/// the knobs), its output's layout, its weights' layouts, and the collectives the lowering inserts
/// where layouts meet (the same rule, sim/work/layout.hpp, that the chunk programs apply).
#include <cstdint>
#include <string>
#include <vector>

#include "models/graph.hpp"
#include "sim/collectives/names.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// A tensor's layout in names: per dim its name and the axes splitting it, and the axes it is a
/// partial sum over.
struct TensorView {
  std::string name;  ///< a weight's name; empty for an output
  std::vector<std::pair<std::string, std::vector<std::string>>> dims;
  std::vector<std::string> partial;
};

/// One collective of a reshard on an edge.
struct ReshardView {
  std::string tensor;  ///< the producer whose output (forward) or whose output's gradient (backward) moves
  std::string consumer;
  int slot = 0;
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::string axis;
};

struct OperatorView {
  std::string name;
  std::string kind;
  std::vector<std::pair<std::string, std::vector<std::string>>> dims;  ///< every dim, with its axes (none: replicated)
  std::vector<std::string> origin;  ///< per dim: "annotation /plan/shardings/0", "data axis", "forward from X", ...
  TensorView output;
  std::vector<TensorView> weights;
  std::vector<ReshardView> forward;   ///< into this operator's inputs
  std::vector<ReshardView> backward;  ///< of this operator's output gradient, from each consumer's layout
};

struct ShardingView {
  std::string plan;  ///< the plan's description
  std::vector<std::pair<std::string, std::int64_t>> mesh;
  bool annotated = false;
  std::vector<OperatorView> operators;  ///< in the graph's topological order
};

/// The view of `plan` on `g`. `spec` is the plan's spec: its annotations say where an annotated plan's
/// shardings came from.
[[nodiscard]] ShardingView view_shardings(const models::Graph& g, const strategies::Plan& plan, const strategies::PlanSpec& spec);

}  // namespace parasim::sim
