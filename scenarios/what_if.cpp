#include "scenarios/what_if.hpp"

#include <algorithm>

#include "common/did_you_mean.hpp"
#include "common/json_document.hpp"
#include "scenarios/schema.hpp"

namespace parasim::scenarios {
namespace {

std::vector<std::string> split_dots(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

const std::vector<std::string> kModelSources{"preset", "transformer", "hf_config", "graph"};

bool is_under(const std::string& pointer, const std::string& prefix) {
  return pointer.size() > prefix.size() && pointer.compare(0, prefix.size(), prefix) == 0 && pointer[prefix.size()] == '/';
}

}  // namespace

std::optional<std::string> check_field_path(const std::string& key) {
  const auto& paths = settable_field_paths();
  if (std::find(paths.begin(), paths.end(), key) != paths.end()) return std::nullopt;
  const std::vector<std::string> parts = split_dots(key);
  if (parts.front() == "name" || parts.front() == "description" || parts.front() == "version" || parts.front() == "what_if")
    return "\"" + parts.front() + "\" cannot be set by a what-if; a variant's name and description are the what-if's own";
  // A path below a plain value or into an array ("plan.mesh_order.0"): name the settable field above it.
  for (std::size_t n = parts.size() - 1; n >= 1; --n) {
    std::string prefix = parts[0];
    for (std::size_t i = 1; i < n; ++i) prefix += "." + parts[i];
    if (std::find(paths.begin(), paths.end(), prefix) == paths.end()) continue;
    const nlohmann::json* schema = &resolve_ref(scenario_schema());
    for (std::size_t i = 0; i < n && schema; ++i) schema = child_schema(*schema, parts[i], false);
    if (schema && !resolve_ref(*schema).contains("properties"))
      return "unknown field \"" + key + "\": \"" + prefix + "\" has no fields; a what-if sets the whole of \"" + prefix + "\"";
    break;
  }
  return "unknown field \"" + key + "\"" + did_you_mean(key, paths) +
         "; a what-if sets dotted paths such as \"plan.tp\" or \"cluster.inter_node.bandwidth_gbps\"";
}

std::string field_pointer(const std::string& key) {
  std::string pointer;
  for (const std::string& part : split_dots(key)) pointer = json_pointer_append(pointer, part);
  return pointer;
}

nlohmann::json apply_assignments(const nlohmann::json& base, const std::vector<Assignment>& assignments) {
  nlohmann::json variant = base;
  variant.erase("what_if");
  for (const Assignment& a : assignments) {
    const std::vector<std::string> parts = split_dots(a.key);
    const std::string& field = parts.back();
    nlohmann::json* node = &variant;
    for (std::size_t i = 0; i + 1 < parts.size() && node; ++i) {
      const auto it = node->find(parts[i]);
      if (it != node->end() && it->is_object()) {
        node = &*it;
      } else if (a.value.is_null()) {
        node = nullptr;  // nothing there to return to its default
      } else {
        // Missing: create it. Present but not an object: an earlier assignment of this what-if wrote a
        // plain value here; the deeper one replaces it, and the schema judges the result.
        node = &((*node)[parts[i]] = nlohmann::json::object());
      }
    }
    if (!node) continue;
    if (a.value.is_null()) {
      node->erase(field);
      continue;
    }
    if (parts.size() == 2 && parts[0] == "model" &&
        std::find(kModelSources.begin(), kModelSources.end(), field) != kModelSources.end()) {
      for (const auto& other : kModelSources)
        if (other != field) node->erase(other);
    }
    (*node)[field] = a.value;
  }
  return variant;
}

FaultSource source_of(const std::vector<Assignment>& assignments, const std::string& set_pointer, const std::string& pointer) {
  // The value written by a set entry, or something inside it; a later entry that writes the same place
  // wins, as it does when the variant is built.
  for (auto a = assignments.rbegin(); a != assignments.rend(); ++a) {
    if (pointer == a->target_pointer) return {a->source_pointer, true};
    if (is_under(pointer, a->target_pointer)) return {a->source_pointer + pointer.substr(a->target_pointer.size()), true};
  }
  // An object that a set entry wrote into.
  for (const Assignment& a : assignments)
    if (pointer.empty() || is_under(a.target_pointer, pointer)) return {a.source_pointer, false};
  return {set_pointer, false};
}

}  // namespace parasim::scenarios
