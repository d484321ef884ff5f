// `parasim report SEARCH.json [RESULT.json…]`: a saved search (schema parasim.search/1, as
// `parasim search` writes it) read back into report.html's search charts — ranked plans, their
// breakdown and memory, the Pareto front — with every plan name escaped; bad search files exit 2
// with their location.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/html.hpp"
#include "strategies/search/search_json.hpp"
#include "tests/cli/run_parasim.hpp"
#include "tests/reports/html_browser.hpp"
#include "tests/reports/html_hand_search.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

namespace {

using parasim::testing::q;

/// The hand-written search (tests/reports/html_hand_search.hpp), its second plan named to inject
/// script, as search.json.
nlohmann::json hand_search_json(parasim::strategies::search::SearchOutcome& outcome) {
  outcome = parasim::testing::hand_search();
  outcome.plans[1].description = "tp 4 <script>window.parasimInjected=1</script>";
  return parasim::strategies::search::to_json(outcome, "search <b>", "gpt <i>");
}

}  // namespace

TEST_CASE("parasim report SEARCH.json draws the saved search as the search wrote it", "[cli][report][search]") {
  const parasim::testing::TempDir dir_temp("report-search");
  const std::filesystem::path& dir = dir_temp.path;
  parasim::strategies::search::SearchOutcome outcome;
  const nlohmann::json saved = hand_search_json(outcome);
  std::ofstream(dir / "search.json") << saved.dump(2);
  const Run r = run_parasim("report " + q(dir / "search.json") + " --out " + q(dir / "out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "wrote " + (dir / "out" / "report.html").string() + "\n");
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "report.md"));  // report.md compares results; there are none
  const std::string html = slurp(dir / "out" / "report.html");
  // Read back, the search gives the page its in-memory outcome gives (search.json keeps every
  // figure the charts show: the hand figures are short decimals, exact at 9 significant digits).
  parasim::reports::HtmlReport direct;
  direct.search = parasim::reports::HtmlSearch{&outcome, "search <b>", "gpt <i>"};
  CHECK(html == parasim::reports::render_html(direct));
  CHECK_THAT(html, Catch::Matchers::Contains("<title>parasim search: search &lt;b&gt;</title>"));
  CHECK(html.find("<script>window.parasimInjected") == std::string::npos);
  for (const char* id : {"ranking", "breakdown", "memory", "pareto"})
    CHECK_THAT(html, Catch::Matchers::Contains(std::string("id=\"vis-") + id + "\""));

  (void)parasim::testing::check_in_chromium(dir / "out" / "report.html", "report-search", 4);
}

TEST_CASE("parasim report: a bad search.json exits 2 with its location and writes nothing", "[cli][report][search]") {
  const parasim::testing::TempDir dir_temp("report-search-bad");
  const std::filesystem::path& dir = dir_temp.path;
  parasim::strategies::search::SearchOutcome outcome;
  nlohmann::json saved = hand_search_json(outcome);
  const auto out = dir / "out";
  std::string expected;
  SECTION("an unknown key in a plan") {
    saved["plans"][2]["colour"] = "red";
    expected = "at /plans/2/colour: unknown key";
  }
  SECTION("plans out of rank order") {
    saved["plans"][1]["rank"] = 3;
    expected = "at /plans/1/rank: found rank 3, expected 2 (plans are listed best first)";
  }
  SECTION("two searches") {
    std::ofstream(dir / "other.json") << saved.dump(2);
    expected = "found a second search.json, expected one search per report";
  }
  std::ofstream(dir / "search.json") << saved.dump(2);
  const std::string extra = std::filesystem::exists(dir / "other.json") ? " " + q(dir / "other.json") : "";
  const Run r = run_parasim("report " + q(dir / "search.json") + extra + " --out " + q(out));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Matchers::Contains(expected));
  CHECK_THAT(r.err, Catch::Matchers::StartsWith("parasim: error: " + (dir / (extra.empty() ? "search.json" : "other.json")).string() + ":"));
  CHECK_FALSE(std::filesystem::exists(out));
}
