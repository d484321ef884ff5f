#include "scenarios/schema_check.hpp"

#include <memory>
#include <regex>
#include <set>
#include <tuple>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "common/did_you_mean.hpp"
#include "scenarios/schema.hpp"

namespace parasim::scenarios {
namespace {

using nlohmann::json;

/// Ranges up to this wide are named whole in messages.
constexpr double kSmallRange = 64;

const valijson::Schema& validator_schema() {
  // Parsed once and never changed afterwards; valijson validates against a const schema.
  static const std::unique_ptr<const valijson::Schema> schema = [] {
    auto s = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    const valijson::adapters::NlohmannJsonAdapter adapter(scenario_schema());
    parser.populateSchema(adapter, *s);
    return s;
  }();
  return *schema;
}

/// valijson names a failing value by a context such as {"<root>", "[plan]", "[tp]"}.
std::string context_to_pointer(const std::vector<std::string>& context) {
  std::string pointer;
  for (std::size_t i = 1; i < context.size(); ++i) {
    const std::string& part = context[i];
    const bool bracketed = part.size() >= 2 && part.front() == '[' && part.back() == ']';
    pointer = json_pointer_append(pointer, bracketed ? part.substr(1, part.size() - 2) : part);
  }
  return pointer;
}

std::size_t depth_of(const std::string& pointer) {
  return static_cast<std::size_t>(std::count(pointer.begin(), pointer.end(), '/'));
}

std::string plural(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// Characters of a UTF-8 string (code points), as JSON Schema counts string lengths.
std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

bool type_matches(const std::string& type, const json& v) {
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return true;
}

/// The bound(s) a number must respect. A small closed range is named whole ("between 0 and 3"); a wide
/// one names the side that matters: the upper bound for a value above it, else the lower bound (the
/// upper bounds of sizes only keep absurd values out).
std::string range_phrase(const json& s, const std::string& noun, const json* value) {
  const auto min = s.find("minimum"), emin = s.find("exclusiveMinimum");
  const auto max = s.find("maximum"), emax = s.find("exclusiveMaximum");
  const bool has_min = min != s.end(), has_emin = emin != s.end();
  const bool has_max = max != s.end(), has_emax = emax != s.end();
  if (has_min && has_max && max->get<double>() - min->get<double>() <= kSmallRange)
    return noun + " between " + min->dump() + " and " + max->dump();
  const std::string lower = has_min ? ">= " + min->dump() : has_emin ? "> " + emin->dump() : "";
  const std::string upper = has_max ? "<= " + max->dump() : has_emax ? "< " + emax->dump() : "";
  const bool above = value && value->is_number() &&
                     ((has_max && value->get<double>() > max->get<double>()) || (has_emax && value->get<double>() >= emax->get<double>()));
  if (above || lower.empty()) return upper.empty() ? noun : noun + " " + upper;
  return noun + " " + lower;
}

bool all_strings(const json& array) {
  for (const auto& e : array)
    if (!e.is_string()) return false;
  return true;
}

std::vector<std::string> strings_of(const json& array) {
  std::vector<std::string> out;
  for (const auto& e : array) out.push_back(e.get<std::string>());
  return out;
}

/// The keys of a "oneOf"/"anyOf" whose branches are each {"required": [one key]}, else empty.
std::vector<std::string> key_alternatives(const json& branches) {
  std::vector<std::string> keys;
  for (const auto& b : branches) {
    if (!b.is_object() || b.size() != 1 || !b.contains("required") || b["required"].size() != 1) return {};
    keys.push_back(b["required"][0].get<std::string>());
  }
  return keys;
}

bool before(const SourceLocation& a, const SourceLocation& b) {
  return std::tie(a.line, a.column) < std::tie(b.line, b.column);
}

class Explainer {
 public:
  explicit Explainer(const Locator& where) : where_(where) {}

  /// The first constraint of `schema` that the value at `pointer` breaks by itself (its members and
  /// items are judged at their own pointers), or nothing.
  std::optional<SchemaFault> explain(const json& schema_in, const json& v, const std::string& pointer) const {
    const json& s = resolve_ref(schema_in);
    if (!s.is_object()) return std::nullopt;
    auto fault = [&](std::string message) { return SchemaFault{pointer, false, std::move(message)}; };
    const std::string found = "found " + describe_json_value(v);

    if (const auto type = s.find("type"); type != s.end() && type->is_string() && !type_matches(*type, v))
      return fault(found + ", expected " + expected_phrase(s, &v));

    if (const auto e = s.find("enum"); e != s.end() && std::find(e->begin(), e->end(), v) == e->end()) {
      if (v.is_string() && all_strings(*e)) {
        const std::string word = v.get<std::string>();
        const auto allowed = strings_of(*e);
        return fault("found \"" + word + "\", expected " + expected_phrase(s) + did_you_mean(word, allowed));
      }
      return fault(found + ", expected " + expected_phrase(s, &v));
    }

    if (v.is_number() && !number_in_range(s, v.get<double>())) return fault(found + ", expected " + expected_phrase(s, &v));

    if (v.is_string()) {
      const std::string str = v.get<std::string>();
      const std::size_t length = utf8_length(str);
      if (const auto min = s.find("minLength"); min != s.end() && length < min->get<std::size_t>())
        return fault((length == 0 ? std::string("found an empty string") : "found a string of " + plural(length, "character")) +
                     ", expected " + expected_phrase(s));
      if (const auto max = s.find("maxLength"); max != s.end() && length > max->get<std::size_t>())
        return fault("found a string of " + plural(length, "character") + ", expected at most " +
                     plural(max->get<std::size_t>(), "character"));
      if (const auto pattern = s.find("pattern"); pattern != s.end() && !std::regex_search(str, std::regex(pattern->get<std::string>())))
        return fault(found + ", expected " + expected_phrase(s, &v));
    }

    if (v.is_object()) return explain_object(s, v, pointer);
    if (v.is_array()) return explain_array(s, v, pointer);
    return std::nullopt;
  }

 private:
  static bool number_in_range(const json& s, double d) {
    if (const auto m = s.find("minimum"); m != s.end() && d < m->get<double>()) return false;
    if (const auto m = s.find("exclusiveMinimum"); m != s.end() && d <= m->get<double>()) return false;
    if (const auto m = s.find("maximum"); m != s.end() && d > m->get<double>()) return false;
    if (const auto m = s.find("exclusiveMaximum"); m != s.end() && d >= m->get<double>()) return false;
    return true;
  }

  std::optional<SchemaFault> explain_object(const json& s, const json& v, const std::string& pointer) const {
    const json properties = s.value("properties", json::object());
    const auto extra = s.find("additionalProperties");
    if (extra != s.end() && extra->is_boolean() && !extra->get<bool>()) {
      std::optional<SchemaFault> first;
      SourceLocation first_loc{};
      std::vector<std::string> known;
      for (const auto& item : properties.items()) known.push_back(item.key());
      for (const auto& item : v.items()) {
        if (properties.contains(item.key())) continue;
        const std::string child = json_pointer_append(pointer, item.key());
        const SourceLocation loc = where_(child, true);
        if (first && !before(loc, first_loc)) continue;
        const std::string suggestion = did_you_mean(item.key(), known);
        first = SchemaFault{child, true,
                            "unknown key \"" + item.key() + "\"" +
                                (suggestion.empty() ? "; expected one of " + quoted_list(known) : suggestion)};
        first_loc = loc;
      }
      if (first) return first;
    }

    if (const auto required = s.find("required"); required != s.end())
      for (const auto& key : *required)
        if (!v.contains(key.get<std::string>()))
          return SchemaFault{pointer, false, "missing required key \"" + key.get<std::string>() + "\""};

    for (const char* combinator : {"oneOf", "anyOf"}) {
      const auto branches = s.find(combinator);
      if (branches == s.end()) continue;
      const bool exactly_one = std::string(combinator) == "oneOf";
      const std::vector<std::string> keys = key_alternatives(*branches);
      if (keys.empty()) continue;  // not a choice between keys; left to the fallback
      std::vector<std::pair<SourceLocation, std::string>> present;
      for (const auto& k : keys)
        if (v.contains(k)) present.emplace_back(where_(json_pointer_append(pointer, k), true), k);
      std::sort(present.begin(), present.end(),
                [](const auto& a, const auto& b) { return before(a.first, b.first); });
      const std::string choices = exactly_one ? "exactly one of " + quoted_list(keys) : quoted_list(keys);
      if (present.empty()) return SchemaFault{pointer, false, "missing required key: expected " + choices};
      if (exactly_one && present.size() > 1) {
        std::vector<std::string> names;
        for (const auto& p : present) names.push_back(p.second);
        std::string found = names.size() == 2 ? "found both " : "found ";
        for (std::size_t i = 0; i < names.size(); ++i)
          found += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + ("\"" + names[i] + "\"");
        return SchemaFault{json_pointer_append(pointer, present[1].second), true, found + ", expected " + choices};
      }
    }

    if (const auto min = s.find("minProperties"); min != s.end() && v.size() < min->get<std::size_t>())
      return SchemaFault{pointer, false,
                         (v.empty() ? std::string("found an empty object") : "found an object of " + plural(v.size(), "member")) +
                             ", expected at least " + plural(min->get<std::size_t>(), "member")};
    return std::nullopt;
  }

  std::optional<SchemaFault> explain_array(const json& s, const json& v, const std::string& pointer) const {
    const std::string found =
        v.empty() ? std::string("found an empty array") : "found an array of " + plural(v.size(), "item");
    if (const auto min = s.find("minItems"); min != s.end() && v.size() < min->get<std::size_t>())
      return SchemaFault{pointer, false, found + ", expected at least " + plural(min->get<std::size_t>(), "item")};
    if (const auto max = s.find("maxItems"); max != s.end() && v.size() > max->get<std::size_t>())
      return SchemaFault{pointer, false, found + ", expected at most " + plural(max->get<std::size_t>(), "item")};
    if (s.value("uniqueItems", false)) {
      for (std::size_t j = 1; j < v.size(); ++j)
        for (std::size_t i = 0; i < j; ++i)
          if (v[i] == v[j])
            return SchemaFault{json_pointer_append(pointer, j), false,
                               "found " + describe_json_value(v[j]) + " again (it is also item " + std::to_string(i) +
                                   "), expected each item once"};
    }
    return std::nullopt;
  }

  const Locator& where_;
};

}  // namespace

std::string expected_phrase(const json& schema) { return expected_phrase(schema, nullptr); }

std::string expected_phrase(const json& schema, const json* value) {
  const json& s = resolve_ref(schema);
  if (!s.is_object()) return "a value";
  if (const auto e = s.find("enum"); e != s.end()) {
    if (e->size() == 1) return e->front().is_string() ? "\"" + e->front().get<std::string>() + "\"" : e->front().dump();
    if (all_strings(*e)) return "one of " + quoted_list(strings_of(*e));
    std::string out = "one of ";
    for (std::size_t i = 0; i < e->size(); ++i) out += (i == 0 ? "" : ", ") + (*e)[i].dump();
    return out;
  }
  const std::string type = s.value("type", std::string());
  if (type == "integer") return range_phrase(s, "an integer", value);
  if (type == "number") return range_phrase(s, "a number", value);
  if (type == "string") {
    if (const auto hint = s.find("x-expected"); hint != s.end()) return hint->get<std::string>();
    return s.value("minLength", 0) >= 1 ? "a non-empty string" : "a string";
  }
  if (type == "boolean") return "true or false";
  if (type == "object") return "an object";
  if (type == "array") return "an array";
  return "a value";
}

std::optional<SchemaFault> check_scenario_structure(const json& instance, const Locator& where) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  const valijson::adapters::NlohmannJsonAdapter target(instance);
  if (validator.validate(validator_schema(), target, &results)) return std::nullopt;

