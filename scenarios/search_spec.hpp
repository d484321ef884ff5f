#pragma once
/// The scenario's "search" object (and cluster.price_per_device_hour) as the values `parasim search`
/// runs with: the search space, the objective, how many candidates to simulate and re-simulate, the
/// price. Structure is the schema's business (scenarios/scenario.schema.json, "search"); this file
/// checks what it cannot: each node count against the cluster and profile, and that the cost
/// objective has a price.
#include <cstdint>

#include "common/json_document.hpp"
#include "scenarios/scenario.hpp"
#include "sim/profile.hpp"
#include "strategies/search/rank.hpp"
#include "strategies/search/space.hpp"

namespace parasim::scenarios {

struct SearchSpec {
  strategies::search::SearchSpace space;  ///< nodes empty = the cluster's
  strategies::search::Objective objective = strategies::search::Objective::Time;
  std::int64_t simulate_top = 32;
  std::int64_t refine_top = 4;
  double price_per_device_hour = 0;  ///< 0 when the scenario names no price
  bool has_price = false;
  /// Rank beside the space's plans the automatic sharding's (sim/auto_sharding.hpp) on each node
  /// count's mesh of nodes × devices per node, one pipeline stage.
  bool auto_sharding = false;
  bool operator==(const SearchSpec&) const = default;
};

/// Decodes `doc`, a scenario that load_scenario accepted as `base`, with `profile` its profile.
/// Throws a located InputError for a node count the cluster cannot have ("/search/nodes/1") or the
/// cost objective without a price ("/search/objective").
[[nodiscard]] SearchSpec decode_search_spec(const JsonDocument& doc, const Scenario& base, const sim::Profile& profile);

}  // namespace parasim::scenarios
