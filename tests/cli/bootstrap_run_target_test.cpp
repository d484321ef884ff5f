// The README's run command builds only what its scenario runs (issue 19, fault 8: it compiled the
// whole test suite, 16 minutes on a fresh machine): `bash scripts/bootstrap.sh run` builds the
// `parasim` target, which must not bring in the tests, the benchmarks or any plugin (the GPU
// library's CUDA code above all). Checked on this build's own dependency graph, as make reads it
// (CMakeFiles/Makefile2: a line "A/all: B/all" for each target B that A waits for).
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_parasim.hpp"

namespace {

/// Every target `from` waits for, directly or not ("cli/CMakeFiles/parasim.dir", ...).
std::set<std::string> reached(const std::map<std::string, std::vector<std::string>>& graph, const std::string& from) {
  std::set<std::string> seen;
  std::vector<std::string> pending{from};
  while (!pending.empty()) {
    const std::string t = pending.back();
    pending.pop_back();
    const auto it = graph.find(t);
    if (it == graph.end()) continue;
    for (const auto& d : it->second)
      if (seen.insert(d).second) pending.push_back(d);
  }
  return seen;
}

bool any_of_names(const std::set<std::string>& targets, const std::string& name) {
  for (const auto& t : targets)
    if (t.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("bootstrap.sh run builds the parasim binary and nothing else", "[cli][bootstrap]") {
  const std::string script = parasim::testing::slurp(std::string(PARASIM_SOURCE_DIR) + "/scripts/bootstrap.sh");
  REQUIRE(script.find("cmake --build build -j\"$jobs\" --target parasim\n") != std::string::npos);

  const std::filesystem::path makefile = std::filesystem::path(PARASIM_BINARY).parent_path() / "CMakeFiles" / "Makefile2";
  if (!std::filesystem::exists(makefile)) {
    WARN("skipped: this build was not generated for make (no " + makefile.string() + ")");
    return;
  }
  std::map<std::string, std::vector<std::string>> graph;
  std::istringstream lines(parasim::testing::slurp(makefile));
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find("/all: ");
    if (colon == std::string::npos || line.find(' ') < colon || line.size() < colon + 6 + 4 || line.compare(line.size() - 4, 4, "/all") != 0)
      continue;
    graph[line.substr(0, colon)].push_back(line.substr(colon + 6, line.size() - 4 - (colon + 6)));
  }
  const std::set<std::string> binary = reached(graph, "cli/CMakeFiles/parasim.dir");
  CHECK(binary.count("cli/CMakeFiles/parasim_all.dir") == 1);
  for (const char* other : {"parasim_tests.dir", "_bench.dir", "parasim_plugins.dir", "parasim_gpu.dir", "parasim_mpi_plugin.dir",
                            "parasim_simgrid.dir", "parasim_blas.dir"}) {
    INFO(other);
    CHECK_FALSE(any_of_names(binary, other));
  }
  // The test suite does build the plugins it loads (the same reading of the graph finds them).
  const std::set<std::string> tests = reached(graph, "tests/CMakeFiles/parasim_tests.dir");
  CHECK(any_of_names(tests, "parasim_simgrid.dir"));
  CHECK(any_of_names(tests, "parasim_blas.dir"));
}
