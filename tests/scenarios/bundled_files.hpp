#pragma once
/// The scenario files parasim ships (scenarios/examples, scenarios/search), for the tests that check
/// each one loads and validates.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_document.hpp"
#include "scenarios/schema_check.hpp"

namespace parasim::testing {

/// The .json files of `dir`, sorted.
inline std::vector<std::string> json_files_in(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// "" when `file` is valid against the scenario schema on its own, else "POINTER: MESSAGE".
inline std::string schema_fault(const std::string& file) {
  const auto doc = JsonDocument::read_file(file);
  const auto fault = scenarios::check_scenario_structure(
      doc.root(), [&doc](const std::string& p, bool at_key) { return at_key ? doc.locate_key(p) : doc.locate(p); });
  return fault ? fault->pointer + ": " + fault->message : std::string();
}

}  // namespace parasim::testing
