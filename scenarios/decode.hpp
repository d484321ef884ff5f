#pragma once
/// Decoding a scenario's JSON, already valid against the schema, into values: the model spec, the
/// training and plan specs, the cluster spec (its preset applied, then every field written over it).
/// The schema has judged the structure, so the only faults left here are names the schema cannot
/// know (a cluster preset); they are reported through `ErrorAt`, which locates them.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "scenarios/scenario.hpp"

namespace parasim::scenarios {

/// Makes the InputError for a problem at a pointer of the decoded JSON.
using ErrorAt = std::function<InputError(const std::string& pointer, const std::string& message)>;

/// Decodes every field of `root` but the what-ifs into a Scenario. Relative paths (model files, the
/// profile) are resolved against `folder`. `root` must be valid against the scenario schema.
[[nodiscard]] Scenario decode_scenario(const nlohmann::json& root, const std::string& folder, const ErrorAt& error_at);

/// `path` resolved against `folder` (unchanged when absolute or when `folder` is empty).
[[nodiscard]] std::string resolve_path(const std::string& folder, const std::string& path);

}  // namespace parasim::scenarios
