// report.html in a real browser: headless Chromium loads a report with every chart, and the test
// checks what a reader would see — every chart drawn as SVG with one mark per datum, no console
// error (a failed library, a chart spec Vega rejects, a policy violation), no injected script run —
// and leaves the page and a screenshot under <build>/test-artefacts/report-html/.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "html_browser.hpp"
#include "html_hand_search.hpp"
#include "reports/html.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;

TEST_CASE("report.html renders in headless Chromium with every chart drawn and no console error", "[reports][html][browser]") {
  const std::string missing = testing::browser_missing();
  if (!missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  // A base and a what-if of the tiny GPT-2 step, named to inject script if anything were unescaped.
  sim::Simulation base = testing::tiny_simulation("dgx-a100", "tiny</script><script>window.parasimInjected=1</script>", "base");
  base.result.model = "gpt2 <script>window.parasimInjected=2</script><img src=x onerror=\"window.parasimInjected=3\">";
  const sim::Simulation h100 = testing::tiny_simulation("dgx-h100", base.result.scenario, "<i>H100</i>");
  const std::vector<sim::Result> results{base.result, h100.result};
  const auto labels = reports::result_labels(results);

  reports::HtmlReport report;
  report.results = results;
  report.ranking = reports::HtmlRanking{"step time", "s", {results[0].step_time_s, results[1].step_time_s}};
  reports::HtmlSweep sweep{"cluster.device", "", {}};
  sweep.points.push_back({"a100-80gb", std::nullopt, "", results[0]});
  sweep.points.push_back({"h100-sxm", std::nullopt, "", results[1]});
  report.sweeps.push_back(sweep);
  report.timeline = reports::pipeline_timeline(base);

  const auto page = testing::html_artefact_dir() / "every-chart.html";
  const auto screenshot = testing::html_artefact_dir() / "every-chart.png";
  std::ofstream(page, std::ios::binary) << reports::render_html(report);
  // Ranking, breakdown, memory, Pareto, one sweep, timeline.
  const nlohmann::json seen = testing::check_in_chromium(page, "every-chart", 6);
  REQUIRE(seen.is_object());
  // The browser shows the scenario name as text: the title is the name itself, not markup.
  CHECK(seen.at("title") == "parasim report: " + results[0].scenario);

  // One mark per datum of each chart's spec: a bar per value; the memory chart's bars and capacity
  // ticks; the Pareto chart's point and (possibly empty) name per result; per sweep figure one line
  // and a point per sweep point.
  const auto values = [](const reports::HtmlChart& c) { return c.spec.at("data").at("values").size(); };
  const reports::HtmlChart memory = reports::memory_chart(results, labels);
  const std::vector<std::pair<std::string, std::size_t>> expected{
      {"vis-ranking", values(reports::ranking_chart(results, labels, *report.ranking))},
      {"vis-breakdown", values(reports::breakdown_chart(results, labels))},
      {"vis-memory", memory.spec.at("layer").at(0).at("data").at("values").size() + memory.spec.at("layer").at(1).at("data").at("values").size()},
      {"vis-pareto", 2 * values(reports::pareto_chart(results, labels))},
      {"vis-sweep-1", 3 * (1 + sweep.points.size())},
      {"vis-timeline", report.timeline->bars.size()},
  };
  const auto& charts = seen.at("charts");
  REQUIRE(charts.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i].first);
    CHECK(charts[i].at("id") == expected[i].first);
    CHECK(charts[i].at("drawn") == true);
    CHECK(charts[i].at("svg") == 1);
    CHECK(charts[i].at("marks") == expected[i].second);
  }
  // The timeline names its rows on its axis: stage 0's and stage 1's compute and communication.
  const auto& timeline_labels = charts[5].at("axis_labels");
  for (const auto& row : report.timeline->rows)
    CHECK(std::find(timeline_labels.begin(), timeline_labels.end(), row) != timeline_labels.end());
  // The breakdown names each result on its axis, as text.
  const auto& breakdown_labels = charts[1].at("axis_labels");
  for (const auto& label : labels) CHECK(std::find(breakdown_labels.begin(), breakdown_labels.end(), label) != breakdown_labels.end());
  // The screenshot is a PNG.
  const std::string png = testing::slurp(screenshot);
  REQUIRE(png.size() > 8);
  CHECK(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
}

