#pragma once
/// Sweeps: the scenario's "sweep" object varies fields over lists or ranges, and every combination
/// becomes a variant of the base, built and checked exactly as a what-if is (a sweep point is a
/// what-if whose "set" holds one value of each swept field):
///
///   "sweep": { "cluster.inter_node.bandwidth_gbps": [100, 200, 400],
///              "cluster.nodes": { "from": 16, "to": 64, "times": 2 } }
///
/// gives 3 × 3 points, the first key varying slowest, named by their values
/// ("cluster.inter_node.bandwidth_gbps=100, cluster.nodes=16"). A range is {"from", "to", "step"}
/// (from, from + step, … up to to) or {"from", "to", "times"} (from, from·times, …), both ends
/// included when hit; it gives integers when from and step (or times) are integers. A fault in a
/// point is reported at the swept value that caused it (the list item, or the range), naming the point.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "scenarios/scenario.hpp"

namespace parasim::scenarios {

/// The most points a sweep may have (every point is a simulation).
inline constexpr std::size_t kMaxSweepPoints = 1000;

/// One swept field and its values, in order.
struct SweepAxis {
  std::string key;      ///< the dotted path, e.g. "cluster.nodes"
  std::string pointer;  ///< of the axis in the file, e.g. "/sweep/cluster.nodes"
  bool range = false;   ///< a range object (faults are reported at it) or a list (at each item)
  std::vector<nlohmann::json> values;
};

/// The axes of `doc`'s "sweep", in file order (none when it has no sweep). Throws a located
/// InputError for a key no what-if may set, a list with a value twice, a malformed range, or more
/// than kMaxSweepPoints points in all.
[[nodiscard]] std::vector<SweepAxis> sweep_axes(const JsonDocument& doc);

/// "cluster.nodes=16": a value as a point's name shows it (strings without quotes, other values as
/// compact JSON).
[[nodiscard]] std::string sweep_value_text(const nlohmann::json& value);

/// Every point of `doc`'s sweep as a variant of `base` (the scenario load_scenario made of the same
/// document), in order: name the point's name, pointer "/sweep", changes the swept values, output
/// folder "<base output>/<slug of the name>". Each is checked as a what-if is (structure, cluster,
/// model, plan).
[[nodiscard]] std::vector<Scenario> sweep_points(const JsonDocument& doc, const Scenario& base);

/// sweep_points of the file `base` was loaded from (re-read and parsed).
[[nodiscard]] std::vector<Scenario> load_sweep(const Scenario& base);

}  // namespace parasim::scenarios
