#pragma once
/// Graph JSON: a user's own model as a file, and any Graph written out. The format is specified in
/// models/README.md ("Graph JSON"). Reading checks everything Graph::check() checks and reports the
/// first fault as an InputError with the file, line, column and JSON pointer of the operator, edge
/// or field concerned. Writing then reading gives an equal Graph.
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "models/graph.hpp"

namespace parasim::models {

/// The value of the "format" member that marks a graph JSON, and the version this code reads and writes.
inline constexpr const char* kGraphFormat = "parasim-graph";
inline constexpr int kGraphFormatVersion = 1;

/// The graph as a JSON value, members in the documented order.
[[nodiscard]] nlohmann::ordered_json to_json(const Graph& g);

/// The graph as text: one operator and one edge per line, so files diff well. Ends with a newline.
[[nodiscard]] std::string to_json_text(const Graph& g);

/// Reads the graph at `pointer` ("" for the whole document). Throws InputError on any fault: unknown
/// or missing keys, wrong types, sizes < 1, unknown kinds, dtypes, layers or operators, and every
/// structural problem of Graph::check() (a dangling input, a cycle, mismatched dims, ...).
[[nodiscard]] Graph graph_from_json(const JsonDocument& doc, const std::string& pointer = "");

}  // namespace parasim::models
