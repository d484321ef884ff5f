#include "scenarios/schema.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace parasim::embedded {
std::string_view scenario();  // generated from scenarios/scenario.schema.json by parasim_embed
}

namespace parasim::scenarios {
namespace {

const nlohmann::json& empty_schema() {
  static const nlohmann::json schema = nlohmann::json::object();
  return schema;
}

/// Top-level fields that belong to the scenario itself and that a variant cannot change.
bool fixed_field(const std::string& key) {
  return key == "name" || key == "version" || key == "description" || key == "what_if";
}

void collect_paths(const nlohmann::json& schema, const std::string& prefix, std::vector<std::string>& out) {
  const nlohmann::json& s = resolve_ref(schema);
  const auto props = s.find("properties");
  if (props == s.end()) return;
  for (const auto& [key, child] : props->items()) {
    if (prefix.empty() && fixed_field(key)) continue;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out.push_back(path);
    collect_paths(child, path, out);
  }
}

}  // namespace

const nlohmann::json& scenario_schema() {
  static const nlohmann::json schema = nlohmann::json::parse(embedded::scenario());
  return schema;
}

const nlohmann::json& resolve_ref(const nlohmann::json& schema) {
  const nlohmann::json* s = &schema;
  // The schema is ours and acyclic; the bound only guards against a broken edit of it.
  for (int depth = 0; depth < 16; ++depth) {
    const auto ref = s->is_object() ? s->find("$ref") : s->end();
    if (!s->is_object() || ref == s->end()) return *s;
    const std::string target = ref->get<std::string>();
    const std::string prefix = "#/definitions/";
    PARASIM_CHECK(target.rfind(prefix, 0) == 0, "scenario schema: unsupported $ref " + target);
    s = &scenario_schema().at("definitions").at(target.substr(prefix.size()));
  }
  PARASIM_CHECK(false, "scenario schema: $ref chain too long");
  return schema;
}

const nlohmann::json* child_schema(const nlohmann::json& parent, std::string_view token, bool in_array) {
  const nlohmann::json& p = resolve_ref(parent);
  if (!p.is_object()) return &empty_schema();
  if (in_array) {
    const auto items = p.find("items");
    return items == p.end() ? &empty_schema() : &resolve_ref(*items);
  }
  if (const auto props = p.find("properties"); props != p.end()) {
    if (const auto it = props->find(std::string(token)); it != props->end()) return &resolve_ref(*it);
  }
  const auto extra = p.find("additionalProperties");
  if (extra == p.end() || (extra->is_boolean() && extra->get<bool>())) return &empty_schema();
  if (extra->is_object()) return &resolve_ref(*extra);
  return nullptr;
}

std::vector<std::string> pointer_tokens(const std::string& pointer) {
  std::vector<std::string> tokens;
  std::size_t pos = 0;
  while (pos < pointer.size()) {
    // Every token starts after a '/'.
    const std::size_t next = pointer.find('/', pos + 1);
    std::string raw = pointer.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size()) {
        token += raw[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    if (next == std::string::npos) break;
    pos = next;
  }
  return tokens;
}

const nlohmann::json* schema_at(const nlohmann::json& instance, const std::string& pointer) {
  const nlohmann::json* schema = &resolve_ref(scenario_schema());
  const nlohmann::json* value = &instance;
  for (const std::string& token : pointer_tokens(pointer)) {
    if (value->is_array()) {
      schema = child_schema(*schema, token, true);
      value = &value->at(static_cast<std::size_t>(std::stoul(token)));
    } else {
      schema = child_schema(*schema, token, false);
      value = &value->at(token);
    }
    if (!schema) return nullptr;
  }
  return schema;
}

const std::vector<std::string>& settable_field_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    collect_paths(scenario_schema(), "", out);
    return out;
  }();
  return paths;
}

}  // namespace parasim::scenarios
