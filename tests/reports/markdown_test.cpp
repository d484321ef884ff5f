// reports/markdown: report.md, with every user string escaped.
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hand_result.hpp"
#include "reports/markdown.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;

namespace {

/// The '|' of a line that are cell separators (not escaped as "\|").
std::size_t separators(const std::string& line) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("markdown: escape_markdown leaves no character Markdown or HTML would interpret", "[reports][markdown]") {
  CHECK(reports::escape_markdown("a|b") == "a\\|b");
  CHECK(reports::escape_markdown("<script>alert(1)</script>") == "\\<script\\>alert(1)\\</script\\>");
  CHECK(reports::escape_markdown("*bold* _em_ `code` [link](x) ![img] # ~strike~ &amp; $x$ \\") ==
        "\\*bold\\* \\_em\\_ \\`code\\` \\[link\\](x) \\!\\[img\\] \\# \\~strike\\~ \\&amp; \\$x\\$ \\\\");
  CHECK(reports::escape_markdown("line\nnext\r\tend") == "line next  end");
  CHECK(reports::escape_markdown("gpt3-175b (tp 8)") == "gpt3-175b (tp 8)");
}

TEST_CASE("markdown: a hostile scenario name cannot break a table, a line or inject HTML", "[reports][markdown]") {
  const std::string hostile = "evil | name <script>alert(1)</script>\n# heading";
  std::vector<sim::Result> rs{testing::hand_result(), testing::hand_result("what|if\n<b>", 1.5)};
  for (auto& r : rs) {
    r.scenario = hostile;
    r.plan = "pp | 2 <i>";
    r.model = "gpt <script>alert(2)</script>";
  }
  const std::string md = reports::render_markdown(rs);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("Model gpt \\<script\\>alert(2)\\</script\\>. ") != std::string::npos);
  CHECK(md.find("<b>") == std::string::npos);
  CHECK(md.find("<i>") == std::string::npos);
  CHECK(md.find("# parasim report: evil \\| name \\<script\\>alert(1)\\</script\\> \\# heading\n") == 0);
  const auto lines = lines_of(md);
  for (const auto& line : lines) CHECK(line.rfind("# heading", 0) == std::string::npos);
  // Every row of every table has as many separators as its header.
  std::size_t header = 0;
  for (const auto& line : lines) {
    if (line.empty() || line.front() != '|') {
      header = 0;
      continue;
    }
    if (header == 0) header = separators(line);
    INFO(line);
    CHECK(separators(line) == header);
  }
  // The comparison header: figure, unit, base, the what-if, its change: 5 cells, 6 separators.
  CHECK(md.find("| figure | unit | base | what\\|if \\<b\\> | vs base |\n") != std::string::npos);
}

TEST_CASE("markdown: report.md holds the comparison, plan, breakdown, memory by kind and communication", "[reports][markdown]") {
  const std::vector<sim::Result> rs{testing::hand_result(), testing::hand_result("faster", 1.5)};
  const std::string md = reports::render_markdown(rs);
  CHECK(md == reports::render_markdown(rs));
  CHECK(md.find("Every figure comes from the analytical backend with profile \"datasheet\" (built\\-in") == std::string::npos);
  CHECK(md.find("Every figure comes from the analytical backend with profile \"datasheet\" (built-in datasheet figures).") !=
        std::string::npos);
  // Step time 2 s → 1.5 s: (1.5 − 2) / 2 = −25 %.
  CHECK(md.find("| step time | s | 2.000 | 1.500 | -25.0% |") != std::string::npos);
  CHECK(md.find("- plan: pp 2, 1f1b\n") != std::string::npos);
  // Forward 0.5 s of a 2 s step: 25.0 %.
  CHECK(md.find("| forward | 0.5000 | 25.0 |") != std::string::npos);
  // Stage 0: 2 forward passes in flight, 1e9 parameters = 1000 millions; in GiB (bytes / 2^30):
  // weights and gradients 2e9 → 1.863, optimizer 12e9 → 11.18, activations 4e9 → 3.725, buffers
  // 0.5e9 → 0.4657, total 20.5e9 → 19.09 (4 significant digits).
  CHECK(md.find("| 0 | 2 | 1000 | 1.863 | 1.863 | 11.18 | 3.725 | 0.4657 | 19.09 |") != std::string::npos);
  // Capacity 78e9 B = 72.64 GiB.
  CHECK(md.find("Peak: stage 0, 19.09 GiB of 72.64 GiB usable per device: **FITS**.") != std::string::npos);
  // 3e9 B = 2.794 GiB.
  CHECK(md.find("| inter-node | 2.794 |") != std::string::npos);
}
