// `parasim report RESULT.json… [--out DIR]`, run as a user runs it: saved results of two scenarios
// side by side (table, report.md, report.html), and bad input (exit 2) that leaves no output behind.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/format.hpp"
#include "tests/cli/run_parasim.hpp"
#include "tests/reports/html_browser.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

namespace {

using parasim::testing::q;

/// Runs `parasim` on a small GPT-2 scenario named `name` (with one what-if) and returns its result.json.
std::filesystem::path saved_result(const std::filesystem::path& dir, const std::string& name, int tp) {
  const auto scenario = dir / (name + ".json");
  std::ofstream(scenario) << R"({
    "name": ")" << name << R"(",
    "model": { "preset": "gpt2", "seq_len": 128 },
    "training": { "global_batch": 8, "micro_batch": 1 },
    "cluster": { "preset": "dgx-a100", "nodes": 1 },
    "plan": { "tp": )" << tp << R"(, "pp": 2, "dp": )" << 8 / (2 * tp) << R"( },
    "what_if": [ { "name": "H100", "set": { "cluster.preset": "dgx-h100" } } ]
  })";
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / name));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir / name / "result.json";
}

}  // namespace

TEST_CASE("parasim report compares saved results of two scenarios side by side", "[cli][report]") {
  const parasim::testing::TempDir dir_temp("report-cmd");
  const std::filesystem::path& dir = dir_temp.path;
  const auto a = saved_result(dir, "alpha", 2);
  const auto b = saved_result(dir, "beta", 4);
  const auto out = dir / "cmp";
  const Run r = run_parasim("report " + q(a) + " " + q(b) + " --out " + q(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // Four results (two files of a base and a what-if), named by scenario since they come from two.
  for (const char* name : {"alpha · base", "alpha · H100", "beta · base", "beta · H100"}) {
    CHECK_THAT(r.out, Catch::Matchers::Contains(name));
    CHECK_THAT(slurp(out / "report.md"), Catch::Matchers::Contains(name));
    CHECK_THAT(slurp(out / "report.html"), Catch::Matchers::Contains("<th>" + std::string(name) + "</th>"));
  }
  CHECK_THAT(r.out, Catch::Matchers::Contains("wrote " + (out / "report.md").string() + ", " + (out / "report.html").string()));
  const std::string html = slurp(out / "report.html");
  CHECK_THAT(html, Catch::Matchers::Contains("<title>parasim report: 4 results of 2 scenarios</title>"));
  // Side by side: the step-time row holds each saved result's step time (4 significant digits, as
  // reports::comparison_rows writes it), in the order given, each what-if after its base.
  std::vector<double> steps;
  for (const auto& file : {a, b})
    for (const auto& result : nlohmann::json::parse(slurp(file))) steps.push_back(result.at("step_time_s").get<double>());
  REQUIRE(steps.size() == 4);
  const auto row = html.find("<tr><td>step time</td><td>s</td>");
  REQUIRE(row != std::string::npos);
  std::size_t at = row;
  for (const double step : steps) {
    INFO(step);
    at = html.find("<td>" + parasim::reports::significant(step, 4) + "</td>", at);
    CHECK(at < html.find("</tr>", row));
  }
  // Two scenarios (two models' runs): no change against the first is computed, in any of the three.
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("parasim: 4 results of different scenarios, side by side (no change against the first: their models differ):\n"
                                                "  alpha · base: scenario \"alpha\", model gpt2\n"));
  CHECK_THAT(r.out, !Catch::Matchers::Contains("vs base"));
  CHECK_THAT(slurp(out / "report.md"), !Catch::Matchers::Contains("vs base"));
  CHECK_THAT(html, !Catch::Matchers::Contains("<th>vs "));
  // Saved results keep no task timeline: the page says so instead of drawing one.
  CHECK_THAT(html, Catch::Matchers::Contains("<li>Pipeline timeline: saved results (result.json) keep no task timeline"));
  // The same files give the same report.
  const Run again = run_parasim("report " + q(a) + " " + q(b) + " --out " + q(dir / "again"));
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(dir / "again" / "report.html") == html);
  CHECK(slurp(dir / "again" / "report.md") == slurp(out / "report.md"));
  // In a browser: the breakdown, memory and Pareto charts of the four results drawn, no error.
  (void)parasim::testing::check_in_chromium(out / "report.html", "report-command", 3);
}

TEST_CASE("parasim report: an image model's throughput is in samples, never labelled tokens", "[cli][report]") {
  const parasim::testing::TempDir dir_temp("report-cnn");
  const std::filesystem::path& dir = dir_temp.path;
  const auto gpt = saved_result(dir, "gpt", 2);
  const auto cnn = dir / "cnn.json";
  std::ofstream(cnn) << R"({ "name": "cnn", "model": { "preset": "resnet50" }, "training": { "global_batch": 64, "micro_batch": 8 },
    "cluster": { "preset": "dgx-a100", "nodes": 1 }, "plan": { "dp": 8 } })";
  REQUIRE(run_parasim(q(cnn) + " --out " + q(dir / "cnn")).exit_code == 0);
  // The ResNet alone: no tokens/s row (its samples are images).
  CHECK_THAT(slurp(dir / "cnn" / "report.md"), !Catch::Matchers::Contains("tokens/s"));
  // Beside the GPT: the row is the GPT's, and the ResNet's cell says its unit is samples.
  const Run r = run_parasim("report " + q(gpt) + " " + q(dir / "cnn" / "result.json") + " --out " + q(dir / "cmp"));
  REQUIRE(r.exit_code == 0);
  const std::string md = slurp(dir / "cmp" / "report.md");
  const auto row = md.find("| throughput | tokens/s |");
  REQUIRE(row != std::string::npos);
  CHECK_THAT(md.substr(row, md.find('\n', row) - row), Catch::Matchers::EndsWith("| - (samples) |"));
}

TEST_CASE("parasim report: bad input exits 2 with its location and writes nothing", "[cli][report]") {
  const parasim::testing::TempDir dir_temp("report-bad");
  const std::filesystem::path& dir = dir_temp.path;
  const auto good = saved_result(dir, "alpha", 2);
  const auto out = dir / "cmp";

  SECTION("a result of another schema version") {
    // The second result of the list claims another schema; the error points at its value.
    auto results = nlohmann::json::parse(slurp(good));
    results[1]["schema"] = "parasim.result/0";
    const std::string text = results.dump(2);
    std::ofstream(dir / "old.json") << text;
    // Its location: the line and column (1-based) where the value "parasim.result/0" starts.
    const auto at = text.find("\"parasim.result/0\"");
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    const auto column = at - text.rfind('\n', at);
    const Run r = run_parasim("report " + q(good) + " " + q(dir / "old.json") + " --out " + q(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "old.json").string() + ":" + std::to_string(line) + ":" + std::to_string(column) +
                       ": at /1/schema: found schema \"parasim.result/0\", expected \"parasim.result/1\" (a result.json written by "
                       "this version of parasim)\n");
  }
  SECTION("a file that does not exist") {
    const Run r = run_parasim("report " + q(good) + " " + q(dir / "missing.json") + " --out " + q(out));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "missing.json").string() + ": cannot open the file for reading\n");
  }
  SECTION("no file at all") {
    const Run r = run_parasim("report --out " + q(out));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("results is required"));
  }
  CHECK_FALSE(std::filesystem::exists(out));
}