TEST_CASE("a search's report.html renders in headless Chromium: ranked plans, breakdown, memory, Pareto, sweep, timeline", "[reports][html][browser][search]") {
  const std::string missing = testing::browser_missing();
  if (!missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  // The hand-written search (four plans, the scenario's third), a plan named to inject script, its
  // best plan simulated (the tiny GPT-2 step) for the table and the timeline, and a sweep of two
  // device kinds × two node counts (two curves of two points).
  strategies::search::SearchOutcome outcome = testing::hand_search();
  outcome.plans[1].description = "tp 4 </script><script>window.parasimInjected=4</script>";
  const sim::Simulation best = testing::tiny_simulation("dgx-a100", "search <b>", "best plan");
  const std::vector<sim::Result> results{best.result};
  const sim::Simulation h100 = testing::tiny_simulation("dgx-h100", "search <b>", "h100");
  const std::vector<sim::Result> points{best.result, best.result, h100.result, h100.result};
  const std::vector<reports::SweepChanges> changes{{{"cluster.device", "\"a100-80gb\""}, {"cluster.nodes", "1"}},
                                                   {{"cluster.device", "\"a100-80gb\""}, {"cluster.nodes", "2"}},
                                                   {{"cluster.device", "\"h100-sxm\""}, {"cluster.nodes", "1"}},
                                                   {{"cluster.device", "\"h100-sxm\""}, {"cluster.nodes", "2"}}};

  reports::HtmlReport report;
  report.results = results;
  report.search = reports::HtmlSearch{&outcome, "search <b>", "gpt2 <script>window.parasimInjected=5</script>", 20, 500};
  report.sweeps.push_back(reports::sweep_from_points(changes, points));
  report.timeline = reports::pipeline_timeline(best);
  report.timeline_of = reports::plan_label(outcome, 0);

  const auto page = testing::html_artefact_dir() / "search.html";
  const auto screenshot = testing::html_artefact_dir() / "search.png";
  std::ofstream(page, std::ios::binary) << reports::render_html(report);
  const nlohmann::json seen = testing::check_in_chromium(page, "search", 6);
  REQUIRE(seen.is_object());
  CHECK(seen.at("title") == "parasim report: search <b>");

  // One mark per datum: a bar per value (ranked plans, breakdown), the memory bars and capacity
  // ticks, a point and a (possibly empty) name per Pareto point, per sweep figure a line per curve
  // and a point per sweep point, a bar per timeline bar.
  const reports::HtmlSearch& s = *report.search;
  const auto values = [](const reports::HtmlChart& c) { return c.spec.at("data").at("values").size(); };
  const reports::HtmlChart memory = reports::search_memory_chart(s);
  const std::vector<std::pair<std::string, std::size_t>> expected{
      {"vis-ranking", values(reports::search_ranking_chart(s))},
      {"vis-breakdown", values(reports::search_breakdown_chart(s))},
      {"vis-memory", memory.spec.at("layer").at(0).at("data").at("values").size() + memory.spec.at("layer").at(1).at("data").at("values").size()},
      {"vis-pareto", 2 * values(reports::search_pareto_chart(s))},
      {"vis-sweep-1", 3 * (2 + 4)},
      {"vis-timeline", report.timeline->bars.size()},
  };
  const auto& charts = seen.at("charts");
  REQUIRE(charts.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i].first);
    CHECK(charts[i].at("id") == expected[i].first);
    CHECK(charts[i].at("drawn") == true);
    CHECK(charts[i].at("svg") == 1);
    CHECK(charts[i].at("marks") == expected[i].second);
  }
  // The ranked plans are named on the axis as text, the injected one included.
  const auto& ranking_labels = charts[0].at("axis_labels");
  CHECK(std::find(ranking_labels.begin(), ranking_labels.end(), reports::plan_label(outcome, 1)) != ranking_labels.end());
  const std::string png = testing::slurp(screenshot);
  REQUIRE(png.size() > 8);
  CHECK(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
}

