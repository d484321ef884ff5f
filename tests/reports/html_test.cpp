// reports/html: report.html's charts (Vega-Lite specs built from Results), the pipeline timeline,
// escaping of every user string, and the inlined Vega libraries.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "hand_result.hpp"
#include "reports/html.hpp"
#include "reports/html_vendor.hpp"
#include "sim/lower.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;
using Json = nlohmann::ordered_json;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// A result with one pipeline stage holding `bytes` of weights.
sim::Result point(const std::string& name, double step_s, double bytes, std::int64_t devices, bool fits = true) {
  sim::Result r = testing::hand_result(name, step_s);
  r.devices = devices;
  r.memory = {strategies::StageMemory{0, 1, 1e9, {bytes, 0, 0, 0, 0}}};
  r.peak_memory_stage = 0;
  r.fits = fits;
  return r;
}

/// Two devices (stage 0 on device 0, stage 1 on device 1), streams compute and tensor, start times
/// given by hand in microseconds (1e6 ps):
///   device 0 compute: F0 [0, 10), F0 [10, 20), F1 [20, 30), R0 [40, 45), B0 [45, 55), optimizer [60, 60)
///   device 0 tensor:  tensor comm of micro-batch 0 [20, 24)
///   device 1 compute: F0 [30, 40)
///   both tensor streams: a gradient all-reduce [55, 62) (its estimate: 7 µs)
sim::Simulation hand_simulation() {
  constexpr std::int64_t us = 1'000'000;
  sim::TaskGraphBuilder b(2, {sim::Stream::Compute, sim::Stream::TensorComm});
  const auto add = [&](std::int64_t device, std::uint8_t stream, std::int64_t duration_us, sim::Category c, std::int32_t mb) {
    const sim::TaskId t = b.add(sim::TaskKind::Compute, device, stream, Picoseconds(duration_us * us), c, mb, b.label("task"), {});
    b.enqueue(t);
  };
  using C = sim::Category;
  add(0, 0, 10, C::Forward, 0);
  add(0, 0, 10, C::Forward, 0);
  add(0, 0, 10, C::Forward, 1);
  add(0, 0, 5, C::Recompute, 0);
  add(0, 0, 10, C::Backward, 0);
  add(0, 0, 0, C::Optimizer, -1);
  add(0, 1, 4, C::TensorComm, 0);
  add(1, 0, 10, C::Forward, 0);
  const std::int64_t group[] = {0, 1};
  const auto coll = b.collective(sim::CollectiveSpec{sim::CollectiveKind::AllReduce, sim::CollectiveAlgorithm::Ring, b.group(group), 1e6, -1});
  b.enqueue(b.add_collective(coll, 1, C::GradientComm, -1, b.label("all-reduce"), {}));

  sim::Simulation s;
  s.step.tasks = std::move(b).finish();
  s.step.simulated_devices = {0, 1};
  // Task ids follow the order added above.
  s.timeline.start_ps = {0, 10 * us, 20 * us, 40 * us, 45 * us, 60 * us, 20 * us, 30 * us, 55 * us};
  s.timeline.makespan = Picoseconds(62 * us);
  s.collectives = {sim::CollectiveEstimate{Picoseconds(7 * us), sim::CollectiveAlgorithm::Ring, 0, 0}};
  s.result = testing::hand_result();
  return s;
}

reports::TimelineBar bar(std::int32_t row, std::int64_t start_us, std::int64_t end_us, sim::Category c, std::int32_t mb, std::int64_t tasks,
                         std::vector<std::pair<sim::Category, std::int64_t>> busy_us) {
  reports::TimelineBar b{row, start_us * 1'000'000, end_us * 1'000'000, c, mb, tasks, {}};
  for (const auto& [category, t] : busy_us) b.busy_ps[static_cast<std::size_t>(category)] = t * 1'000'000;
  return b;
}

const Json& values_of(const Json& spec) { return spec.at("data").at("values"); }

}  // namespace

