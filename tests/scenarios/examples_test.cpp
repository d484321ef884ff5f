// The examples a user copies from: each loads with its what-ifs, deterministically, and each is
// valid against the schema on its own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_document.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/schema_check.hpp"

namespace fs = std::filesystem;
using parasim::scenarios::load_scenario;
using parasim::scenarios::Scenario;

namespace {

const std::string kExamples = std::string(PARASIM_SOURCE_DIR) + "/scenarios/examples";

std::vector<std::string> example_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(kExamples))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("scenario examples: each loads, with its what-ifs, and loads the same twice", "[scenarios]") {
  const auto files = example_files();
  REQUIRE(files.size() == 7);
  for (const auto& file : files) {
    SECTION(fs::path(file).filename().string()) {
      const Scenario first = load_scenario(file);
      CHECK_FALSE(first.description.empty());
      CHECK(first.file == file);
      CHECK(first.name == fs::path(file).stem().string());
      CHECK(first.output_dir == "parasim-out/" + first.name);
      CHECK_FALSE(first.what_ifs.empty());
      for (const auto& w : first.what_ifs) {
        CHECK_FALSE(w.description.empty());
        CHECK(w.what_ifs.empty());
        CHECK(w.output_dir.rfind(first.output_dir + "/", 0) == 0);
      }
      const Scenario second = load_scenario(file);
      CHECK(first == second);
    }
  }
}

TEST_CASE("scenario examples: each validates against the schema", "[scenarios]") {
  for (const auto& file : example_files()) {
    const auto doc = parasim::JsonDocument::read_file(file);
    const auto fault = parasim::scenarios::check_scenario_structure(
        doc.root(), [&doc](const std::string& p, bool at_key) { return at_key ? doc.locate_key(p) : doc.locate(p); });
    INFO(file << ": " << (fault ? fault->pointer + ": " + fault->message : std::string()));
    CHECK_FALSE(fault.has_value());
  }
}