// What `parasim execute` writes: the prediction as the page's result, the measurement in the
// execution section, each class named as it came (here named to inject script), and the measured
// step's timeline beside the simulated one.
TEST_CASE("an executed plan's report.html renders measured against predicted in headless Chromium", "[reports][html][browser][execute]") {
  const std::string missing = testing::browser_missing();
  if (!missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  const sim::Simulation predicted = testing::tiny_simulation("dgx-a100", "execute <b>", "base");
  const std::vector<sim::Result> results{predicted.result};
  reports::HtmlReport report;
  report.title = "parasim execute: execute <b> (base)";
  report.results = results;
  report.timeline = reports::pipeline_timeline(predicted);
  report.measured_timeline = reports::pipeline_timeline(predicted);
  report.execution = reports::HtmlExecution{"Executed by <script>window.parasimInjected=6</script>", {0.012, 0.011, 0.013}, 0.012, 0.010,
                                            {{"GEMM", 8, 0.008, 0.007}, {"all-reduce</script><script>window.parasimInjected=7</script>", 2, 0.003, 0.002},
                                             {"idle compute", 0, 0.001, 0.001}},
                                            {{"64 MiB memory pass<script>window.parasimInjected=8</script>", 0.006, 0.005}},
                                            {{0.011, 0.010}, {0.012, 0.010}}};
  const auto page = testing::html_artefact_dir() / "execute.html";
  std::ofstream(page, std::ios::binary) << reports::render_html(report);
  const nlohmann::json seen = testing::check_in_chromium(page, "execute", 6);
  REQUIRE(seen.is_object());
  CHECK(seen.at("title") == "parasim execute: execute <b> (base)");
  const auto& charts = seen.at("charts");
  REQUIRE(charts.size() == 6);
  CHECK(charts[0].at("id") == "vis-execution-classes");
  CHECK(charts[0].at("marks") == 2 * 3);  // a measured and a predicted bar per class
  CHECK(charts[1].at("id") == "vis-execution-steps");
  CHECK(charts[1].at("marks") == 3 + 1);  // a point per timed step and the prediction's rule
  CHECK(charts[5].at("id") == "vis-timeline-measured");
  CHECK(charts[5].at("marks") == report.measured_timeline->bars.size());
}

// What `parasim calibrate --backend loader --report DIR` writes: no result, the loader's figures and
// its checks, and the chart of time per sample by threads and placement (the source named to inject
// script).
TEST_CASE("a loader calibration's report.html renders its checks in headless Chromium", "[reports][html][browser][loader]") {
  const std::string missing = testing::browser_missing();
  if (!missing.empty()) {
    WARN("skipped: " << missing);
    return;
  }
  sim::LoaderProfile l;
  l.decode_s_per_sample = 80e-6;
  l.decode_s_at_threads = {80e-6, 88e-6};
  l.copy_bytes_per_s = 4e10;
  l.image_size = 96;
  l.checks = {{"naive", 1, 95e-6, 90e-6}, {"sharded", 1, 88e-6, 85e-6}, {"sharded", 2, 46e-6, 44e-6}};
  l.source = "measured by <script>window.parasimInjected=8</script>";
  reports::HtmlReport report;
  report.title = "parasim calibrate: the loader on <b>data</b>";
  report.loader = reports::HtmlLoader{"jpeg-tar", l};
  const auto page = testing::html_artefact_dir() / "loader.html";
  std::ofstream(page, std::ios::binary) << reports::render_html(report);
  const nlohmann::json seen = testing::check_in_chromium(page, "loader", 1);
  REQUIRE(seen.is_object());
  CHECK(seen.at("title") == "parasim calibrate: the loader on <b>data</b>");
  const auto& charts = seen.at("charts");
  REQUIRE(charts.size() == 1);
  CHECK(charts[0].at("id") == "vis-loader-threads");
  CHECK(charts[0].at("marks").get<int>() > 0);
}
