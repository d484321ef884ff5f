#include "reports/html.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "reports/comparison.hpp"
#include "reports/html_vendor.hpp"

namespace parasim::reports {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

/// Length of the valid UTF-8 sequence at `text[i]`, or 0 when there is none (RFC 3629 §4: no
/// overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(k) >= lo && byte(k) <= hi; };
  const unsigned b = byte(0);
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
  if (b >= 0xE0 && b <= 0xEF) {
    const bool second = b == 0xE0 ? cont(1, 0xA0) : b == 0xED ? cont(1, 0x80, 0x9F) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (b >= 0xF0 && b <= 0xF4) {
    const bool second = b == 0xF0 ? cont(1, 0x90) : b == 0xF4 ? cont(1, 0x80, 0x8F) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/// Text for inside an HTML comment: a comment ends at "--" followed by '>', so no "--" is left.
std::string comment_safe(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '-' && !out.empty() && out.back() == '-') out += ' ';
    out += c;
  }
  if (!out.empty() && out.back() == '-') out += ' ';
  return out;
}

constexpr std::string_view kStyle = R"(
:root { color-scheme: light; --ink: #1d2733; --muted: #5b6775; --rule: #d8dee6; --accent: #4c78a8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: #f6f8fa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
header h1 { font-size: 26px; margin: 0 0 4px; }
header p { margin: 4px 0; color: var(--muted); }
nav { margin: 16px 0 8px; display: flex; flex-wrap: wrap; gap: 6px 14px; }
nav a { color: var(--accent); text-decoration: none; font-size: 14px; }
nav a:hover { text-decoration: underline; }
section { background: #fff; border: 1px solid var(--rule); border-radius: 8px; padding: 16px 20px; margin: 16px 0; }
section h2 { font-size: 19px; margin: 0 0 6px; }
p.caption { margin: 0 0 12px; color: var(--muted); font-size: 14px; max-width: 900px; }
.vis { overflow-x: auto; min-height: 40px; }
.vis .chart-error { color: #b00020; font-weight: 600; }
table { border-collapse: collapse; font-size: 14px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--rule); text-align: right; white-space: nowrap; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
thead th { border-bottom: 2px solid var(--ink); }
td.change { color: var(--muted); }
.table-wrap { overflow-x: auto; }
ul.omitted { margin: 0; padding-left: 20px; color: var(--muted); }
footer { color: var(--muted); font-size: 13px; margin-top: 24px; }
)";

/// Installed before any other script, so an error anywhere (a library failing to load, a chart
/// failing to draw) is counted on the page and shown, not only in a console nobody opens.
constexpr std::string_view kErrorHook = R"(
window.parasimErrors = [];
window.addEventListener("error", function (e) { window.parasimErrors.push(String(e.message)); });
window.addEventListener("unhandledrejection", function (e) { window.parasimErrors.push(String(e.reason)); });
)";

/// Draws every chart with vega-embed as SVG. `ast: true` makes Vega interpret its expressions
/// instead of compiling them with Function(), so the page's policy can forbid eval. When all are
/// done the body says how many were drawn (data-charts-drawn of data-charts-total): the headless
/// browser test reads that.
constexpr std::string_view kBoot = R"(
(function () {
  "use strict";
  var charts = JSON.parse(document.getElementById("parasim-charts").textContent);
  var jobs = charts.map(function (chart) {
    var el = document.getElementById("vis-" + chart.id);
    return vegaEmbed(el, chart.spec, { mode: "vega-lite", renderer: "svg", actions: false, ast: true })
      .then(function (result) { return result.view.runAsync(); })
      .then(function () { el.setAttribute("data-drawn", "true"); return true; },
            function (error) {
              var message = document.createElement("p");
              message.className = "chart-error";
              message.textContent = "This chart could not be drawn: " + error;
              el.appendChild(message);
              window.parasimErrors.push(String(error));
              return false;
            });
  });
  Promise.all(jobs).then(function (drawn) {
    document.body.setAttribute("data-charts-total", String(charts.length));
    document.body.setAttribute("data-charts-drawn", String(drawn.filter(Boolean).length));
    document.body.setAttribute("data-errors", String(window.parasimErrors.length));
  });
})();
)";

std::string comparison_table(std::span<const sim::Result> results, std::span<const std::string> labels) {
  const bool against_base = compares_against_base(results);
  std::string out = "<div class=\"table-wrap\"><table>\n<thead><tr><th>figure</th><th>unit</th>";
  for (std::size_t i = 0; i < results.size(); ++i) {
    out += "<th>" + escape_html(labels[i]) + "</th>";
    if (i > 0 && against_base) out += "<th>vs " + escape_html(labels[0]) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : comparison_rows(results)) {
    out += "<tr><td>" + escape_html(row.figure) + "</td><td>" + escape_html(row.unit) + "</td>";
    for (std::size_t i = 0; i < results.size(); ++i) {
      out += "<td>" + escape_html(row.values[i]) + "</td>";
      if (i > 0 && against_base) out += "<td class=\"change\">" + escape_html(row.changes[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 && c != '\t' && c != '\n') || u == 0x7f ? ' ' : c;
      }
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::ordered_json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_html(std::span<const sim::Result> results) {
  HtmlReport report;
  report.results = results;
  return render_html(report);
}

std::string render_html(const HtmlReport& report) {
  const auto results = report.results;
  PARASIM_CHECK(!results.empty() || report.search || report.loader, "a report needs at least one result, a search or a loader calibration");
  PARASIM_CHECK(report.labels.empty() || report.labels.size() == results.size(), "a report needs one label per result");
  PARASIM_CHECK(!report.timeline || !report.timeline_of.empty() || report.timeline_result < results.size(),
                "the timeline's result must be one of the report's");
  PARASIM_CHECK(!(report.ranking && report.search), "a report ranks its results or shows a search, not both");
  const std::vector<std::string> labels = report.labels.empty() ? result_labels(results) : report.labels;
  PARASIM_CHECK(!report.loader || !report.title.empty(), "a loader calibration's page has a title");
  const std::string title = !report.title.empty() ? report.title
                            : !results.empty()    ? "parasim report: " + results.front().scenario
                                                  : "parasim search: " + report.search->scenario;
  const std::string model = !results.empty() ? results.front().model : report.search ? report.search->model : std::string();

  std::vector<HtmlChart> charts;
  std::vector<std::string> omitted;
  if (report.execution) {
    charts.push_back(execution_class_chart(*report.execution));
    charts.push_back(execution_steps_chart(*report.execution));
  }
  if (report.loader) {
    charts.push_back(loader_chart(*report.loader));
  } else if (report.search) {
    charts.push_back(search_ranking_chart(*report.search));
    charts.push_back(search_breakdown_chart(*report.search));
    charts.push_back(search_memory_chart(*report.search));
    charts.push_back(search_pareto_chart(*report.search));
  } else {
    if (report.ranking) charts.push_back(ranking_chart(results, labels, *report.ranking));
    else omitted.push_back("Ranked plans: these results do not come from a plan search (parasim search ranks plans).");
    charts.push_back(breakdown_chart(results, labels));
    charts.push_back(memory_chart(results, labels));
    if (results.size() >= 2) charts.push_back(pareto_chart(results, labels));
    else omitted.push_back("Pareto front: it needs at least two results to compare.");
    if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.local_update.has_value(); }))
      charts.push_back(local_update_chart(results, labels));
  }
  for (std::size_t i = 0; i < report.sweeps.size(); ++i)
    if (!report.sweeps[i].points.empty()) charts.push_back(sweep_chart(report.sweeps[i], i));
  if (report.sweeps.empty() && !report.search && !report.loader)
    omitted.push_back("Sweep curves: these results hold no sweep (a scenario's \"sweep\" varies its fields).");
  if (report.loader) {
    // A loader calibration simulates no step.
  } else if (report.timeline)
    charts.push_back(timeline_chart(*report.timeline, report.timeline_of.empty() ? labels[report.timeline_result] : report.timeline_of));
  else if (report.search)
    omitted.push_back("Pipeline timeline: the search simulated no plan's step for a timeline.");
  else
    omitted.push_back("Pipeline timeline: saved results (result.json) keep no task timeline; it is drawn when a scenario is simulated.");
  if (report.measured_timeline)
    charts.push_back(timeline_chart(*report.measured_timeline, report.timeline_of.empty() ? labels[report.timeline_result] : report.timeline_of, true));

  std::string html;
  html.reserve(1 << 20);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // The page may run only its own inline scripts and styles and show inline images: it never
  // reaches the network, so it reads the same offline, and an injected script could not call out.
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data: blob:\">\n";
  html += "<title>" + escape_html(title) + "</title>\n<style>" + std::string(kStyle) + "</style>\n";
  html += "<script>" + std::string(kErrorHook) + "</script>\n</head>\n<body>\n<main>\n";

  html += "<header>\n<h1>" + escape_html(title) + "</h1>\n";
  html += report.loader ? "<p>The real data loader, measured on this machine, against the simulated input pipeline." : "<p>Model " + escape_html(model) + ".";
  if (report.search) {
    const auto& o = *report.search->outcome;
    html += " A plan search: " + std::to_string(o.candidates) + " plans enumerated, " + std::to_string(o.valid) + " valid, " +
            std::to_string(o.fitting) + " fit in memory, " + std::to_string(o.simulated) + " simulated by the analytical engine";
    if (o.refined > 0) html += ", " + std::to_string(o.refined) + " re-simulated by " + escape_html(o.refine_name);
    html += "; best plan: " + escape_html(o.plans.empty() ? std::string("none") : o.plans.front().description) + ".";
  }
  if (results.empty()) {
    html += "</p>\n";
  } else {
    bool same_provenance = true;
    for (const auto& r : results) same_provenance = same_provenance && provenance(r) == provenance(results.front());
    if (same_provenance) {
      html += " Every " + std::string(report.search ? "simulated result" : "figure") + " comes from " +
              escape_html(provenance(results.front())) + ".</p>\n";
    } else {
      html += " The figures come from:</p>\n<ul>\n";
      for (std::size_t i = 0; i < results.size(); ++i)
        html += "<li>" + escape_html(labels[i]) + ": " + escape_html(provenance(results[i])) + "</li>\n";
      html += "</ul>\n";
    }
  }
  html += "</header>\n<nav>\n";
  if (report.execution) html += "<a href=\"#execution\">Predicted against measured</a>\n";
  if (report.loader) html += "<a href=\"#loader\">The loader's figures</a>\n";
  if (!results.empty()) html += "<a href=\"#comparison\">Comparison</a>\n";
  for (const auto& c : charts) html += "<a href=\"#chart-" + c.id + "\">" + escape_html(c.title) + "</a>\n";
  html += "</nav>\n";

  if (report.loader) html += "<section id=\"loader\">\n<h2>The loader's figures</h2>\n" + loader_tables(*report.loader) + "</section>\n";
  if (report.execution)
    html += "<section id=\"execution\">\n<h2>Predicted against measured</h2>\n" + execution_tables(*report.execution) + "</section>\n";
  if (!results.empty()) {
    html += "<section id=\"comparison\">\n<h2>Comparison</h2>\n<p class=\"caption\">";
    html += results.size() > 1 ? "Each figure with its unit; \"vs " + escape_html(labels[0]) + "\" is the change against " +
                                     escape_html(labels[0]) + " in percent of its value. Plans: "
                               : std::string("Each figure with its unit. Plan: ");
    for (std::size_t i = 0; i < results.size(); ++i)
      html += (i > 0 ? "; " : "") + (results.size() > 1 ? escape_html(labels[i]) + ": " : std::string()) + escape_html(results[i].plan);
    html += ".</p>\n" + comparison_table(results, labels) + "</section>\n";
  }

  for (const auto& c : charts) {
    html += "<section class=\"chart\" id=\"chart-" + c.id + "\">\n<h2>" + escape_html(c.title) + "</h2>\n";
    html += "<p class=\"caption\">" + escape_html(c.caption) + "</p>\n";
    html += "<div class=\"vis\" id=\"vis-" + c.id + "\"></div>\n</section>\n";
  }
  if (!omitted.empty()) {
    html += "<section id=\"not-shown\">\n<h2>Not in this report</h2>\n<ul class=\"omitted\">\n";
    for (const auto& o : omitted) html += "<li>" + escape_html(o) + "</li>\n";
    html += "</ul>\n</section>\n";
  }

  const auto scripts = vega_scripts();
  html += "<footer>Written by parasim. Charts drawn in this page, offline, by";
  for (std::size_t i = 0; i < scripts.size(); ++i)
    html += std::string(i == 0 ? " " : i + 1 == scripts.size() ? " and " : ", ") + std::string(scripts[i].name) + " " +
            std::string(scripts[i].version);
  html += " (BSD-3-Clause; their licences are in this page's source).</footer>\n</main>\n";

  nlohmann::ordered_json specs = nlohmann::ordered_json::array();
  for (const auto& c : charts) specs.push_back({{"id", c.id}, {"spec", c.spec}});
  html += "<script type=\"application/json\" id=\"parasim-charts\">" + json_for_script(specs) + "</script>\n";
  for (const auto& s : scripts) {
    html += "<!-- " + std::string(s.name) + " " + std::string(s.version) + ", inlined from the npm registry.\n" + comment_safe(s.licence) + "\n-->\n";
    html += "<script>";
    html += s.code;
    html += "</script>\n";
  }
  html += "<script>" + std::string(kBoot) + "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace parasim::reports
