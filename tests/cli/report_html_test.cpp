// report.html from `parasim SCENARIO.json`: written next to report.md, every name from the scenario
// escaped (a model and a what-if named to inject script), the same bytes on every run, and — where
// Debian's chromium is installed — drawn in a headless browser with no console error; the page and
// its screenshot stay under <build>/test-artefacts/report-html/.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/run_parasim.hpp"
#include "tests/reports/html_browser.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

namespace {

using parasim::testing::q;

const char* kHostile = R"({
  "name": "escape",
  "model": { "transformer": { "name": "<script>window.parasimInjected=1</script>", "layers": 4, "hidden": 256, "heads": 4,
                              "vocab": 1000 }, "seq_len": 128 },
  "training": { "global_batch": 8, "micro_batch": 1 },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 },
  "what_if": [ { "name": "</script><img src=x onerror=\"window.parasimInjected=2\">", "set": { "plan.tp": 1, "plan.dp": 4 } } ]
})";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("parasim SCENARIO writes report.html with every scenario name escaped, the same bytes each run", "[cli][report][html]") {
  const parasim::testing::TempDir dir_temp("report-html");
  const std::filesystem::path& dir = dir_temp.path;
  std::ofstream(dir / "s.json") << kHostile;
  const Run r = run_parasim(q(dir / "s.json") + " --out " + q(dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::Contains((dir / "out" / "report.md").string() + ", " + (dir / "out" / "report.html").string()));
  const std::string html = slurp(dir / "out" / "report.html");
  // The model name in the page's text, escaped.
  CHECK_THAT(html, Catch::Matchers::Contains("Model &lt;script&gt;window.parasimInjected=1&lt;/script&gt;."));
  // The what-if's name as a table heading, and inside the chart data.
  CHECK_THAT(html, Catch::Matchers::Contains("<th>&lt;/script&gt;&lt;img src=x onerror=&quot;window.parasimInjected=2&quot;&gt;</th>"));
  CHECK_THAT(html, Catch::Matchers::Contains("\\u003c/script\\u003e\\u003cimg src=x onerror=\\\"window.parasimInjected=2\\\"\\u003e"));
  // Only the page's own six script elements; no name opened a tag.
  CHECK(count(html, "<script") == 6);
  CHECK(count(html, "</script>") == 6);
  CHECK(html.find("<img src=x") == std::string::npos);
  // report.md escapes the same names for Markdown: every '<' is a backslash escape (CommonMark
  // shows it as a literal '<'), so no tag survives.
  const std::string md = slurp(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Matchers::Contains("Model \\<script\\>window.parasimInjected=1\\</script\\>."));
  for (std::size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1)) {
    INFO(md.substr(at > 20 ? at - 20 : 0, 40));
    CHECK((at > 0 && md[at - 1] == '\\'));
  }

  const Run again = run_parasim(q(dir / "s.json") + " --out " + q(dir / "again"));
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(dir / "again" / "report.html") == html);

  // A base and a what-if, simulated: the breakdown, memory, Pareto front and pipeline timeline.
  const nlohmann::json seen = parasim::testing::check_in_chromium(dir / "out" / "report.html", "scenario-run", 4);
  if (!seen.is_null()) {
    for (const auto& chart : seen.at("charts")) {
      INFO(chart.dump());
      CHECK(chart.at("svg") == 1);
      CHECK(chart.at("marks") > 0);
    }
  }
}

