#pragma once
/// report.html: one self-contained page (it opens offline, from a file or an e-mail) that compares
/// Results with charts drawn by Vega-Lite from declarative specs — ranked plans (for a search), the
/// step-time breakdown as stacked bars, memory by kind against capacity, the Pareto front (step
/// time vs memory vs devices), sweep curves, and the pipeline timeline of one simulated step — above
/// the same comparison table as report.md. Vega, Vega-Lite and vega-embed are inlined
/// (reports/html_vendor.hpp); a Content-Security-Policy forbids the page any network request.
///
/// Every user-provided string (scenario, variant, model, plan, profile, device, operator labels) is
/// escaped for HTML where it is text, and the chart specs are embedded as JSON in which '<', '>' and
/// '&' are written \u003c, \u003e and \u0026, so no name — `</script>` included — can end a script
/// element or inject markup. Deterministic: the same input gives byte-identical pages.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/html_charts.hpp"
#include "reports/html_timeline.hpp"
#include "sim/result.hpp"

namespace parasim::reports {

/// What one report.html shows. Only `results` is required; each optional section adds its chart,
/// and the page lists the charts it leaves out and why.
struct HtmlReport {
  std::string title;  ///< the page heading; "" gives "parasim report: <first result's scenario>"
  std::span<const sim::Result> results;  ///< compared side by side; at least one (borrowed)
  std::vector<std::string> labels;  ///< one per result for axes and table columns; empty: result_labels(results)
  std::optional<HtmlRanking> ranking;  ///< when the results are a search's ranked plans
  std::vector<HtmlSweep> sweeps;       ///< sweep curves, one chart each
  std::optional<PipelineTimeline> timeline;  ///< the pipeline timeline of one result
  std::size_t timeline_result = 0;           ///< which result the timeline belongs to (index into results)
};

/// The page. Preconditions (checked, InternalError): at least one result; labels empty or one per
/// result; timeline_result in range; a ranking with one score per result.
[[nodiscard]] std::string render_html(const HtmlReport& report);
/// The page for results with no optional section (what `parasim report` compares).
[[nodiscard]] std::string render_html(std::span<const sim::Result> results);

/// `text` as HTML text or attribute value: & < > " ' become entities, control characters other than
/// tab and newline become spaces, and invalid UTF-8 becomes U+FFFD.
[[nodiscard]] std::string escape_html(std::string_view text);

/// `value` as JSON text safe inside a <script> element: compact, invalid UTF-8 in strings replaced
/// by U+FFFD, and '<', '>', '&', U+2028 and U+2029 written as \u escapes (they can only occur inside
/// strings, so the JSON means the same).
[[nodiscard]] std::string json_for_script(const nlohmann::ordered_json& value);

}  // namespace parasim::reports
