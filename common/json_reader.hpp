#pragma once
/// Typed, located access to the members of one JSON object in a JsonDocument. Every accessor marks its
/// key as known; finish() rejects any key no accessor asked for ("unknown key", with "did you mean").
/// Messages say what was found and what was expected.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/json_document.hpp"

namespace parasim {

class ObjectReader {
 public:
  /// Precondition: `pointer` exists in `doc`. Throws InputError if the value there is not an object.
  ObjectReader(const JsonDocument& doc, std::string pointer);

  [[nodiscard]] bool has(const std::string& key) const;
  [[nodiscard]] std::string pointer_of(const std::string& key) const { return json_pointer_append(pointer_, key); }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const JsonDocument& document() const { return doc_; }

  /// The raw member (marks it known); throws "missing required key" when absent.
  const nlohmann::json& required(const std::string& key);
  /// The raw member or nullptr when absent (marks it known).
  const nlohmann::json* optional(const std::string& key);

  std::string string(const std::string& key);
  std::string string_or(const std::string& key, const std::string& fallback);
  /// A string that must be one of `allowed`; unknown values are errors with "did you mean".
  std::string enum_string(const std::string& key, const std::vector<std::string>& allowed);
  std::string enum_string_or(const std::string& key, const std::vector<std::string>& allowed, const std::string& fallback);

  /// An integer ≥ min_value.
  std::int64_t integer(const std::string& key, std::int64_t min_value);
  std::int64_t integer_or(const std::string& key, std::int64_t min_value, std::int64_t fallback);
  /// A finite number > 0 (strictly positive).
  double positive(const std::string& key);
  double positive_or(const std::string& key, double fallback);
  /// A finite number ≥ min_value.
  double number(const std::string& key, double min_value);
  double number_or(const std::string& key, double min_value, double fallback);
  bool boolean_or(const std::string& key, bool fallback);

  /// A nested object reader (the member must be an object).
  ObjectReader object(const std::string& key);
  /// Pointers to the elements of an array member (the member must be an array).
  std::vector<std::string> array(const std::string& key);

  /// Marks a key known without reading it (for keys validated elsewhere).
  void accept(const std::string& key);
  /// Throws on the first unknown key, in document order.
  void finish() const;

  /// An InputError located at member `key` of this object.
  [[nodiscard]] InputError error(const std::string& key, const std::string& message) const;

 private:
  const JsonDocument& doc_;
  std::string pointer_;
  const nlohmann::json& object_;
  std::set<std::string> known_;
};

/// Reads an integer at a pointer (for array elements); ≥ min_value.
[[nodiscard]] std::int64_t read_integer(const JsonDocument& doc, const std::string& pointer, std::int64_t min_value);
/// Reads a string at a pointer (for array elements).
[[nodiscard]] std::string read_string(const JsonDocument& doc, const std::string& pointer);
/// The value at a pointer. Precondition: the pointer exists.
[[nodiscard]] const nlohmann::json& value_at(const JsonDocument& doc, const std::string& pointer);

}  // namespace parasim
