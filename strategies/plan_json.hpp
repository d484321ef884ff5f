#pragma once
/// A Plan as JSON ("parasim.plan/1"): the device mesh, the schedule and training settings, the layers
/// of every pipeline chunk, and for every operator that is split the mesh axes splitting each of its
/// dims (an operator not listed is replicated). Operator and layer names come from the graph the
/// plan was made for. Deterministic: the same plan gives the same text.
#include <nlohmann/json.hpp>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

/// Precondition: `plan` was made for `graph`.
[[nodiscard]] nlohmann::json to_json(const Plan& plan, const models::Graph& graph);

}  // namespace parasim::strategies
