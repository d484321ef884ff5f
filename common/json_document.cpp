#include "common/json_document.hpp"

#include "common/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace parasim {
namespace {

SourceLocation location_of_offset(std::string_view text, std::size_t offset) {
  SourceLocation loc{1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

/// Walks JSON text that nlohmann has already accepted and records where each value and key starts.
class LocationScanner {
 public:
  LocationScanner(std::string_view text, const std::string& file, std::map<std::string, SourceLocation>& values,
                  std::map<std::string, SourceLocation>& keys)
      : text_(text), file_(file), values_(values), keys_(keys) {}

  void scan() {
    skip_ws();
    value("");
  }

 private:
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_ws() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      advance();
  }
  SourceLocation here() const { return {line_, col_}; }

  // Returns the decoded key text (escapes resolved the simple way: JSON pointers of keys with escapes
  // are rare in our formats; \uXXXX is kept verbatim, which only affects location lookup of such keys).
  std::string string_token() {
    std::string out;
    advance();  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\') {
        advance();
        const char c = text_[pos_];
        switch (c) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': out += "\\u"; break;
          default: out += c;
        }
        advance();
      } else {
        out += text_[pos_];
        advance();
      }
    }
    advance();  // closing quote
    return out;
  }

  void value(const std::string& pointer) {
    values_.emplace(pointer, here());
    const char c = text_[pos_];
    if (c == '{') {
      const SourceLocation object_start = here();
      advance();
      skip_ws();
      std::set<std::string> seen;
      if (text_[pos_] == '}') {
        advance();
        return;
      }
      while (true) {
        skip_ws();
        const SourceLocation key_loc = here();
        const std::string key = string_token();
        const std::string child = json_pointer_append(pointer, key);
        if (!seen.insert(key).second) {
          throw InputError(file_, key_loc.line, key_loc.column, child,
                           "duplicate key \"" + key + "\" in the object that starts at line " +
                               std::to_string(object_start.line) + "; each key may appear once");
        }
        keys_.emplace(child, key_loc);
        skip_ws();
        advance();  // ':'
        skip_ws();
        value(child);
        skip_ws();
        if (text_[pos_] == ',') {
          advance();
          continue;
        }
        advance();  // '}'
        return;
      }
    }
    if (c == '[') {
      advance();
      skip_ws();
      if (text_[pos_] == ']') {
        advance();
        return;
      }
      for (std::size_t index = 0;; ++index) {
        skip_ws();
        value(json_pointer_append(pointer, index));
        skip_ws();
        if (text_[pos_] == ',') {
          advance();
          continue;
        }
        advance();  // ']'
        return;
      }
    }
    if (c == '"') {
      string_token();
      return;
    }
    // number, true, false, null
    while (pos_ < text_.size()) {
      const char d = text_[pos_];
      if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\n' || d == '\t' || d == '\r') break;
      advance();
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::map<std::string, SourceLocation>& values_;
  std::map<std::string, SourceLocation>& keys_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

std::string parent_pointer(const std::string& pointer) {
  const auto slash = pointer.rfind('/');
  return slash == std::string::npos ? std::string() : pointer.substr(0, slash);
}

/// Deepest nesting any parasim input may use; deeper text is refused before parsing, so no input
/// can exhaust the stack of the location scanner (which recurses once per level).
constexpr int kMaxDepth = 512;

void check_depth(std::string_view text, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) {
        const SourceLocation loc = location_of_offset(text, i);
        throw InputError(file, loc.line, loc.column, "",
                         "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels; parasim inputs are at most a few levels deep");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

}  // namespace

JsonDocument JsonDocument::parse(std::string_view text, std::string file) {
  JsonDocument doc;
  doc.file_ = std::move(file);
  check_depth(text, doc.file_);
  try {
    doc.root_ = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte is 1-based and points at the last character read.
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    const SourceLocation loc = location_of_offset(text, offset);
    std::string what = e.what();
    const auto pos = what.find("syntax error");
    std::string detail = pos == std::string::npos ? what : what.substr(pos);
    throw InputError(doc.file_, loc.line, loc.column, "", "malformed JSON: " + detail);
  } catch (const nlohmann::json::out_of_range& e) {
    // "number overflow parsing '1e400'": nlohmann gives no position, so point at the number's text.
    const std::string what = e.what();
    const auto open = what.find("parsing '");
    const auto close = open == std::string::npos ? std::string::npos : what.find('\'', open + 9);
    SourceLocation loc{0, 0};
    if (close != std::string::npos) {
      const auto at = text.find(what.substr(open + 9, close - open - 9));
      if (at != std::string_view::npos) loc = location_of_offset(text, at);
    }
    throw InputError(doc.file_, loc.line, loc.column, "", "malformed JSON: a number too large for a double-precision value");
  } catch (const nlohmann::json::exception& e) {
    const std::string what = e.what();
    const auto close = what.find("] ");
    throw InputError(doc.file_, 0, 0, "", "malformed JSON: " + (close == std::string::npos ? what : what.substr(close + 2)));
  }
  LocationScanner(text, doc.file_, doc.values_, doc.keys_).scan();
  return doc;
}

JsonDocument JsonDocument::read_file(const std::string& path) { return parse(read_input_file(path, kMaxJsonBytes, "a JSON file"), path); }

SourceLocation JsonDocument::locate(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    if (auto it = values_.find(p); it != values_.end()) return it->second;
    if (p.empty()) return {1, 1};
    p = parent_pointer(p);
  }
}

SourceLocation JsonDocument::locate_key(const std::string& pointer) const {
  if (auto it = keys_.find(pointer); it != keys_.end()) return it->second;
  return locate(pointer);
}

InputError JsonDocument::error_at(const std::string& pointer, const std::string& message) const {
  const SourceLocation loc = locate(pointer);
  return InputError(file_, loc.line, loc.column, pointer.empty() ? "/" : pointer, message);
}

InputError JsonDocument::error_at_key(const std::string& pointer, const std::string& message) const {
  const SourceLocation loc = locate_key(pointer);
  return InputError(file_, loc.line, loc.column, pointer.empty() ? "/" : pointer, message);
}

std::string json_pointer_append(const std::string& pointer, std::string_view token) {
  std::string out = pointer + "/";
  for (const char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string json_pointer_append(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string describe_json_value(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return std::string("boolean ") + (v.get<bool>() ? "true" : "false");
    case nlohmann::json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "string \"" + s + "\"";
    }
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer " + v.dump();
    case nlohmann::json::value_t::number_float: return "number " + v.dump();
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    default: return "a value";
  }
}

}  // namespace parasim
