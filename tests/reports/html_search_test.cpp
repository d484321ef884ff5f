// reports/html_search: report.html's charts of a plan search (ranked plans, step-time breakdown,
// memory against capacity, Pareto front) from a SearchOutcome written by hand, and the sweep curves
// built from sweep points' swept values.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "hand_result.hpp"
#include "html_hand_search.hpp"
#include "reports/html.hpp"

using namespace parasim;
namespace search = strategies::search;
using Json = nlohmann::ordered_json;

namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

const Json& values_of(const Json& spec) { return spec.at("data").at("values"); }

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("html search: the charts show the best plans and the scenario's plan after them", "[reports][html][search]") {
  const search::SearchOutcome o = testing::hand_search();  // four plans; the scenario's is #3
  reports::HtmlSearch s{&o, "s", "m", 1, 500};
  CHECK(reports::shown_plans(s) == std::vector<std::size_t>{0, 2});
  s.top = 3;
  CHECK(reports::shown_plans(s) == std::vector<std::size_t>{0, 1, 2});
  s.top = 10;
  CHECK(reports::shown_plans(s) == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(reports::plan_label(o, 0) == "#1 tp 8 × pp 4 × dp 2");
  CHECK(reports::plan_label(o, 2) == "#3 tp 2 × pp 1 × dp 32 (the scenario's plan)");
  s.top = 0;
  CHECK_THROWS_AS(reports::shown_plans(s), InternalError);
}

TEST_CASE("html search: the score is the objective's figure of the plan, with its unit", "[reports][html][search]") {
  search::SearchOutcome o = testing::hand_search();
  const auto p = o.plans[0];  // simulated: 2.0 s, 6000 tokens / 2.0 s = 3000 tokens/s, 8 GiB of 80 GiB on 64 devices
  auto score = reports::search_score(o, p);
  CHECK(score.objective == "step time");
  CHECK(score.unit == "s");
  CHECK(score.value == 2.0);
  o.objective = search::Objective::Throughput;
  score = reports::search_score(o, p);
  CHECK(score.unit == "tokens/s");
  CHECK(score.value == 3000.0);
  // RankedPlan::cost_per_step: 2 s × 64 devices × 4.5 per device-hour / 3600 s = 0.16 per step.
  o.objective = search::Objective::Cost;
  o.price_per_device_hour = 4.5;
  score = reports::search_score(o, p);
  CHECK(score.unit == "price per step");
  CHECK(score.value == Approx(0.16));
  // Headroom: 80 GiB usable − (4 + 1 + 2 + 1 + 0) GiB = 72 GiB.
  o.objective = search::Objective::Memory;
  score = reports::search_score(o, p);
  CHECK(score.unit == "GiB");
  CHECK(score.value == Approx(72.0));
  // The plan ranked by its estimate is scored by the estimate: 5.0 s.
  o.objective = search::Objective::Time;
  CHECK(reports::search_score(o, o.plans[3]).value == 5.0);
}

TEST_CASE("html search: ranked plans in rank order by score, dark when simulated, light when estimated", "[reports][html][search]") {
  const search::SearchOutcome o = testing::hand_search();
  reports::HtmlChart c = reports::search_ranking_chart({&o, "s", "m", 4, 500});
  CHECK(c.id == "ranking");
  const Json& v = values_of(c.spec);
  REQUIRE(v.size() == 4);
  const double scores[] = {2.0, 3.0, 4.0, 5.0};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(v[i].at("rank") == i + 1);
    CHECK(v[i].at("score").get<double>() == scores[i]);
  }
  CHECK(v[0].at("source") == "simulated (analytical engine)");
  CHECK(v[3].at("source") == "estimate (closed form)");
  CHECK(v[0].at("pareto") == "yes");
  CHECK(v[1].at("pareto") == "no");
  CHECK(c.spec.at("encoding").at("y").at("sort") == Json({reports::plan_label(o, 0), reports::plan_label(o, 1), reports::plan_label(o, 2),
                                                          reports::plan_label(o, 3)}));
  CHECK(c.spec.at("encoding").at("x").at("title") == "step time (s)");
  CHECK(c.caption.find("The best 4 of 4 plans that fit (100 enumerated, 40 valid), ranked by step time (s). ") == 0);
  // The best one, and the scenario's plan after it.
  c = reports::search_ranking_chart({&o, "s", "m", 1, 500});
  CHECK(values_of(c.spec).size() == 2);
  CHECK(c.caption.find("The best 1 of 4 plans that fit (100 enumerated, 40 valid), ranked by step time (s), and the scenario's own plan.") == 0);
}

