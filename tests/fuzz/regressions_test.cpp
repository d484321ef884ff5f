// Replays every committed fuzz input in the ordinary build (and under the sanitizer build): the
// minimised corpus in fuzz/corpus/TARGET and the inputs that once made a target fail, in
// fuzz/regressions/TARGET. Each must satisfy fuzz/inputs.hpp's contract: load, or fail with an
// InputError (a PlanError for a scenario that cannot run); never another exception or a crash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/inputs.hpp"
#include "tests/cli/run_parasim.hpp"

namespace {

struct Target {
  const char* name;
  void (*run)(std::string_view);
};

const Target kTargets[] = {
    {"scenario", parasim::fuzz::scenario},     {"graph_json", parasim::fuzz::graph_json}, {"hf_config", parasim::fuzz::hf_config},
    {"profile", parasim::fuzz::profile},       {"result_json", parasim::fuzz::result_json}, {"search_json", parasim::fuzz::search_json},
    {"nccl_tests", parasim::fuzz::nccl_tests},
    {"kernel_csv", parasim::fuzz::kernel_csv}, {"input_file", parasim::fuzz::input_file},
};

/// The files of a folder, sorted (none when it does not exist).
std::vector<std::filesystem::path> inputs_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fuzz: every committed corpus input and regression loads or fails with a located error", "[fuzz]") {
  const auto& target = GENERATE(from_range(std::begin(kTargets), std::end(kTargets)));
  INFO("target " << target.name);
  const std::filesystem::path root = PARASIM_SOURCE_DIR "/fuzz";
  const auto corpus = inputs_in(root / "corpus" / target.name);
  // Each target's corpus holds at least its seeds' worth of inputs (scripts/fuzz.sh merges into it).
  CHECK(!corpus.empty());
  std::vector<std::filesystem::path> all = corpus;
  const auto regressions = inputs_in(root / "regressions" / target.name);
  all.insert(all.end(), regressions.begin(), regressions.end());
  for (const auto& file : all) {
    INFO(file.string());
    const std::string bytes = parasim::testing::slurp(file);
    CHECK_NOTHROW(target.run(bytes));
  }
}
