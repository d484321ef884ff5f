#include "common/json_reader.hpp"

#include <cmath>

#include "common/did_you_mean.hpp"
#include "common/format.hpp"

namespace parasim {
namespace {

bool is_integer(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  // 4096.0 is accepted as an integer; 1e3 too. Fractions are not.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15;
  }
  return false;
}

std::int64_t as_integer(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  return static_cast<std::int64_t>(v.get<double>());
}

}  // namespace

const nlohmann::json& value_at(const JsonDocument& doc, const std::string& pointer) {
  return doc.root().at(nlohmann::json::json_pointer(pointer));
}

std::int64_t read_integer(const JsonDocument& doc, const std::string& pointer, std::int64_t min_value) {
  const auto& v = value_at(doc, pointer);
  if (!is_integer(v)) throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected an integer");
  const std::int64_t i = as_integer(v);
  if (i < min_value)
    throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected an integer >= " + std::to_string(min_value));
  return i;
}

std::string read_string(const JsonDocument& doc, const std::string& pointer) {
  const auto& v = value_at(doc, pointer);
  if (!v.is_string()) throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected a string");
  return v.get<std::string>();
}

ObjectReader::ObjectReader(const JsonDocument& doc, std::string pointer)
    : doc_(doc), pointer_(std::move(pointer)), object_(value_at(doc, pointer_)) {
  if (!object_.is_object())
    throw doc_.error_at(pointer_, "found " + describe_json_value(object_) + ", expected an object");
}

bool ObjectReader::has(const std::string& key) const { return object_.contains(key); }

InputError ObjectReader::error(const std::string& key, const std::string& message) const {
  return has(key) ? doc_.error_at(pointer_of(key), message) : doc_.error_at(pointer_, message);
}

const nlohmann::json& ObjectReader::required(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  if (it == object_.end()) throw doc_.error_at(pointer_, "missing required key \"" + key + "\"");
  return *it;
}

const nlohmann::json* ObjectReader::optional(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void ObjectReader::accept(const std::string& key) { known_.insert(key); }

std::string ObjectReader::string(const std::string& key) {
  required(key);
  return read_string(doc_, pointer_of(key));
}

std::string ObjectReader::string_or(const std::string& key, const std::string& fallback) {
  return optional(key) ? read_string(doc_, pointer_of(key)) : fallback;
}

std::string ObjectReader::enum_string(const std::string& key, const std::vector<std::string>& allowed) {
  const std::string s = string(key);
  for (const auto& a : allowed)
    if (a == s) return s;
  throw doc_.error_at(pointer_of(key), "found \"" + s + "\", expected one of " + quoted_list(allowed) + did_you_mean(s, allowed));
}

std::string ObjectReader::enum_string_or(const std::string& key, const std::vector<std::string>& allowed,
                                         const std::string& fallback) {
  if (!has(key)) {
    known_.insert(key);
    return fallback;
  }
  return enum_string(key, allowed);
}

std::int64_t ObjectReader::integer(const std::string& key, std::int64_t min_value) {
  required(key);
  return read_integer(doc_, pointer_of(key), min_value);
}

std::int64_t ObjectReader::integer_or(const std::string& key, std::int64_t min_value, std::int64_t fallback) {
  return optional(key) ? read_integer(doc_, pointer_of(key), min_value) : fallback;
}

double ObjectReader::number(const std::string& key, double min_value) {
  const auto& v = required(key);
  if (!v.is_number()) throw doc_.error_at(pointer_of(key), "found " + describe_json_value(v) + ", expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min_value)
    throw doc_.error_at(pointer_of(key),
                        "found " + describe_json_value(v) + ", expected a number >= " + format_number(min_value));
  return d;
}

double ObjectReader::number_or(const std::string& key, double min_value, double fallback) {
  return optional(key) ? number(key, min_value) : fallback;
}

double ObjectReader::positive(const std::string& key) {
  const auto& v = required(key);
  if (!v.is_number()) throw doc_.error_at(pointer_of(key), "found " + describe_json_value(v) + ", expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0)
    throw doc_.error_at(pointer_of(key), "found " + describe_json_value(v) + ", expected a number > 0");
  return d;
}

double ObjectReader::positive_or(const std::string& key, double fallback) {
  return optional(key) ? positive(key) : fallback;
}

bool ObjectReader::boolean_or(const std::string& key, bool fallback) {
  const auto* v = optional(key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw doc_.error_at(pointer_of(key), "found " + describe_json_value(*v) + ", expected true or false");
  return v->get<bool>();
}

ObjectReader ObjectReader::object(const std::string& key) {
  required(key);
  return ObjectReader(doc_, pointer_of(key));
}

std::vector<std::string> ObjectReader::array(const std::string& key) {
  const auto& v = required(key);
  if (!v.is_array()) throw doc_.error_at(pointer_of(key), "found " + describe_json_value(v) + ", expected an array");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(json_pointer_append(pointer_of(key), i));
  return out;
}

void ObjectReader::finish() const {
  std::vector<std::string> known(known_.begin(), known_.end());
  const std::string* first = nullptr;
  SourceLocation first_loc{};
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (known_.count(it.key())) continue;
    const SourceLocation loc = doc_.locate_key(pointer_of(it.key()));
    if (!first || loc.line < first_loc.line || (loc.line == first_loc.line && loc.column < first_loc.column)) {
      first = &it.key();
      first_loc = loc;
    }
  }
  if (first) {
    throw doc_.error_at_key(pointer_of(*first), "unknown key \"" + *first + "\"" + did_you_mean(*first, known) +
                                                    "; expected one of " + quoted_list(known));
  }
}

}  // namespace parasim
