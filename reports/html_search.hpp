#pragma once
/// The charts report.html draws for a plan search (`parasim search`), from its SearchOutcome: the
/// ranked plans by the search's objective, each shown plan's step-time breakdown (compute, exposed
/// communication, pipeline bubble, data loading) as stacked bars, each shown plan's memory by kind
/// (its fullest stage) against the usable capacity, and the Pareto front of step time × peak memory
/// × devices. Every figure is the one the plan was ranked by (RankedPlan::best(): the analytical
/// simulation when it had one, else the closed-form estimate), and each chart says which.
///
/// And the sweep curves of a `"sweep"` scenario built from its points' swept values
/// (scenarios::Scenario::changes of each point) and their results.
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reports/html_charts.hpp"
#include "strategies/search/search.hpp"

namespace parasim::reports {

/// A plan search for report.html. The outcome is borrowed: it must outlive render_html.
struct HtmlSearch {
  const strategies::search::SearchOutcome* outcome = nullptr;  ///< required
  std::string scenario;  ///< the searched scenario's name (the page title when the report has no result)
  std::string model;     ///< the model's name (the header when the report has no result)
  /// Plans shown in the ranked-plans, breakdown and memory charts: the best this many, and the
  /// scenario's own plan after them when it ranks further down. ≥ 1.
  std::size_t top = 20;
  /// Plans shown in the Pareto chart at most: every simulated plan (the front is theirs), best first;
  /// when none was simulated, the best of the estimated ones. ≥ 1.
  std::size_t pareto_points = 500;
};

/// The plans the charts show, as indices into outcome.plans in display order: the best `top`, then
/// the reference when it ranks below them.
[[nodiscard]] std::vector<std::size_t> shown_plans(const HtmlSearch& search);

/// The objective's value of a plan and how to name it: "step time" in "s", "throughput" in
/// "tokens/s" (or "samples/s" for a model without sequences), "cost" in "price per step" (the
/// scenario's price currency), "memory headroom" in "GiB".
struct SearchScore {
  std::string objective;
  std::string unit;
  double value = 0;
};
[[nodiscard]] SearchScore search_score(const strategies::search::SearchOutcome& outcome, const strategies::search::RankedPlan& plan);

/// The label of a plan on the charts' axes: "#3 tp 8 × pp 12 × dp 8, 1f1b, …", and " (the
/// scenario's plan)" after the scenario's own.
[[nodiscard]] std::string plan_label(const strategies::search::SearchOutcome& outcome, std::size_t index);

[[nodiscard]] HtmlChart search_ranking_chart(const HtmlSearch& search);
[[nodiscard]] HtmlChart search_breakdown_chart(const HtmlSearch& search);
[[nodiscard]] HtmlChart search_memory_chart(const HtmlSearch& search);
[[nodiscard]] HtmlChart search_pareto_chart(const HtmlSearch& search);

/// One sweep point's swept fields as scenarios::Scenario::changes holds them: (dotted path, value
/// as compact JSON), e.g. {"cluster.nodes", "16"}, {"cluster.device", "\"h100-sxm\""}.
using SweepChanges = std::vector<std::pair<std::string, std::string>>;

/// The sweep curves of a sweep's points, in the sweep's order: `changes[i]` are point i's swept
/// fields and `results[i]` its result. The x axis is the first swept field whose values are all
/// numbers (else the first field); the other field's value names the curves ("h100-sxm"; the legend
/// is titled with its key), or with several others "key=value, key=value".
/// Preconditions (checked, InternalError): one changes per result, every point with the same fields.
[[nodiscard]] HtmlSweep sweep_from_points(std::span<const SweepChanges> changes, std::span<const sim::Result> results);

}  // namespace parasim::reports
