// Golden scenarios (tests/golden/README.md): every folder here holds a scenario.json and the outputs
// parasim wrote for it — result.BACKEND.json, and for small scenarios trace.BACKEND.json — for each
// backend it is checked under. The test runs the built parasim on each scenario and backend, with
// the command line scripts/update-golden.sh runs, and requires every expected file byte for byte:
// the outputs are deterministic, so any drift in a prediction is a diff someone must explain.
//
//   ./build/tests/parasim_tests "[golden]"                                   # every case
//   ./build/tests/parasim_tests "[golden]" -c "megatron-sc21-gpt-1.7b simgrid"   # one case
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::q;
using parasim::testing::slurp;

namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(PARASIM_SOURCE_DIR) / "tests" / "golden";
const char* const kBackends[] = {"analytical", "simgrid"};

/// One golden case: a scenario folder under one backend, and the files it expects.
struct GoldenCase {
  std::string folder;                  ///< its folder under tests/golden/
  std::string backend;                 ///< "analytical" or "simgrid"
  std::vector<std::string> outputs;    ///< "result", and "trace" where its trace is kept

  [[nodiscard]] std::string name() const { return folder + " " + backend; }
};

/// The golden folders, in name order.
std::vector<std::string> golden_folders() {
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kGolden))
    if (entry.is_directory()) folders.push_back(entry.path().filename().string());
  std::sort(folders.begin(), folders.end());
  return folders;
}

/// Every case the golden folders hold, in name order: a backend is checked where its
/// result.BACKEND.json is, and its trace too where trace.BACKEND.json is.
std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  for (const auto& folder : golden_folders())
    for (const std::string backend : kBackends) {
      GoldenCase c{folder, backend, {}};
      for (const std::string kind : {"result", "trace"})
        if (fs::exists(kGolden / folder / (kind + "." + backend + ".json"))) c.outputs.push_back(kind);
      if (!c.outputs.empty()) cases.push_back(std::move(c));
    }
  return cases;
}

/// Whether `file` is a name a golden folder may hold: the scenario or an expected output. Anything
/// else (a misspelt backend, say) would silently check nothing.
bool golden_file_name(const std::string& file) {
  if (file == "scenario.json") return true;
  for (const std::string backend : kBackends)
    if (file == "result." + backend + ".json" || file == "trace." + backend + ".json") return true;
  return false;
}

/// Where `actual` first differs from `expected`, or "" when they are the same bytes: the line
/// number and both versions of that line, each cut to a window around the first differing column
/// (a trace line is short, a result line shorter; the window only guards the message's length).
std::string first_difference(const std::string& expected, const std::string& actual) {
  if (expected == actual) return "";
  // Every byte before `at` is the same in both, so the line starts at the same offset in each.
  const auto first = std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end()).first;
  const std::size_t at = static_cast<std::size_t>(first - expected.begin());
  const std::size_t line_start = at == 0 ? 0 : expected.rfind('\n', at - 1) + 1;  // npos + 1 == 0: the first line
  const auto line = std::count(expected.begin(), first, '\n') + 1;
  constexpr std::size_t kWindow = 160;
  const std::size_t from = at - line_start > kWindow / 2 ? at - kWindow / 2 : line_start;
  auto shown = [&](const std::string& text, const char* label) {
    if (from >= text.size()) return std::string(label) + "(the file ends here)\n";
    const std::size_t end = std::min(text.find('\n', from), text.size());
    return std::string(label) + (from > line_start ? "..." : "") + text.substr(from, std::min(end - from, kWindow)) +
           (end - from > kWindow ? "..." : "") + "\n";
  };
  return "first difference at line " + std::to_string(line) + ", column " + std::to_string(at - line_start + 1) + ":\n" +
         shown(expected, "  expected: ") + shown(actual, "  actual:   ");
}

}  // namespace

TEST_CASE("golden scenarios: parasim writes every expected output byte for byte, under each backend", "[golden]") {
  // Every folder is a scenario with results to check (the update script regenerates only results
  // and the traces beside them), and holds nothing else.
  SECTION("every golden folder holds a scenario.json, its results and nothing else") {
    for (const auto& folder : golden_folders()) {
      INFO("tests/golden/" << folder);
      CHECK(fs::exists(kGolden / folder / "scenario.json"));
      CHECK(std::any_of(std::begin(kBackends), std::end(kBackends),
                        [&](const std::string& b) { return fs::exists(kGolden / folder / ("result." + b + ".json")); }));
      for (const std::string backend : kBackends)
        if (fs::exists(kGolden / folder / ("trace." + backend + ".json"))) CHECK(fs::exists(kGolden / folder / ("result." + backend + ".json")));
      for (const auto& entry : fs::directory_iterator(kGolden / folder)) {
        INFO("holds " << entry.path().filename().string());
        CHECK(golden_file_name(entry.path().filename().string()));
      }
    }
  }
  const std::vector<GoldenCase> cases = golden_cases();
  REQUIRE_FALSE(cases.empty());
  const fs::path artefacts = fs::path(PARASIM_BINARY).parent_path() / "test-artefacts" / "golden";

  for (const GoldenCase& c : cases) {
    SECTION(c.name()) {
      const fs::path folder = kGolden / c.folder;
      const fs::path out = artefacts / (c.folder + "." + c.backend);
      fs::remove_all(out);
      fs::create_directories(out);
      // From the case's folder with a relative scenario path, so nothing in the outputs can depend on
      // where the checkout lies; --allow-oom so a plan that does not fit is still reported (exit 0).
      const std::string run = q(PARASIM_BINARY) + " scenario.json --backend " + c.backend + " --out " + q(out) + " --quiet --allow-oom";
      const int status = std::system(("cd " + q(folder) + " && " + run + " > " + q(out / "stdout") + " 2> " + q(out / "stderr")).c_str());
      const std::string stderr_text = slurp(out / "stderr");
      INFO("in " << folder.string() << ":\n" << run << (stderr_text.empty() ? "" : "\nstderr:\n" + stderr_text));
      REQUIRE(WIFEXITED(status));
      REQUIRE(WEXITSTATUS(status) == 0);

      bool all_same = true;
      for (const std::string& kind : c.outputs) {
        const fs::path expected_file = folder / (kind + "." + c.backend + ".json");
        const fs::path actual_file = out / (kind + ".json");
        const std::string difference = first_difference(slurp(expected_file), slurp(actual_file));
        INFO(fs::relative(expected_file, PARASIM_SOURCE_DIR).string() << " is not what the run wrote (" << actual_file.string() << "):\n"
             << difference << "if the prediction is meant to change, regenerate the case with\n  scripts/update-golden.sh " << c.folder
             << "\nand say why in the commit message.");
        CHECK(difference.empty());
        all_same = all_same && difference.empty();
      }
      // A passing case leaves nothing behind; a failing one keeps what it wrote, for a diff.
      if (all_same) fs::remove_all(out);
    }
  }
}
