#pragma once
/// A parsed JSON text that remembers where every value came from, so any layer that reads user JSON
/// (scenario, graph, HF config, profile) can report file, line, column and JSON pointer.
/// nlohmann/json does the parsing; it keeps no source positions, so a small scanner over the
/// already-validated text indexes the position of each value and key (and rejects duplicate keys,
/// which nlohmann would silently merge).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace parasim {

/// 1-based line and column (column counted in bytes).
struct SourceLocation {
  int line = 0;
  int column = 0;
};

class JsonDocument {
 public:
  /// Parses `text`; `file` names it in error messages. Throws InputError on a syntax error
  /// (with the line and column of the fault) or on a duplicate key.
  static JsonDocument parse(std::string_view text, std::string file);
  /// Reads and parses a file. Throws InputError if it cannot be read.
  static JsonDocument read_file(const std::string& path);

  const nlohmann::json& root() const { return root_; }
  const std::string& file() const { return file_; }

  /// Location of the value at `pointer` ("" is the root); for a pointer that does not exist, the
  /// location of its nearest existing ancestor.
  [[nodiscard]] SourceLocation locate(const std::string& pointer) const;
  /// Location of the key of the member at `pointer` (for "unknown key" errors); falls back to locate().
  [[nodiscard]] SourceLocation locate_key(const std::string& pointer) const;

  /// An InputError located at `pointer`.
  [[nodiscard]] InputError error_at(const std::string& pointer, const std::string& message) const;
  [[nodiscard]] InputError error_at_key(const std::string& pointer, const std::string& message) const;

 private:
  std::string file_;
  nlohmann::json root_;
  std::map<std::string, SourceLocation> values_;
  std::map<std::string, SourceLocation> keys_;
};

/// Appends an RFC 6901 reference token (escaping '~' and '/') to a pointer.
[[nodiscard]] std::string json_pointer_append(const std::string& pointer, std::string_view token);
[[nodiscard]] std::string json_pointer_append(const std::string& pointer, std::size_t index);

/// "string \"abc\"", "integer 3", "object", ... — how a found value is described in messages.
[[nodiscard]] std::string describe_json_value(const nlohmann::json& v);

}  // namespace parasim
