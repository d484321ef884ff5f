#include "reports/html_execution.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "reports/format.hpp"
#include "reports/html.hpp"
#include "reports/html_spec.hpp"

namespace parasim::reports {
namespace {

using html_spec::base_spec;
using html_spec::field;
using html_spec::Json;
using html_spec::kFormat;
using html_spec::num;
using html_spec::strings;

constexpr double kMsPerS = 1e3;

void check(const HtmlExecution& e) {
  PARASIM_CHECK(!e.measured_step_s.empty(), "an execution has at least one timed step");
}

/// The prediction's error against the measurement, "-" where nothing was measured.
std::string error_text(double predicted, double measured) { return measured > 0 ? change_percent(predicted, measured) : "-"; }

}  // namespace

HtmlChart execution_class_chart(const HtmlExecution& e) {
  check(e);
  std::vector<std::string> rows;
  Json values = Json::array();
  for (const auto& c : e.classes) {
    rows.push_back(c.name);
    for (const bool measured : {true, false})
      values.push_back({{"class", c.name},
                        {"figure", measured ? "measured" : "predicted"},
                        {"ms", num((measured ? c.measured_s : c.predicted_s) * kMsPerS)},
                        {"count", c.count},
                        {"error", error_text(c.predicted_s, c.measured_s)}});
  }
  Json spec = base_spec("Measured and predicted time of each task class in one step, summed over ranks");
  spec["width"] = 640;
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "class"}, {"type", "nominal"}, {"sort", strings(rows)}, {"title", nullptr}, {"axis", {{"labelLimit", 300}}}}},
      {"yOffset", {{"field", "figure"}, {"type", "nominal"}, {"sort", {"measured", "predicted"}}}},
      {"x", {{"field", "ms"}, {"type", "quantitative"}, {"title", "time in the step, summed over ranks (ms)"}}},
      {"color",
       {{"field", "figure"},
        {"type", "nominal"},
        {"scale", {{"domain", {"measured", "predicted"}}, {"range", {"#e45756", "#4c78a8"}}}},
        {"title", nullptr},
        {"legend", {{"orient", "bottom"}}}}},
      {"tooltip", Json::array({field("class", "nominal", "class"), field("figure", "nominal", "figure"), field("ms", "quantitative", "ms", kFormat),
                               field("count", "quantitative", "operations"), field("error", "nominal", "prediction's error")})}};
  return {"execution-classes", "Predicted against measured, by task class",
          "For the median timed step: each kernel class's operator passes, each collective kind and the pipeline sends (a rank's time in "
          "an operation includes waiting for its group), and idle compute, summed over ranks, in ms; red the measurement, blue the "
          "simulation of the same task graph from the same profile.",
          std::move(spec)};
}

HtmlChart execution_steps_chart(const HtmlExecution& e) {
  check(e);
  Json steps = Json::array();
  for (std::size_t i = 0; i < e.measured_step_s.size(); ++i)
    steps.push_back({{"step", i + 1}, {"ms", num(e.measured_step_s[i] * kMsPerS)}, {"figure", "measured"}});
  Json points;
  points["data"] = {{"values", steps}};
  points["mark"] = {{"type", "point"}, {"filled", true}, {"size", 60}, {"color", "#e45756"}};
  points["encoding"] = {{"x", {{"field", "step"}, {"type", "ordinal"}, {"title", "timed step"}}},
                        {"y", {{"field", "ms"}, {"type", "quantitative"}, {"title", "step time (ms)"}, {"scale", {{"zero", true}}}}},
                        {"tooltip", Json::array({field("step", "ordinal", "timed step"), field("ms", "quantitative", "measured (ms)", kFormat)})}};
  Json rule;
  rule["data"] = {{"values", Json::array({{{"ms", num(e.predicted_s * kMsPerS)}, {"figure", "predicted"}}})}};
  rule["mark"] = {{"type", "rule"}, {"color", "#4c78a8"}, {"strokeWidth", 2}};
  rule["encoding"] = {{"y", {{"field", "ms"}, {"type", "quantitative"}}},
                      {"tooltip", Json::array({field("ms", "quantitative", "predicted (ms)", kFormat)})}};
  Json spec = base_spec("Each timed step's measured time against the predicted step time");
  spec["width"] = 480;
  spec["height"] = 240;
  spec["layer"] = Json::array({points, rule});
  return {"execution-steps", "Measured steps against the prediction",
          "Each timed step's measured time (red points: the latest task end over every rank, the clocks started as the ranks leave one "
          "barrier) and the predicted step time (blue rule), in ms; median " +
              duration_text(e.measured_median_s) + " measured, " + duration_text(e.predicted_s) + " predicted (" +
              error_text(e.predicted_s, e.measured_median_s) + ").",
          std::move(spec)};
}

