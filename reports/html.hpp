#pragma once
/// report.html: one self-contained page (it opens offline, from a file or an e-mail) that compares
/// Results, shows a plan search, or sets an executed plan's measurement against its prediction, with charts drawn by Vega-Lite from declarative specs — ranked plans (for a search), the
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
#include "reports/html_execution.hpp"
#include "reports/html_loader.hpp"
#include "reports/html_search.hpp"
#include "reports/html_timeline.hpp"
#include "sim/result.hpp"

namespace parasim::reports {

/// What one report.html shows. Each optional section adds its charts; the page lists the charts it
/// leaves out and why.
///
/// Who fills what: `parasim SCENARIO.json` (cli/run_command.cpp) gives the base and what-if results,
/// the base's timeline, and for a `"sweep"` scenario one HtmlSweep (sweep_from_points of the points'
/// Scenario::changes and results); `parasim search` (cli/search_command.cpp) gives `search`, and the
/// best plan's simulated result and timeline when it simulates one; `parasim report` gives results only.
struct HtmlReport {
  /// The page heading; "" gives "parasim report: <first result's scenario>" (or, with no result,
  /// "parasim search: <search.scenario>").
  std::string title;
  /// Compared side by side in the comparison table (and, without a search, in the breakdown, memory
  /// and Pareto charts). Borrowed. At least one unless `search` is set.
  std::span<const sim::Result> results;
  std::vector<std::string> labels;  ///< one per result for axes and table columns; empty: result_labels(results)
  /// When the results themselves are ranked plans, best first, with each one's score: the ranked-plans
  /// chart of the results. Not with `search`.
  std::optional<HtmlRanking> ranking;
  /// A plan search: its ranked plans, their step-time breakdown, memory by kind against capacity and
  /// the Pareto front are drawn from it (reports/html_search.hpp) in place of the results' charts.
  std::optional<HtmlSearch> search;
  std::vector<HtmlSweep> sweeps;  ///< sweep curves, one chart each (a sweep with no points is left out)
  /// The pipeline timeline of one simulated step: of results[timeline_result], or of what
  /// `timeline_of` names (e.g. the search's best plan, "#1 tp 8 × pp 12 × dp 8, …").
  std::optional<PipelineTimeline> timeline;
  std::size_t timeline_result = 0;  ///< which result the timeline belongs to (index into results)
  std::string timeline_of;          ///< what the timeline shows; "" names it by labels[timeline_result]
  /// `parasim execute`: the plan run for real against its prediction (results: the prediction), its
  /// tables and charts first on the page, and the measured step's timeline beside the simulated one.
  std::optional<HtmlExecution> execution;
  std::optional<PipelineTimeline> measured_timeline;
  /// `parasim calibrate --backend loader`: the real loader against the simulated input pipeline;
  /// such a page needs no result.
  std::optional<HtmlLoader> loader;
};

/// The page. Preconditions (checked, InternalError): at least one result or a search; labels empty or
/// one per result; a timeline belongs to a result in range or names what it shows; a ranking with
/// one score per result, and not both a ranking and a search.
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