TEST_CASE("html: escape_html turns markup into text, controls into spaces, bad UTF-8 into U+FFFD", "[reports][html]") {
  CHECK(reports::escape_html("<script>alert(\"x\") & 'y'</script>") ==
        "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
  CHECK(reports::escape_html("tab\there\nnew\x1b[31mred\x7f") == "tab\there\nnew [31mred ");
  // Valid UTF-8 is kept: µ (C2 B5), · (C2 B7), € (E2 82 AC), 😀 (F0 9F 98 80).
  CHECK(reports::escape_html("µ · € \xF0\x9F\x98\x80") == "µ · € \xF0\x9F\x98\x80");
  // A stray continuation byte, a truncated sequence, an overlong '/', and an encoded surrogate
  // (ED A0 80): one U+FFFD per byte that starts no valid sequence.
  CHECK(reports::escape_html("a\x80" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(reports::escape_html("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(reports::escape_html("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(reports::escape_html("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("html: json_for_script writes < > & U+2028 U+2029 as u-escapes and keeps the value", "[reports][html]") {
  const Json value = {{"name", "</script><!-- & \xE2\x80\xA8 \xE2\x80\xA9"}, {"n", 1.5}};
  const std::string text = reports::json_for_script(value);
  CHECK(text == "{\"name\":\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028 \\u2029\",\"n\":1.5}");
  CHECK(Json::parse(text) == value);
  // Invalid UTF-8 in a string becomes U+FFFD instead of an exception.
  CHECK(reports::json_for_script(Json("a\xFF")) == "\"a\xEF\xBF\xBD\"");
}

TEST_CASE("html: a model name containing <script> appears escaped in report.html, never as markup", "[reports][html]") {
  sim::Result r = testing::hand_result();
  r.scenario = "</script><script>window.parasimInjected=1</script>";
  r.model = "<script>alert('model')</script>";
  r.variant = "<img src=x onerror=alert(2)>";
  r.plan = "tp & pp \"quoted\"";
  sim::Result other = testing::hand_result("other", 3.0);
  other.scenario = r.scenario;
  const std::vector<sim::Result> results{r, other};
  const std::string html = reports::render_html(results);
  // In HTML text: entities.
  CHECK_THAT(html, Catch::Matchers::Contains("Model &lt;script&gt;alert(&#39;model&#39;)&lt;/script&gt;."));
  CHECK_THAT(html, Catch::Matchers::Contains("<title>parasim report: &lt;/script&gt;&lt;script&gt;window.parasimInjected=1&lt;/script&gt;</title>"));
  CHECK_THAT(html, Catch::Matchers::Contains("<th>&lt;img src=x onerror=alert(2)&gt;</th>"));
  // In the chart specs (JSON inside a script element): \u escapes.
  CHECK_THAT(html, Catch::Matchers::Contains("\"result\":\"\\u003cimg src=x onerror=alert(2)\\u003e\""));
  CHECK_THAT(html, Catch::Matchers::Contains("\"plan\":\"tp \\u0026 pp \\\"quoted\\\"\""));
  // Nowhere as markup: the page's own six script elements (error hook, chart specs, three
  // libraries, boot) are all there is, and no user string opens a tag.
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("<script>window") == std::string::npos);
  CHECK(html.find("<img src=x") == std::string::npos);
  CHECK(count(html, "<script") == 6);
  CHECK(count(html, "</script>") == 6);
}

TEST_CASE("html: the same results give the same bytes, other results other bytes", "[reports][html]") {
  const std::vector<sim::Result> a{testing::hand_result(), testing::hand_result("slow", 3.0)};
  const std::vector<sim::Result> b{testing::hand_result(), testing::hand_result("slow", 3.5)};
  CHECK(reports::render_html(a) == reports::render_html(a));
  CHECK(reports::render_html(a) != reports::render_html(b));
}

TEST_CASE("html: the inlined libraries are package.json's pins and cannot end their script element", "[reports][html]") {
  std::ifstream in(PARASIM_SOURCE_DIR "/package.json");
  const Json manifest = Json::parse(in);
  const auto scripts = reports::vega_scripts();
  CHECK(scripts[0].name == "vega");
  CHECK(scripts[1].name == "vega-lite");
  CHECK(scripts[2].name == "vega-embed");
  for (const auto& s : scripts) {
    INFO(s.name);
    CHECK(manifest.at("dependencies").at(std::string(s.name)).get<std::string>() == s.version);
    CHECK(s.code.size() > 10000);
    CHECK_THAT(std::string(s.licence), Catch::Matchers::Contains("Redistribution and use in source and binary forms"));
    // Inlined as is, the code must hold neither "</script" (it would end the element) nor "<!--"
    // (it would change how the HTML parser looks for the end); HTML matches both case-insensitively.
    std::string lower(s.code);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    CHECK(lower.find("</script") == std::string::npos);
    CHECK(lower.find("<!--") == std::string::npos);
  }
}

TEST_CASE("html: one section per chart, and the charts left out listed with the reason", "[reports][html]") {
  const std::vector<sim::Result> one{testing::hand_result()};
  const std::string plain = reports::render_html(one);
  // One result, no optional section: the breakdown and the memory chart.
  CHECK(count(plain, "<section class=\"chart\"") == 2);
  CHECK_THAT(plain, Catch::Matchers::Contains("<div class=\"vis\" id=\"vis-breakdown\">"));
  CHECK_THAT(plain, Catch::Matchers::Contains("<div class=\"vis\" id=\"vis-memory\">"));
  CHECK_THAT(plain, Catch::Matchers::Contains("<li>Ranked plans: these results do not come from a plan search"));
  CHECK_THAT(plain, Catch::Matchers::Contains("<li>Pareto front: it needs at least two results to compare.</li>"));
  CHECK_THAT(plain, Catch::Matchers::Contains("<li>Sweep curves: these results hold no sweep (a scenario&#39;s &quot;sweep&quot; varies its fields).</li>"));
  CHECK_THAT(plain, Catch::Matchers::Contains("<li>Pipeline timeline: saved results (result.json) keep no task timeline"));

  const std::vector<sim::Result> two{testing::hand_result(), testing::hand_result("slow", 3.0)};
  reports::HtmlReport all;
  all.results = two;
  all.ranking = reports::HtmlRanking{"step time", "s", {2.0, 3.0}};
  all.sweeps.push_back({"training.global_batch", "", {{"8", 8.0, "", testing::hand_result()}, {"16", 16.0, "", testing::hand_result()}}});
  all.timeline = reports::pipeline_timeline(hand_simulation());
  const std::string full = reports::render_html(all);
  // Every chart: ranking, breakdown, memory, Pareto, one sweep, timeline; nothing left out.
  CHECK(count(full, "<section class=\"chart\"") == 6);
  for (const char* id : {"ranking", "breakdown", "memory", "pareto", "sweep-1", "timeline"})
    CHECK_THAT(full, Catch::Matchers::Contains(std::string("<div class=\"vis\" id=\"vis-") + id + "\">"));
  CHECK(full.find("id=\"not-shown\"") == std::string::npos);

  all.labels = {"only one"};
  CHECK_THROWS_AS(reports::render_html(all), InternalError);
}

TEST_CASE("html charts: the breakdown holds each part of the step in seconds and as a share", "[reports][html]") {
  const std::vector<sim::Result> results{testing::hand_result("base", 2.0)};
  const std::vector<std::string> labels{"base"};
  const Json spec = reports::breakdown_chart(results, labels).spec;
  // hand_result: a quarter of the 2 s step forward, half backward, an eighth exposed pipeline sends,
  // an eighth idle.
  const Json expected = Json::parse(R"j([
    {"result":"base","part":"forward","part_order":0,"group":"compute","seconds":0.5,"share":0.25},
    {"result":"base","part":"backward","part_order":1,"group":"compute","seconds":1.0,"share":0.5},
    {"result":"base","part":"pipeline comm (exposed)","part_order":2,"group":"exposed communication","seconds":0.25,"share":0.125},
    {"result":"base","part":"idle (pipeline bubble and waiting)","part_order":3,"group":"pipeline bubble","seconds":0.25,"share":0.125}])j");
  CHECK(values_of(spec) == expected);
  CHECK(spec.at("encoding").at("color").at("scale").at("domain") ==
        Json::parse(R"j(["forward","backward","pipeline comm (exposed)","idle (pipeline bubble and waiting)"])j"));
  CHECK(spec.at("encoding").at("x").at("stack") == "zero");
}

TEST_CASE("html charts: memory by kind per stage in GiB against the usable capacity", "[reports][html]") {
  const std::vector<sim::Result> results{testing::hand_result()};
  const std::vector<std::string> labels{"base"};
  const Json spec = reports::memory_chart(results, labels).spec;
  const Json& bars = spec.at("layer").at(0).at("data").at("values");
  const Json& ticks = spec.at("layer").at(1).at("data").at("values");
  // hand_result, stage 0: 2 GB weights, 2 GB gradients, 12 GB optimizer, 4 GB activations, 0.5 GB
  // buffers (20.5 GB); stage 1 holds 2 GB of activations (18.5 GB). In GiB (/ 2^30), 6 digits:
  // 2e9 → 1.86265, 12e9 → 11.1759, 4e9 → 3.72529, 0.5e9 → 0.465661, 20.5e9 → 19.0921, 18.5e9 → 17.2295.
  REQUIRE(bars.size() == 10);
  CHECK(bars[0] == Json::parse(R"j({"row":"base · stage 0","kind":"weights","kind_order":0,"gib":1.86265,"total_gib":19.0921})j"));
  CHECK(bars[2] == Json::parse(R"j({"row":"base · stage 0","kind":"optimizer state","kind_order":2,"gib":11.1759,"total_gib":19.0921})j"));
  CHECK(bars[3].at("gib") == 3.72529);
  CHECK(bars[4].at("gib") == 0.465661);
  CHECK(bars[8] == Json::parse(R"j({"row":"base · stage 1","kind":"activations","kind_order":3,"gib":1.86265,"total_gib":17.2295})j"));
  // Usable capacity 78e9 bytes / 2^30 = 72.6432 GiB, one tick per stage.
  CHECK(ticks == Json::parse(R"j([{"row":"base · stage 0","capacity_gib":72.6432,"memory":"fits"},
                                 {"row":"base · stage 1","capacity_gib":72.6432,"memory":"fits"}])j"));

  // 21 results of 2 stages would be 42 bars, over 40: each result's peak stage (0) alone.
  const std::vector<sim::Result> many(21, testing::hand_result());
  const auto many_labels = reports::result_labels(many);
  const Json crowded = reports::memory_chart(many, many_labels).spec;
  CHECK(crowded.at("layer").at(1).at("data").at("values").size() == 21);
  CHECK(crowded.at("layer").at(1).at("data").at("values").at(1).at("row") == "base #2 · stage 0");
}

TEST_CASE("html charts: the Pareto front holds the fitting results no other beats in time, memory and devices", "[reports][html]") {
  const std::vector<sim::Result> results{
      point("A", 1, 10e9, 8),         // on the front: fastest of the 8-device plans that fit
      point("B", 2, 5e9, 8),          // on the front: least memory among 8-device plans
      point("C", 2, 10e9, 8),         // dominated by A: as much memory, as many devices, slower
      point("D", 0.5, 1e9, 4, false), // best in all three, but does not fit: neither on the front nor dominating
      point("E", 1, 10e9, 8),         // equal to A: neither beats the other, both on the front
      point("F", 3, 5e9, 4),          // on the front: fewest devices
      point("G", 3, 5e9, 8),          // dominated by B (faster) and by F (fewer devices)
  };
  CHECK(reports::pareto_optimal(results) == std::vector<bool>{true, true, false, false, true, true, false});
  const auto labels = reports::result_labels(results);
  const Json spec = reports::pareto_chart(results, labels).spec;
  CHECK(spec.at("data").at("values").at(2).at("status") == "dominated");
  CHECK(spec.at("data").at("values").at(3).at("status") == "does not fit");
  CHECK(spec.at("data").at("values").at(5).at("status") == "on the Pareto front");
  // Every point numbered as its column (no label runs into its neighbours), the legend all three kinds.
  CHECK(spec.at("data").at("values").at(5).at("front_label") == "6");
  CHECK(spec.at("data").at("values").at(6).at("front_label") == "7");
  CHECK(spec.at("layer").at(0).at("encoding").at("shape").at("scale").at("domain") ==
        Json::array({"on the Pareto front", "dominated", "does not fit"}));
  // Where every result fits, the legend has no "does not fit" entry; where none is dominated, none
  // of that either.
  const std::vector<sim::Result> fitting{point("A", 1, 10e9, 8), point("B", 2, 5e9, 8)};
  const Json both = reports::pareto_chart(fitting, reports::result_labels(fitting)).spec;
  CHECK(both.at("layer").at(0).at("encoding").at("shape").at("scale").at("domain") == Json::array({"on the Pareto front"}));
}

TEST_CASE("html charts: result labels are variants, led by the scenario when several, repeats numbered", "[reports][html]") {
  std::vector<sim::Result> results{testing::hand_result("base"), testing::hand_result("H100"), testing::hand_result("base"),
                                   testing::hand_result("")};
  CHECK(reports::result_labels(results) == std::vector<std::string>{"base", "H100", "base #2", "result 4"});
  results[1].scenario = "other";
  CHECK(reports::result_labels(results) == std::vector<std::string>{"hand · base", "other · H100", "hand · base #2", "hand · result 4"});
}

TEST_CASE("html charts: ranked plans in rank order with their scores", "[reports][html]") {
  const std::vector<sim::Result> results{testing::hand_result("fast", 2.0), testing::hand_result("slow", 4.0)};
  const std::vector<std::string> labels{"tp 8 pp 12", "tp 4 pp 24"};
  const reports::HtmlChart chart = reports::ranking_chart(results, labels, {"throughput", "tokens/s", {4096, 2048}});
  CHECK(chart.spec.at("encoding").at("y").at("sort") == Json::parse(R"j(["#1 tp 8 pp 12","#2 tp 4 pp 24"])j"));
  CHECK(chart.spec.at("encoding").at("x").at("title") == "throughput (tokens/s)");
  // Scores as given; tokens/s of hand_result = 8 samples × 1024 tokens / step time: 8192 / 4 = 2048.
  CHECK(values_of(chart.spec).at(1).at("score") == 2048.0);
  CHECK(values_of(chart.spec).at(1).at("tokens_per_s") == 2048.0);
  CHECK(values_of(chart.spec).at(1).at("rank") == 2);
  CHECK_THROWS_AS(reports::ranking_chart(results, labels, {"throughput", "tokens/s", {4096}}), InternalError);
}

TEST_CASE("html charts: a numeric sweep gets a quantitative axis, a text sweep keeps its order", "[reports][html]") {
  reports::HtmlSweep numeric{"cluster.inter_node.bandwidth_gbps", "", {}};
  numeric.points.push_back({"400", 400.0, "", testing::hand_result("400", 2.0)});
  numeric.points.push_back({"100", 100.0, "", testing::hand_result("100", 3.0)});
  const Json spec = reports::sweep_chart(numeric, 0).spec;
  CHECK(spec.at("spec").at("encoding").at("x").at("type") == "quantitative");
  CHECK_FALSE(spec.at("spec").at("encoding").contains("color"));
  // Three figures per point: step time, tokens/s (8192 / 3 s = 2730.67 to 6 digits), peak memory.
  const Json& v = values_of(spec);
  REQUIRE(v.size() == 6);
  CHECK(v.at(3) == Json::parse(R"j({"value":100.0,"value_text":"100","series":"","metric":"step time (s)","amount":3.0,"memory":"fits"})j"));
  CHECK(v.at(4).at("amount") == 2730.67);

  reports::HtmlSweep text{"cluster.device", "cluster.nodes", {}};
  text.points.push_back({"h100-sxm", std::nullopt, "1 node", testing::hand_result()});
  text.points.push_back({"a100-80gb", std::nullopt, "1 node", testing::hand_result()});
  text.points.push_back({"h100-sxm", std::nullopt, "2 nodes", testing::hand_result()});
  const reports::HtmlChart chart = reports::sweep_chart(text, 1);
  CHECK(chart.id == "sweep-2");
  CHECK(chart.spec.at("spec").at("encoding").at("x").at("type") == "ordinal");
  CHECK(chart.spec.at("spec").at("encoding").at("x").at("sort") == Json::parse(R"j(["h100-sxm","a100-80gb"])j"));
  CHECK(chart.spec.at("spec").at("encoding").at("color").at("title") == "cluster.nodes");

  // A numeric series sorts as numbers (25 before 100), not as text, and its legend keeps a long name.
  reports::HtmlSweep series{"cluster.nodes", "cluster.inter_node.bandwidth_gbps", {}};
  for (const char* bandwidth : {"100", "200", "25"}) series.points.push_back({"1", 1.0, bandwidth, testing::hand_result()});
  const Json coloured = reports::sweep_chart(series, 0).spec.at("spec").at("encoding").at("color");
  CHECK(coloured.at("sort") == Json::array({"25", "100", "200"}));
  CHECK(coloured.at("legend").at("titleLimit") == 600);
}

TEST_CASE("html charts: an image model's sweep draws its throughput in samples/s", "[reports][html]") {
  // hand_result is a sequence model (1024 tokens a sample); an image model's tokens are its samples.
  sim::Result image = testing::hand_result("cnn", 2.0);
  image.tokens_per_s = image.samples_per_s;
  reports::HtmlSweep sweep{"training.global_batch", "", {{"8", 8.0, "", image}}};
  const Json spec = reports::sweep_chart(sweep, 0).spec;
  CHECK(spec.at("facet").at("column").at("sort").at(1) == "throughput (samples/s)");
  CHECK(values_of(spec).at(1).at("amount") == image.samples_per_s);
}

TEST_CASE("pipeline timeline: one bar per micro-batch and phase on each stream row, by hand", "[reports][html]") {
  const reports::PipelineTimeline t = reports::pipeline_timeline(hand_simulation());
  CHECK(t.rows == std::vector<std::string>{"stage 0 · device 0 · compute", "stage 0 · device 0 · communication",
                                           "stage 1 · device 1 · compute", "stage 1 · device 1 · communication"});
  CHECK(t.step_ps == 62'000'000);
  using C = sim::Category;
  // Device 0 compute: the two F0 tasks make one bar; F1 its own; R0 and B0 one backward bar coloured
  // backward (10 µs busy against recompute's 5); the optimizer takes no time and draws nothing.
  // Device 0 communication: tensor comm of micro-batch 0, then the all-reduce (7 µs from its estimate).
  // Device 1: F0 and the same all-reduce.
  const std::vector<reports::TimelineBar> expected{
      bar(0, 0, 20, C::Forward, 0, 2, {{C::Forward, 20}}),
      bar(0, 20, 30, C::Forward, 1, 1, {{C::Forward, 10}}),
      bar(0, 40, 55, C::Backward, 0, 2, {{C::Recompute, 5}, {C::Backward, 10}}),
      bar(1, 20, 24, C::TensorComm, 0, 1, {{C::TensorComm, 4}}),
      bar(1, 55, 62, C::GradientComm, -1, 1, {{C::GradientComm, 7}}),
      bar(2, 30, 40, C::Forward, 0, 1, {{C::Forward, 10}}),
      bar(3, 55, 62, C::GradientComm, -1, 1, {{C::GradientComm, 7}}),
  };
  CHECK(t.bars == expected);
  CHECK(t.bars_total == 7);
  CHECK(t.note.empty());
}

TEST_CASE("pipeline timeline: stages evenly spaced and bars capped, with a note saying so", "[reports][html]") {
  // One stage of two: the first.
  const reports::PipelineTimeline one = reports::pipeline_timeline(hand_simulation(), {1, 100});
  CHECK(one.rows == std::vector<std::string>{"stage 0 · device 0 · compute", "stage 0 · device 0 · communication"});
  CHECK(one.bars.size() == 5);
  CHECK(one.note == "showing 1 of 2 pipeline stages (evenly spaced, the first and the last included)");
  // Three bars of seven: by start, row 0 at 0 µs, row 0 at 20, row 1 at 20; the first left out
  // starts at 30 µs (row 2), of a 62 µs step.
  const reports::PipelineTimeline capped = reports::pipeline_timeline(hand_simulation(), {8, 3});
  REQUIRE(capped.bars.size() == 3);
  CHECK(capped.bars[0].start_ps == 0);
  CHECK(capped.bars[1].start_ps == 20'000'000);
  CHECK(capped.bars[2].row == 1);
  CHECK(capped.bars_total == 7);
  CHECK(capped.note == "showing the first 3 of 7 bars (those that start first, up to 0.00003000 s of the 0.00006200 s step)");
  CHECK_THROWS_AS(reports::pipeline_timeline(hand_simulation(), {0, 3}), InternalError);
}

TEST_CASE("pipeline timeline of a real step: every compute task with time is in exactly one bar", "[reports][html]") {
  const sim::Simulation s = testing::tiny_simulation();
  const reports::PipelineTimeline t = reports::pipeline_timeline(s);
  // tp 2 × pp 2 × dp 2: stage 0's lowest device and stage 1's, two rows each.
  REQUIRE(t.rows.size() == 4);
  for (std::size_t row = 0; row < 4; row += 2) {
    const std::int64_t device = std::stoll(t.rows[row].substr(t.rows[row].find("device ") + 7));
    std::int64_t tasks = 0, busy = 0, bar_tasks = 0, bar_busy = 0;
    for (const sim::TaskId task : s.step.tasks.queue_of(static_cast<std::size_t>(device) * s.step.tasks.stream_count() + sim::stream_index(sim::Stream::Compute)))
      if (s.step.tasks.duration_ps[task] > 0) {
        ++tasks;
        busy += s.step.tasks.duration_ps[task];
      }
    for (const auto& b : t.bars)
      if (b.row == static_cast<std::int32_t>(row)) {
        bar_tasks += b.tasks;
        for (const auto ps : b.busy_ps) bar_busy += ps;
      }
    INFO(t.rows[row]);
    CHECK(bar_tasks >= tasks);  // zero-length tasks may ride in a bar too
    CHECK(bar_busy == busy);
  }
}

TEST_CASE("html charts: the timeline in milliseconds, rows looked up by index, time by category", "[reports][html]") {
  const reports::HtmlChart chart = reports::timeline_chart(reports::pipeline_timeline(hand_simulation()), "base");
  const Json& v = values_of(chart.spec);
  // The backward bar: 40–55 µs = 0.04–0.055 ms; backward 10 µs, recompute 5 µs (in category order).
  CHECK(v.at(2) == Json::parse(R"j({"row_index":0,"start_ms":0.04,"end_ms":0.055,"category":"backward","micro_batch":0,"tasks":2,
                                   "busy":"backward 0.01000 ms + recompute 0.005000 ms"})j"));
  CHECK(v.at(4).at("micro_batch").is_null());
  CHECK(chart.spec.at("transform").at(0).at("from").at("data").at("values").at(3) ==
        Json::parse(R"j({"row_index":3,"row":"stage 1 · device 1 · communication"})j"));
  // The axis spans the whole 62 µs step.
  CHECK(chart.spec.at("encoding").at("x").at("scale").at("domain") == Json::parse("[0, 0.062]"));
}