std::string execution_tables(const HtmlExecution& e) {
  check(e);
  const auto [fastest, slowest] = std::minmax_element(e.measured_step_s.begin(), e.measured_step_s.end());
  std::string html = "<p class=\"caption\">" + escape_html(e.executed_by) + "</p>\n";
  html += "<table>\n<thead><tr><th>step time</th><th>measured median</th><th>fastest</th><th>slowest</th><th>predicted</th><th>error</th></tr></thead>\n";
  html += "<tbody><tr><td>one step</td><td>" + duration_text(e.measured_median_s) + "</td><td>" + duration_text(*fastest) + "</td><td>" +
          duration_text(*slowest) + "</td><td>" + duration_text(e.predicted_s) + "</td><td>" + error_text(e.predicted_s, e.measured_median_s) +
          "</td></tr></tbody>\n</table>\n";
  html += "<table>\n<thead><tr><th>class</th><th>operations</th><th>measured</th><th>predicted</th><th>error</th></tr></thead>\n<tbody>\n";
  for (const auto& c : e.classes)
    html += "<tr><td>" + escape_html(c.name) + "</td><td>" + (c.count > 0 ? std::to_string(c.count) : std::string("-")) + "</td><td>" +
            duration_text(c.measured_s) + "</td><td>" + duration_text(c.predicted_s) + "</td><td>" + error_text(c.predicted_s, c.measured_s) +
            "</td></tr>\n";
  html += "</tbody>\n</table>\n";
  if (!e.host_check.empty()) {
    html += "<p class=\"caption\">Host check, just before the run (each rank's median, the mean over the ranks): how far this host had moved since the profile "
            "was calibrated, an error the compute predictions share.</p>\n";
    html += "<table>\n<thead><tr><th>check</th><th>measured</th><th>profile</th><th>error</th></tr></thead>\n<tbody>\n";
    for (const auto& h : e.host_check)
      html += "<tr><td>" + escape_html(h.what) + "</td><td>" + duration_text(h.measured_s) + "</td><td>" + duration_text(h.predicted_s) + "</td><td>" +
              error_text(h.predicted_s, h.measured_s) + "</td></tr>\n";
    html += "</tbody>\n</table>\n";
  }
  if (e.rank_compute.size() > 1) {
    html += "<p class=\"caption\">Compute per rank, in the median step (each rank's compute tasks, end − start, summed; the prediction runs every rank of a "
            "device kind at one speed, the slowest rank's where the profile measured how far apart its ranks run).</p>\n";
    html += "<table>\n<thead><tr><th>rank</th><th>measured</th><th>predicted</th><th>error</th></tr></thead>\n<tbody>\n";
    for (std::size_t k = 0; k < e.rank_compute.size(); ++k)
      html += "<tr><td>" + std::to_string(k) + "</td><td>" + duration_text(e.rank_compute[k].measured_s) + "</td><td>" + duration_text(e.rank_compute[k].predicted_s) +
              "</td><td>" + error_text(e.rank_compute[k].predicted_s, e.rank_compute[k].measured_s) + "</td></tr>\n";
    html += "</tbody>\n</table>\n";
  }
  return html;
}

}  // namespace parasim::reports
