#pragma once
/// Structural validation of a scenario against its JSON Schema. valijson decides whether the document
/// is valid and where it fails; this file then picks the failure a user should see first (the deepest,
/// then the earliest in the file) and says in our words what was found and what the schema expects
/// there ("found string \"8\", expected an integer >= 1", "unknown key \"schedul\" (did you mean
/// \"schedule\"?)"), by reading the subschema at the failing place.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"

namespace parasim::scenarios {

/// The first structural fault of a scenario.
struct SchemaFault {
  std::string pointer;  ///< the offending value (or key) in the checked instance
  bool at_key = false;  ///< the key itself is at fault (an unknown key): locate the key, not its value
  std::string message;  ///< what was found and what was expected, without location
  bool operator==(const SchemaFault&) const = default;
};

/// Where a pointer of the checked instance sits in the source (for picking the earliest fault).
using Locator = std::function<SourceLocation(const std::string& pointer, bool at_key)>;

/// Validates `instance` against the scenario schema; nothing when it is valid.
[[nodiscard]] std::optional<SchemaFault> check_scenario_structure(const nlohmann::json& instance, const Locator& where);

/// How a value the schema describes is named in messages: "an integer >= 1", "a number > 0", "one of
/// \"gpipe\", \"1f1b\" or \"interleaved-1f1b\"", "true or false", ...
/// With `found`, a wide numeric range names the bound that value breaks.
[[nodiscard]] std::string expected_phrase(const nlohmann::json& schema);
[[nodiscard]] std::string expected_phrase(const nlohmann::json& schema, const nlohmann::json* found);

}  // namespace parasim::scenarios
