#pragma once
/// What-if variants: a variant is the base scenario with some fields replaced. Its "set" object maps
/// dotted field paths ("plan.tp", "cluster.inter_node.bandwidth_gbps") to new values; this file checks
/// the paths against the schema, builds the variant's JSON, and maps a place in the variant back to
/// the place in the file that caused it (the set value), so errors point at what the user wrote.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parasim::scenarios {

/// One entry of a what-if's "set".
struct Assignment {
  std::string key;             ///< the dotted path as written, e.g. "plan.tp"
  std::string target_pointer;  ///< where it lands in the scenario, e.g. "/plan/tp"
  std::string source_pointer;  ///< where its value is in the file, e.g. "/what_if/1/set/plan.tp"
  nlohmann::json value;        ///< null returns the field to its default
};

/// Why `key` is not a field a what-if may set ("unknown field ... (did you mean ...)"), or nothing.
[[nodiscard]] std::optional<std::string> check_field_path(const std::string& key);

/// The JSON pointer a dotted path lands on ("cluster.inter_node.kind" → "/cluster/inter_node/kind").
[[nodiscard]] std::string field_pointer(const std::string& key);

/// The variant: `base` without its what-ifs, with each assignment applied in order. Objects missing on
/// the way are created; null removes the field. Setting one of the model's sources (model.preset,
/// model.transformer, model.hf_config, model.graph) removes the other three, so a variant can switch
/// models. Precondition: every key passed check_field_path.
[[nodiscard]] nlohmann::json apply_assignments(const nlohmann::json& base, const std::vector<Assignment>& assignments);

/// Where a fault at `pointer` of a variant is reported in the file.
struct FaultSource {
  std::string pointer;  ///< under "/what_if/N/set/KEY", or "/what_if/N/set" itself
  /// The fault is in the set value itself (or inside it); false when the set entry only wrote into the
  /// object at fault (a required key removed with null) or when no entry touches the place at all.
  bool direct = false;
};

/// Maps a fault at `pointer` of the variant to the set value that wrote that field (or a field inside
/// the object at fault); `set_pointer` ("/what_if/N/set") when no assignment touches it — then the
/// fault comes from how the variant's changes meet the base's other fields.
[[nodiscard]] FaultSource source_of(const std::vector<Assignment>& assignments, const std::string& set_pointer,
                                    const std::string& pointer);

}  // namespace parasim::scenarios
