#pragma once
/// The charts of report.html as declarative Vega-Lite (v6) specs with their data inline, each built
/// from Results by a pure function: ranked plans, the step-time breakdown (compute, exposed
/// communication by kind, pipeline bubble, data loading) as stacked bars, memory by kind against
/// capacity, the Pareto front (step time vs memory vs devices), sweep curves, and the pipeline
/// timeline of one simulated step. Every number in a spec is a figure of the Results (or a unit
/// conversion of one) rounded to 6 significant digits; strings are left as they are — the page
/// escapes the whole spec when it embeds it.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/html_timeline.hpp"
#include "sim/result.hpp"

namespace parasim::reports {

/// How a search ranked its plans: the results are in rank order, and `scores` holds each one's
/// value of the objective.
struct HtmlRanking {
  std::string objective;       ///< "step time", "throughput", "cost", "memory headroom"
  std::string unit;            ///< of the scores: "s", "tokens/s", "USD per step", "GiB"
  std::vector<double> scores;  ///< one per result, in the results' order
};

/// One simulated point of a sweep.
struct HtmlSweepPoint {
  std::string value;             ///< the varied field's value as text: "400", "h100-sxm"
  std::optional<double> number;  ///< the value as a number when the field is numeric (a quantitative axis)
  std::string series;            ///< the curve the point belongs to; "" when the sweep draws one curve
  sim::Result result;
};

/// A sweep: one field varied over a list or range, every point simulated.
struct HtmlSweep {
  std::string parameter;         ///< the varied field, e.g. "cluster.inter_node.bandwidth_gbps"
  std::string series_parameter;  ///< what tells the curves apart (a second field), or ""
  std::vector<HtmlSweepPoint> points;  ///< in the sweep's order
};

/// One chart of the page.
struct HtmlChart {
  std::string id;       ///< unique in a page, letters, digits and '-' only
  std::string title;    ///< the section heading (plain text)
  std::string caption;  ///< how to read the chart and where its figures come from (plain text)
  nlohmann::ordered_json spec;  ///< Vega-Lite, data inline
};

/// A short unique name per result for axes and legends: its variant ("base", a what-if's name), led
/// by its scenario when the results come from several; a repeated name gets " #2", " #3", ...
[[nodiscard]] std::vector<std::string> result_labels(std::span<const sim::Result> results);

/// Whether each result is on the Pareto front of step time, peak memory per device and device
/// count (all three minimised): it fits in memory and no other fitting result is at least as good in
/// all three and better in one.
[[nodiscard]] std::vector<bool> pareto_optimal(std::span<const sim::Result> results);

/// Ranked plans: one bar per result, in rank order, of its score. Precondition (checked): one score
/// and one label per result.
[[nodiscard]] HtmlChart ranking_chart(std::span<const sim::Result> results, std::span<const std::string> labels,
                                      const HtmlRanking& ranking);
/// Where the step time goes, mean over devices: one stacked bar per result.
[[nodiscard]] HtmlChart breakdown_chart(std::span<const sim::Result> results, std::span<const std::string> labels);
/// Memory per device by kind for each pipeline stage (only the peak stage of each result when that
/// would make more than 40 bars), with a tick at the usable capacity.
[[nodiscard]] HtmlChart memory_chart(std::span<const sim::Result> results, std::span<const std::string> labels);
/// Step time against peak memory per device, coloured by device count, the Pareto front marked.
[[nodiscard]] HtmlChart pareto_chart(std::span<const sim::Result> results, std::span<const std::string> labels);
/// Local-update training against synchronous data parallelism (sim/result.hpp, LocalUpdateFigures):
/// per result, its time per step with the synchronisation, WAN bytes per step and compute
/// utilisation, beside the synchronous run on the same devices each local update was compared with
/// (once per distinct one). Precondition: some result has local-update figures.
[[nodiscard]] HtmlChart local_update_chart(std::span<const sim::Result> results, std::span<const std::string> labels);
/// Step time, throughput and peak memory against the swept value; `index` makes the id unique.
[[nodiscard]] HtmlChart sweep_chart(const HtmlSweep& sweep, std::size_t index);
/// The pipeline timeline of `of` (the label of the result it belongs to); `measured`: the timeline
/// of a step `parasim execute` ran (its chart id "timeline-measured"), else a simulated one ("timeline").
[[nodiscard]] HtmlChart timeline_chart(const PipelineTimeline& timeline, const std::string& of, bool measured = false);

}  // namespace parasim::reports
