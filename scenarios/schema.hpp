#pragma once
/// The scenario schema (scenarios/scenario.schema.json, compiled into the binary): the one definition of
/// the format's structure. This header reads it as JSON — to find the subschema that governs a value,
/// and the dotted field paths a what-if may set; schema_check.hpp validates against it.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parasim::scenarios {

/// The embedded schema, parsed once.
[[nodiscard]] const nlohmann::json& scenario_schema();

/// Follows local "$ref": "#/definitions/NAME" references until a schema without one.
[[nodiscard]] const nlohmann::json& resolve_ref(const nlohmann::json& schema);

/// The subschema that governs member `token` of an object (or, when `in_array`, element `token` of an
/// array) governed by `parent`; nullptr when `parent` does not allow that member. A member the schema
/// says nothing about (additionalProperties absent) gets the empty schema, which accepts anything.
[[nodiscard]] const nlohmann::json* child_schema(const nlohmann::json& parent, std::string_view token, bool in_array);

/// The subschema that governs the value at `pointer` in `instance`, or nullptr when the schema does not
/// allow that value. Precondition: `pointer` exists in `instance`.
[[nodiscard]] const nlohmann::json* schema_at(const nlohmann::json& instance, const std::string& pointer);

/// The reference tokens of an RFC 6901 pointer ("/a/b~1c" → {"a", "b/c"}).
[[nodiscard]] std::vector<std::string> pointer_tokens(const std::string& pointer);

/// Every field a what-if may set, as dotted paths ("plan", "plan.tp", "cluster.inter_node.bandwidth_gbps"),
/// in schema order: everything reachable through "properties", except the scenario's own name,
/// version, description and what_if list.
[[nodiscard]] const std::vector<std::string>& settable_field_paths();

}  // namespace parasim::scenarios