TEST_CASE("parasim on a sweep scenario draws the sweep curves in report.html, one per bandwidth", "[cli][report][html][sweep]") {
  // scenarios/examples/resnet50-sweep-nodes-bandwidth.json: nodes {1, 2, 4, 8} × inter-node bandwidth
  // {25, 100, 200} Gb/s. The nodes are the x axis (the first numeric field), a curve per bandwidth.
  const parasim::testing::TempDir dir_temp("report-sweep");
  const std::filesystem::path& dir = dir_temp.path;
  const Run r = run_parasim("'" PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-sweep-nodes-bandwidth.json' --out " + q(dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string html = slurp(dir / "out" / "report.html");
  CHECK(count(html, "id=\"vis-sweep-1\"") == 1);
  CHECK_THAT(html, Catch::Matchers::Contains("<h2>Sweep: cluster.nodes</h2>"));
  CHECK_THAT(html, Catch::Matchers::Contains("one curve per cluster.inter_node.bandwidth_gbps."));
  // Each point's value, as JSON in the chart data: 12 points × 3 figures.
  CHECK(count(html, "\"series\":\"25\"") == 4 * 3);
  CHECK(count(html, "\"series\":\"200\"") == 4 * 3);
  CHECK(html.find("<li>Sweep curves:") == std::string::npos);

  // Breakdown, memory, Pareto front, the sweep, the base's timeline.
  const nlohmann::json seen = parasim::testing::check_in_chromium(dir / "out" / "report.html", "sweep-run", 5);
  if (!seen.is_null()) {
    for (const auto& chart : seen.at("charts")) {
      INFO(chart.dump());
      CHECK(chart.at("svg") == 1);
    }
    // The sweep: per figure (3) a line per bandwidth (3) and a point per sweep point (12).
    CHECK(seen.at("charts").at(3).at("id") == "vis-sweep-1");
    CHECK(seen.at("charts").at(3).at("marks") == 3 * (3 + 12));
  }
}

TEST_CASE("parasim on a local-update scenario compares it with synchronous data parallelism and sweeps H against WAN bandwidth", "[cli][report][html][local-update]") {
  // scenarios/examples/llama3-8b-diloco-2-sites.json's base (DiLoCo, a replica per site), swept over
  // H {1, 50, 500} × WAN bandwidth {10, 100, 400} Gb/s: the trade-off curve, a curve per bandwidth.
  const parasim::testing::TempDir dir_temp("report-local-update");
  const std::filesystem::path& dir = dir_temp.path;
  std::ofstream(dir / "s.json") << R"({
  "name": "diloco-sweep",
  "description": "DiLoCo on two sites, swept over H and the WAN's bandwidth.",
  "model": { "preset": "llama-3-8b", "seq_len": 8192 },
  "training": { "global_batch": 512, "micro_batch": 1, "precision": "bf16", "optimizer": "adamw" },
  "cluster": { "preset": "dgx-h100", "nodes": 64, "wan": { "sites": 2, "bandwidth_gbps": 100, "latency_us": 10000 } },
  "plan": { "tp": 1, "pp": 1, "zero": 1, "recompute": "selective" },
  "local_update": { "algorithm": "diloco", "inner_steps": 500 },
  "sweep": { "local_update.inner_steps": [1, 50, 500], "cluster.wan.bandwidth_gbps": [10, 100, 400] }
})";
  const Run r = run_parasim(q(dir / "s.json") + " --out " + q(dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::Contains("time per step, synchronisation included") && Catch::Matchers::Contains("WAN busy (busiest link)"));
  const std::string html = slurp(dir / "out" / "report.html");
  CHECK(count(html, "id=\"vis-local-update\"") == 1);
  CHECK(count(html, "id=\"vis-sweep-1\"") == 1);
  CHECK_THAT(html, Catch::Matchers::Contains("<h2>Sweep: local_update.inner_steps</h2>"));
  CHECK_THAT(html, Catch::Matchers::Contains("one curve per cluster.wan.bandwidth_gbps."));
  // Each of the 9 points × 3 figures, 3 points a bandwidth.
  CHECK(count(html, "\"series\":\"400\"") == 3 * 3);
  const std::string md = slurp(dir / "out" / "report.md");
  CHECK_THAT(md, Catch::Matchers::Contains("WAN bandwidth per site for 95% compute"));

  // Breakdown, memory, Pareto front, the local-update comparison, the sweep, the base's timeline.
  const nlohmann::json seen = parasim::testing::check_in_chromium(dir / "out" / "report.html", "local-update-run", 6);
  if (!seen.is_null()) {
    for (const auto& chart : seen.at("charts")) {
      INFO(chart.dump());
      CHECK(chart.at("svg") == 1);
      CHECK(chart.at("marks") > 0);
    }
    CHECK(seen.at("charts").at(3).at("id") == "vis-local-update");
    // The sweep: per figure (3) a line per bandwidth (3) and a point per sweep point (9).
    CHECK(seen.at("charts").at(4).at("id") == "vis-sweep-1");
    CHECK(seen.at("charts").at(4).at("marks") == 3 * (3 + 9));
  }
}
