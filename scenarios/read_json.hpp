#pragma once
/// Reading the JSON files a scenario involves (the scenario, model files, profiles) into JsonDocuments,
/// with two guards JsonDocument leaves out: nesting deeper than any of these formats needs (64 levels;
/// it would exhaust the stack of the location scanner), and numbers too large for a double (which
/// nlohmann reports as out_of_range rather than as a syntax error). Both become located InputErrors.
#include <string>
#include <string_view>

#include "common/json_document.hpp"

namespace parasim::scenarios {

/// Parses `text`; `file` names it in errors. Throws InputError.
[[nodiscard]] JsonDocument parse_json_text(std::string_view text, const std::string& file);

/// Reads and parses the file at `path`. Throws InputError, also when it is missing or a folder.
[[nodiscard]] JsonDocument read_json_file(const std::string& path);

}  // namespace parasim::scenarios