TEST_CASE("html search: each plan's step splits into compute, exposed communication, bubble and data loading", "[reports][html][search]") {
  const search::SearchOutcome o = testing::hand_search();
  const reports::HtmlChart c = reports::search_breakdown_chart({&o, "s", "m", 1, 500});
  CHECK(c.id == "breakdown");
  // Plan #1: 1.2 s compute + 0.4 s exposed + 0.3 s bubble + 0.1 s data = 2.0 s; shares 60 %, 20 %, 15 %, 5 %.
  // Plan #3 (the scenario's, shown after it) has no data loading: three parts.
  const Json& v = values_of(c.spec);
  REQUIRE(v.size() == 4 + 3);
  const char* parts[] = {"compute", "exposed communication", "pipeline bubble", "data loading"};
  const double seconds[] = {1.2, 0.4, 0.3, 0.1}, shares[] = {0.6, 0.2, 0.15, 0.05};
  double sum = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(v[k].at("part") == parts[k]);
    CHECK(v[k].at("part_order") == k);
    CHECK(v[k].at("seconds").get<double>() == seconds[k]);
    CHECK(v[k].at("share").get<double>() == Approx(shares[k]));
    sum += v[k].at("seconds").get<double>();
  }
  CHECK(sum == Approx(2.0));
  CHECK(v[4].at("row") == reports::plan_label(o, 2));
  CHECK(v[4].at("seconds").get<double>() == 3.0);
  CHECK(c.spec.at("encoding").at("x").at("stack") == "zero");
  // Both plans shown were simulated; with the estimated #4 shown too, the caption says figures are mixed.
  CHECK(c.caption.find("Every figure is from the analytical engine's simulation of the plan.") != std::string::npos);
  const reports::HtmlChart all = reports::search_breakdown_chart({&o, "s", "m", 4, 500});
  CHECK(all.caption.find("from the analytical engine's simulation where the plan was simulated, else") != std::string::npos);
}

TEST_CASE("html search: memory of each plan's fullest stage by kind in GiB against the usable capacity", "[reports][html][search]") {
  const search::SearchOutcome o = testing::hand_search();
  const reports::HtmlChart c = reports::search_memory_chart({&o, "s", "m", 1, 500});
  const Json& layers = c.spec.at("layer");
  const Json& bars = values_of(layers.at(0));
  const Json& ticks = values_of(layers.at(1));
  // Plan #1: weights 4, gradients 1, optimizer 2, activations 1 GiB (no buffers): 4 bars, total 8.
  // Plan #3: weights 20, activations 40 GiB: 2 bars, total 60.
  REQUIRE(bars.size() == 6);
  CHECK(bars[0].at("kind") == "weights");
  CHECK(bars[0].at("gib").get<double>() == 4.0);
  CHECK(bars[3].at("kind") == "activations");
  CHECK(bars[3].at("total_gib").get<double>() == 8.0);
  CHECK(bars[5].at("kind") == "activations");
  CHECK(bars[5].at("kind_order") == 3);
  CHECK(bars[5].at("total_gib").get<double>() == 60.0);
  REQUIRE(ticks.size() == 2);
  CHECK(ticks[0].at("capacity_gib").get<double>() == 80.0);
  CHECK(ticks[0].at("headroom_gib").get<double>() == 72.0);
  CHECK(ticks[1].at("headroom_gib").get<double>() == 20.0);
}

TEST_CASE("html search: the Pareto chart plots the simulated plans, the front named by rank", "[reports][html][search]") {
  search::SearchOutcome o = testing::hand_search();
  reports::HtmlSearch s{&o, "s", "m", 20, 500};
  reports::HtmlChart c = reports::search_pareto_chart(s);
  // Plans #1, #2 and #3 were simulated; #4 only estimated, so it is not a point.
  const Json& v = values_of(c.spec);
  REQUIRE(v.size() == 3);
  CHECK(v[0].at("rank") == 1);
  CHECK(v[0].at("status") == "on the Pareto front");
  CHECK(v[0].at("front_label") == "#1");
  CHECK(v[1].at("rank") == 2);
  CHECK(v[1].at("status") == "dominated");
  CHECK(v[1].at("front_label") == "");
  CHECK(v[2].at("rank") == 3);
  CHECK(v[2].at("devices") == 64);
  CHECK(v[2].at("peak_gib").get<double>() == 60.0);
  CHECK(c.caption.find("3 of the 4 ranked plans are shown") != std::string::npos);
  // With no plan simulated, the estimates are the points.
  for (auto& p : o.plans) p.simulated.reset();
  c = reports::search_pareto_chart(s);
  CHECK(values_of(c.spec).size() == 4);
}

