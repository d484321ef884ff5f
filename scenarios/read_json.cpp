#include "scenarios/read_json.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace parasim::scenarios {
namespace {

/// Scenarios, model files and profiles nest a few levels deep; refusing far deeper text up front keeps
/// JsonDocument's recursive location scanner within its stack.
constexpr int kMaxNesting = 64;

SourceLocation location_of(std::string_view text, std::size_t offset) {
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

}  // namespace

JsonDocument parse_json_text(std::string_view text, const std::string& file) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxNesting) {
        const SourceLocation loc = location_of(text, i);
        throw InputError(file, loc.line, loc.column, "",
                         "malformed JSON: values nested more than " + std::to_string(kMaxNesting) + " levels deep");
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  try {
    return JsonDocument::parse(text, file);
  } catch (const nlohmann::json::out_of_range& e) {
    // "number overflow parsing '1e400'": point at the number.
    const std::string what = e.what();
    const auto open = what.find("parsing '");
    const auto close = open == std::string::npos ? std::string::npos : what.find('\'', open + 9);
    SourceLocation loc{0, 0};
    if (close != std::string::npos) {
      const auto at = text.find(what.substr(open + 9, close - open - 9));
      if (at != std::string_view::npos) loc = location_of(text, at);
    }
    throw InputError(file, loc.line, loc.column, "", "malformed JSON: a number too large for a double-precision value");
  }
}

JsonDocument read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, 0, "", "is a folder, not a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "", "cannot open the file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, 0, "", "cannot read the file");
  return parse_json_text(text.str(), path);
}

}  // namespace parasim::scenarios
