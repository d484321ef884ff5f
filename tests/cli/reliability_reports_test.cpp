// Safe reports: a string from the scenario file (a what-if's name may hold any character) reaches
// report.md as literal text and the terminal without control characters, so a scenario someone hands
// you cannot inject markup, links or terminal escapes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

TEST_CASE("reliability: user strings are escaped in report.md and on the terminal", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("escape");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "s.json";
  // The what-if's name: an HTML tag, a table-cell separator, emphasis and an ANSI "clear screen"
  // (ESC [ 2 J, written \u001b in JSON).
  std::ofstream(scenario) << R"({
  "name": "small",
  "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 16, "micro_batch": 2, "precision": "fp16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 },
  "what_if": [ { "name": "<img src=x onerror=alert(1)> | *x*\u001b[2J", "set": { "training.global_batch": 32 } } ]
})";
  const Run r = run_parasim("'" + scenario.string() + "' --out '" + (dir / "out").string() + "'");
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(dir / "out" / "report.md");
  // reports/markdown.hpp: < > | * [ get a backslash, a control character becomes a space.
  CHECK_THAT(md, Catch::Matchers::Contains(R"(\<img src=x onerror=alert(1)\> \| \*x\* \[2J)"));
  // No '<' of the name is left for a Markdown renderer to read as a tag: each has its backslash.
  for (std::size_t at = md.find("<img"); at != std::string::npos; at = md.find("<img", at + 1)) CHECK((at > 0 && md[at - 1] == '\\'));
  CHECK(md.find('\x1b') == std::string::npos);
  // The table on the terminal shows the escape as text (reports/format.hpp's terminal_safe).
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK_THAT(r.out, Catch::Matchers::Contains(R"(\x1b[2J)"));
}
