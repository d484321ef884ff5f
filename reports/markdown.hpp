#pragma once
/// report.md: the content of the stdout table (every figure with its unit, each what-if's change
/// against the base, which backend and profile produced the figures) and, for the base and each
/// what-if, the plan, the time breakdown by category, time per pipeline stage, memory by kind per
/// stage against capacity, and the communication volume. GitHub-flavoured Markdown; every string
/// that comes from a scenario, profile or model is escaped, so no name can break a table, start a
/// heading or inject HTML.
#include <span>
#include <string>
#include <string_view>

#include "sim/result.hpp"

namespace parasim::reports {

/// `text` as literal Markdown inline text: the characters Markdown or HTML would interpret
/// (\ ` * _ [ ] < > # ! | ~ & $) get a backslash, control characters (newlines included) become
/// spaces.
[[nodiscard]] std::string escape_markdown(std::string_view text);

/// report.md for `results`: the base first, then its what-ifs. Precondition: at least one result.
[[nodiscard]] std::string render_markdown(std::span<const sim::Result> results);

}  // namespace parasim::reports