  // valijson reports every failing constraint, and each enclosing value once more ("failed to validate
  // against the schema of property 'plan'"). Explain each failing place in our words; the ones that
  // break nothing by themselves (only their members do) explain to nothing and drop out.
  std::set<std::string> places;
  std::optional<SchemaFault> best;
  SourceLocation best_loc{};
  std::string deepest_context, deepest_description;
  valijson::ValidationResults::Error error;
  const Explainer explainer(where);
  while (results.popError(error)) {
    const std::string pointer = context_to_pointer(error.context);
    if (deepest_context.empty() || depth_of(pointer) > depth_of(deepest_context)) {
      deepest_context = pointer;
      deepest_description = error.description;
    }
    if (!places.insert(pointer).second) continue;
    const json::json_pointer jp(pointer);
    if (!instance.contains(jp)) continue;
    const json* schema = schema_at(instance, pointer);
    if (!schema) continue;
    std::optional<SchemaFault> fault = explainer.explain(*schema, instance.at(jp), pointer);
    if (!fault) continue;
    const SourceLocation loc = where(fault->pointer, fault->at_key);
    const bool better = !best || depth_of(fault->pointer) > depth_of(best->pointer) ||
                        (depth_of(fault->pointer) == depth_of(best->pointer) && before(loc, best_loc));
    if (better) {
      best = std::move(fault);
      best_loc = loc;
    }
  }
  if (best) return best;
  // A constraint the explainer does not know (the schema grew one): valijson's own words, still located.
  return SchemaFault{deepest_context, false, "does not match the scenario schema: " + deepest_description};
}

}  // namespace parasim::scenarios