TEST_CASE("html search: a search page with no result has the search's charts, title and escaped names", "[reports][html][search]") {
  search::SearchOutcome o = testing::hand_search();
  o.plans[0].description = "tp 8 <script>alert(1)</script>";
  reports::HtmlReport report;
  report.search = reports::HtmlSearch{&o, "gpt <b>search</b>", "model</script><script>alert(2)</script>", 20, 500};
  const std::string html = reports::render_html(report);
  CHECK(html.find("<title>parasim search: gpt &lt;b&gt;search&lt;/b&gt;</title>") != std::string::npos);
  CHECK(html.find("Model model&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;.") != std::string::npos);
  CHECK(html.find("best plan: tp 8 &lt;script&gt;alert(1)&lt;/script&gt;.") != std::string::npos);
  CHECK(html.find("alert(1)</script>") == std::string::npos);
  CHECK(html.find("<b>search") == std::string::npos);
  // 100 enumerated, 40 valid, 4 fit, 3 simulated.
  CHECK(html.find("A plan search: 100 plans enumerated, 40 valid, 4 fit in memory, 3 simulated by the analytical engine") != std::string::npos);
  for (const char* id : {"ranking", "breakdown", "memory", "pareto"}) CHECK(count(html, std::string("id=\"vis-") + id + "\"") == 1);
  CHECK(html.find("id=\"comparison\"") == std::string::npos);  // no result to compare
  CHECK(html.find("Pipeline timeline: the search simulated no plan") != std::string::npos);
  CHECK(reports::render_html(report) == html);  // same input, same bytes
  // With a result (the best plan simulated) the comparison table is back.
  const std::vector<sim::Result> results{testing::hand_result()};
  report.results = results;
  CHECK(reports::render_html(report).find("id=\"comparison\"") != std::string::npos);
  // A search and a ranking of the results at once is a caller's bug.
  report.ranking = reports::HtmlRanking{"step time", "s", {1.0}};
  CHECK_THROWS_AS(reports::render_html(report), InternalError);
}

TEST_CASE("html sweep: the first numeric swept field is the x axis, the others name the curves", "[reports][html][sweep]") {
  const std::vector<sim::Result> results{testing::hand_result("a", 1.0), testing::hand_result("b", 2.0), testing::hand_result("c", 3.0),
                                         testing::hand_result("d", 4.0)};
  // A device kind (text) varied slowest, node count (numbers) fastest: nodes on x, a curve per device.
  const std::vector<reports::SweepChanges> changes{{{"cluster.device", "\"a100-80gb\""}, {"cluster.nodes", "16"}},
                                                   {{"cluster.device", "\"a100-80gb\""}, {"cluster.nodes", "32"}},
                                                   {{"cluster.device", "\"h100-sxm\""}, {"cluster.nodes", "16"}},
                                                   {{"cluster.device", "\"h100-sxm\""}, {"cluster.nodes", "32"}}};
  const reports::HtmlSweep s = reports::sweep_from_points(changes, results);
  CHECK(s.parameter == "cluster.nodes");
  CHECK(s.series_parameter == "cluster.device");
  REQUIRE(s.points.size() == 4);
  CHECK(s.points[1].value == "32");
  CHECK(s.points[1].number == 32.0);
  CHECK(s.points[1].series == "a100-80gb");  // the legend's title names the field
  CHECK(s.points[2].series == "h100-sxm");
  CHECK(s.points[3].result.step_time_s == 4.0);
  // One text field: an ordinal axis in the sweep's order, one curve.
  const std::vector<reports::SweepChanges> devices{{{"cluster.device", "\"v100\""}}, {{"cluster.device", "\"a100-80gb\""}}};
  const std::vector<sim::Result> two{results[0], results[1]};
  const reports::HtmlSweep d = reports::sweep_from_points(devices, two);
  CHECK(d.parameter == "cluster.device");
  CHECK(d.series_parameter.empty());
  CHECK(d.points[0].value == "v100");
  CHECK(!d.points[0].number);
  CHECK(d.points[0].series.empty());
  const reports::HtmlChart c = reports::sweep_chart(d, 0);
  CHECK(c.spec.at("spec").at("encoding").at("x").at("type") == "ordinal");
  CHECK(c.spec.at("spec").at("encoding").at("x").at("sort") == Json({"v100", "a100-80gb"}));
  // Three fields: the numeric one on x, the two others "key=value, key=value" per curve.
  const std::vector<reports::SweepChanges> three{{{"cluster.device", "\"v100\""}, {"cluster.nodes", "1"}, {"plan.zero", "0"}},
                                                 {{"cluster.device", "\"v100\""}, {"cluster.nodes", "2"}, {"plan.zero", "1"}}};
  const reports::HtmlSweep t = reports::sweep_from_points(three, two);
  CHECK(t.parameter == "cluster.nodes");
  CHECK(t.series_parameter == "cluster.device, plan.zero");
  CHECK(t.points[1].series == "cluster.device=v100, plan.zero=1");
  // Points that set different fields are a caller's bug.
  const std::vector<reports::SweepChanges> mixed{{{"cluster.nodes", "16"}}, {{"cluster.device", "\"v100\""}}};
  CHECK_THROWS_AS(reports::sweep_from_points(mixed, two), InternalError);
}
