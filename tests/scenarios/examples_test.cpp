// The examples a user copies from: each loads with its what-ifs, deterministically, and each is
// valid against the schema on its own.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/loader.hpp"
#include "tests/scenarios/bundled_files.hpp"

namespace fs = std::filesystem;
using parasim::scenarios::load_scenario;
using parasim::scenarios::Scenario;

namespace {

const std::string kExamples = std::string(PARASIM_SOURCE_DIR) + "/scenarios/examples";

std::vector<std::string> example_files() { return parasim::testing::json_files_in(kExamples); }

}  // namespace

TEST_CASE("scenario examples: each loads, with its what-ifs, and loads the same twice", "[scenarios]") {
  const auto files = example_files();
  REQUIRE(files.size() == 13);
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
    INFO(file);
    CHECK(parasim::testing::schema_fault(file) == "");
  }
}

