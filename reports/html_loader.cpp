#include "reports/html_loader.hpp"

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

constexpr double kUsPerS = 1e6;

}  // namespace

HtmlChart loader_chart(const HtmlLoader& l) {
  PARASIM_CHECK(!l.loader.checks.empty(), "a loader calibration has checks");
  Json values = Json::array();
  for (const auto& c : l.loader.checks)
    for (const bool measured : {true, false})
      values.push_back({{"placement", c.placement},
                        {"threads", c.threads},
                        {"figure", measured ? "measured" : "predicted"},
                        {"us", num((measured ? c.measured_s_per_sample : c.predicted_s_per_sample) * kUsPerS)},
                        {"error", change_percent(c.predicted_s_per_sample, c.measured_s_per_sample)}});
  Json spec = base_spec("Time per sample against loader threads, by placement: measured and predicted");
  spec["width"] = 480;
  spec["height"] = 280;
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "line"}, {"point", {{"filled", true}, {"size", 70}}}};
  spec["encoding"] = {
      {"x", {{"field", "threads"}, {"type", "ordinal"}, {"title", "loader threads"}}},
      {"y", {{"field", "us"}, {"type", "quantitative"}, {"title", "time per sample (µs)"}, {"scale", {{"zero", true}}}}},
      {"color", {{"field", "placement"}, {"type", "nominal"}, {"scale", {{"domain", {"naive", "sharded"}}, {"range", {"#e45756", "#4c78a8"}}}}}},
      {"strokeDash", {{"field", "figure"}, {"type", "nominal"}, {"sort", {"measured", "predicted"}}, {"title", nullptr}}},
      {"detail", {{"field", "figure"}}},
      {"tooltip", Json::array({field("placement", "nominal", "placement"), field("threads", "ordinal", "threads"),
                               field("figure", "nominal", "figure"), field("us", "quantitative", "µs a sample", kFormat),
                               field("error", "nominal", "prediction's error")})}};
  return {"loader-threads", "Time per sample by loader threads and placement",
          "The real loader on " + l.format + " (" + std::to_string(l.loader.image_size) + " × " + std::to_string(l.loader.image_size) +
              " tensors) feeding tp 2 × dp 2 on 4 devices of one host: solid the measurement (the median run's wall time over the samples of its "
              "timed steps), dashed the simulated input pipeline's loader time from the calibrated figures; red the naive loader (one thread "
              "copying every sample to every device), blue the sharded one (each sample once, to the devices that take it).",
          std::move(spec)};
}

std::string loader_tables(const HtmlLoader& l) {
  std::string html = "<p class=\"caption\">" + escape_html(l.loader.source) + "</p>\n";
  html += "<table>\n<thead><tr><th>figure</th><th>value</th></tr></thead>\n<tbody>\n";
  for (std::size_t t = 0; t < l.loader.decode_s_at_threads.size(); ++t)
    html += "<tr><td>read, decode and augment a sample, each of " + std::to_string(t + 1) + " thread" + (t == 0 ? "" : "s") + " at once</td><td>" +
            duration_text(l.loader.decode_s_at_threads[t]) + "</td></tr>\n";
  if (l.loader.decode_s_at_threads.empty())
    html += "<tr><td>read, decode and augment a sample, one thread</td><td>" + duration_text(l.loader.decode_s_per_sample) + "</td></tr>\n";
  html += "<tr><td>copy into a device's buffer</td><td>" + significant(l.loader.copy_bytes_per_s / 1e9, 4) + " GB/s</td></tr>\n";
  html += "</tbody>\n</table>\n";
  html += "<table>\n<thead><tr><th>placement</th><th>threads</th><th>measured a sample</th><th>predicted</th><th>error</th></tr></thead>\n<tbody>\n";
  for (const auto& c : l.loader.checks)
    html += "<tr><td>" + escape_html(c.placement) + "</td><td>" + std::to_string(c.threads) + "</td><td>" + duration_text(c.measured_s_per_sample) +
            "</td><td>" + duration_text(c.predicted_s_per_sample) + "</td><td>" + change_percent(c.predicted_s_per_sample, c.measured_s_per_sample) +
            "</td></tr>\n";
  html += "</tbody>\n</table>\n";
  return html;
}

}  // namespace parasim::reports
