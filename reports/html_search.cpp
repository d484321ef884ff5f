#include "reports/html_search.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "reports/format.hpp"
#include "reports/html_spec.hpp"

namespace parasim::reports {
namespace {

namespace search = strategies::search;
using html_spec::base_spec;
using html_spec::field;
using html_spec::in_gib;
using html_spec::Json;
using html_spec::kFormat;
using html_spec::num;
using html_spec::memory_spec;
using html_spec::pareto_spec;
using html_spec::push_memory_bars;
using html_spec::strings;

/// The colours of report.html's other charts (html_charts.cpp): compute blue, exposed communication
/// red, idle grey, data loading green.
constexpr const char* kParts[] = {"compute", "exposed communication", "pipeline bubble", "data loading"};
constexpr const char* kPartColours[] = {"#4c78a8", "#e45756", "#bab0ac", "#54a24b"};

const search::SearchOutcome& outcome_of(const HtmlSearch& s) {
  PARASIM_CHECK(s.outcome != nullptr, "a search report needs the search's outcome");
  PARASIM_CHECK(s.top >= 1 && s.pareto_points >= 1, "a search report shows at least one plan");
  return *s.outcome;
}

/// What a plan's figures come from, as the charts' legends say it.
std::string fidelity_text(const search::RankedPlan& p) {
  return p.ranked_by() == search::Fidelity::Estimate ? "estimate (closed form)" : "simulated (analytical engine)";
}

Json rows_json(const search::SearchOutcome& o, const std::vector<std::size_t>& shown) {
  std::vector<std::string> rows;
  for (const auto i : shown) rows.push_back(plan_label(o, i));
  return strings(rows);
}

/// A nominal y axis of plan rows, in display order.
Json plan_axis(const Json& order) {
  return {{"field", "row"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}, {"axis", {{"labelLimit", 420}}}};
}

/// Simulated plans and plans only estimated in two panels (a row facet; the charts resolve their y
/// scales apart, so each panel has its own rows): an estimate leaves out what the simulation adds
/// (overlap lost to dependencies, pipeline bubbles as they fall), so its bar is not comparable with a
/// simulated one, and it is ranked below every one.
Json source_panels() {
  return {{"field", "source"},
          {"type", "nominal"},
          {"sort", {"simulated (analytical engine)", "estimate (closed form)"}},
          {"title", nullptr},
          {"header", {{"labelAngle", 0}, {"labelOrient", "top"}, {"labelAnchor", "start"}, {"labelFontWeight", "bold"}}}};
}

std::string source_note(const search::SearchOutcome& o, const std::vector<std::size_t>& shown) {
  std::size_t estimated = 0;
  for (const auto i : shown) estimated += o.plans[i].ranked_by() == search::Fidelity::Estimate ? 1 : 0;
  if (estimated == 0) return " Every figure is from the analytical engine's simulation of the plan.";
  if (estimated == shown.size()) return " Every figure is the search's closed-form estimate (no plan shown was simulated).";
  return " Figures are from the analytical engine's simulation where the plan was simulated, else the search's "
         "closed-form estimate, in a panel of their own.";
}

}  // namespace

std::vector<std::size_t> shown_plans(const HtmlSearch& s) {
  const auto& o = outcome_of(s);
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < o.plans.size() && i < s.top; ++i) shown.push_back(i);
  if (o.reference && *o.reference >= shown.size() && *o.reference < o.plans.size()) shown.push_back(*o.reference);
  return shown;
}

SearchScore search_score(const search::SearchOutcome& o, const search::RankedPlan& p) {
  const search::Evaluation& e = p.best();
  switch (o.objective) {
    case search::Objective::Time: return {"step time", "s", e.step_time_s};
    case search::Objective::Throughput:
      return e.tokens_per_s > 0 ? SearchScore{"throughput", "tokens/s", e.tokens_per_s} : SearchScore{"throughput", "samples/s", e.samples_per_s};
    // RankedPlan::cost_per_step: step time × devices × price per device-hour / 3600 s.
    case search::Objective::Cost: return {"cost", "price per step", p.cost_per_step(o.price_per_device_hour)};
    case search::Objective::Memory: return {"memory headroom", "GiB", in_gib(p.headroom_bytes())};
  }
  return {"step time", "s", e.step_time_s};
}

std::string plan_label(const search::SearchOutcome& o, std::size_t index) {
  PARASIM_CHECK(index < o.plans.size(), "a plan of the search");
  const auto& p = o.plans[index];
  return "#" + std::to_string(index + 1) + " " + p.description + (p.reference ? " (the scenario's plan)" : "");
}

HtmlChart search_ranking_chart(const HtmlSearch& s) {
  const auto& o = outcome_of(s);
  const auto shown = shown_plans(s);
  PARASIM_CHECK(!shown.empty(), "a search report needs at least one ranked plan");
  const SearchScore head = search_score(o, o.plans.front());
  Json values = Json::array();
  for (const auto i : shown) {
    const auto& p = o.plans[i];
    const auto& e = p.best();
    values.push_back({{"row", plan_label(o, i)},
                      {"rank", i + 1},
                      {"score", num(search_score(o, p).value)},
                      {"source", fidelity_text(p)},
                      {"step_time_s", num(e.step_time_s)},
                      {"tokens_per_s", num(e.tokens_per_s)},
                      {"mfu", num(e.mfu)},
                      {"devices", p.candidate.devices},
                      {"peak_gib", num(in_gib(p.memory.total_bytes()))},
                      {"pareto", p.pareto ? "yes" : "no"}});
  }
  const std::string x_title = head.objective + " (" + head.unit + ")";
  Json spec = base_spec("Ranked plans of the search by " + head.objective);
  spec["width"] = 560;
  spec["height"] = Json{{"step", 22}};
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}};
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};  // each panel its own rows
  spec["encoding"] = {
      {"y", plan_axis(rows_json(o, shown))},
      {"x", {{"field", "score"}, {"type", "quantitative"}, {"title", x_title}, {"axis", {{"format", kFormat}}}}},
      {"color",
       {{"field", "source"},
        {"type", "nominal"},
        {"scale", {{"domain", {"simulated (analytical engine)", "estimate (closed form)"}}, {"range", {"#4c78a8", "#9ecae9"}}}},
        {"legend", {{"orient", "bottom"}}},
        {"title", "ranked by"}}},
      {"row", source_panels()},
      {"tooltip", Json::array({field("rank", "ordinal", "rank"), field("row", "nominal", "plan"), field("score", "quantitative", x_title, kFormat),
                               field("source", "nominal", "ranked by"), field("step_time_s", "quantitative", "step time (s)", kFormat),
                               field("tokens_per_s", "quantitative", "throughput (tokens/s)", kFormat),
                               field("mfu", "quantitative", "model FLOPs utilisation", ".1%"), field("devices", "quantitative", "devices"),
                               field("peak_gib", "quantitative", "peak memory per device (GiB)", kFormat),
                               field("pareto", "nominal", "on the Pareto front")})}};
  std::string caption = "The best " + std::to_string(std::min(shown.size(), s.top)) + " of " + std::to_string(o.plans.size()) +
                        " plans that fit (" + std::to_string(o.candidates) + " enumerated, " + std::to_string(o.valid) +
                        " valid), ranked by " + head.objective + " (" + head.unit + ")";
  if (shown.size() > s.top) caption += ", and the scenario's own plan";
  caption += ". Dark bars were simulated by the analytical engine; light ones, in their own panel, only estimated in closed form: an "
             "estimate never outranks a simulation, and is not comparable with one";
  // How far the simulations ran from their own plans' estimates: the figure that says how much an
  // estimate's bar flatters it.
  double low = 0, high = 0;
  bool any = false;
  for (const auto& p : o.plans) {
    if (!p.simulated || p.estimate.step_time_s <= 0) continue;
    const double ratio = p.simulated->step_time_s / p.estimate.step_time_s - 1;
    low = any ? std::min(low, ratio) : ratio;
    high = any ? std::max(high, ratio) : ratio;
    any = true;
  }
  bool estimated_shown = false;
  for (const auto i : shown) estimated_shown = estimated_shown || o.plans[i].ranked_by() == search::Fidelity::Estimate;
  if (any && estimated_shown)
    caption += " (the simulated plans' steps came out " + change_percent(1 + low, 1) + " to " + change_percent(1 + high, 1) + " against their own estimates)";
  caption += ". Hover a bar for its step time, throughput, utilisation and memory.";
  return {"ranking", "Ranked plans", caption, std::move(spec)};
}

HtmlChart search_breakdown_chart(const HtmlSearch& s) {
  const auto& o = outcome_of(s);
  const auto shown = shown_plans(s);
  Json values = Json::array();
  for (const auto i : shown) {
    const auto& p = o.plans[i];
    const auto& e = p.best();
    const double parts[] = {e.compute_s, e.exposed_comm_s, e.bubble_s, e.data_load_s};
    for (std::size_t k = 0; k < 4; ++k) {
      if (parts[k] <= 0) continue;
      values.push_back({{"row", plan_label(o, i)},
                        {"part", kParts[k]},
                        {"part_order", k},
                        {"seconds", num(parts[k])},
                        {"share", num(e.step_time_s > 0 ? parts[k] / e.step_time_s : 0.0)},
                        {"source", fidelity_text(p)}});
    }
  }
  Json spec = base_spec("Step-time breakdown of the ranked plans, mean over devices, in seconds");
  spec["width"] = 560;
  spec["height"] = Json{{"step", 22}};
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}};
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};  // each panel its own rows
  spec["encoding"] = {
      {"y", plan_axis(rows_json(o, shown))},
      {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "seconds per step (mean over devices)"}}},
      {"color",
       {{"field", "part"},
        {"type", "nominal"},
        {"scale", {{"domain", Json::array({kParts[0], kParts[1], kParts[2], kParts[3]})},
                   {"range", Json::array({kPartColours[0], kPartColours[1], kPartColours[2], kPartColours[3]})}}},
        {"legend", {{"orient", "bottom"}}},
        {"title", "part of the step"}}},
      {"order", {{"field", "part_order"}, {"type", "quantitative"}}},
      {"row", source_panels()},
      {"tooltip", Json::array({field("row", "nominal", "plan"), field("part", "nominal", "part"), field("seconds", "quantitative", "seconds", kFormat),
                               field("share", "quantitative", "share of the step", ".1%"), field("source", "nominal", "figures from")})}};
  return {"breakdown", "Where the step time goes",
          "Mean time per device of one training step of each plan shown, split into compute (forward, backward, recompute, "
          "optimizer), communication the compute stream waits on (exposed), idle time (the pipeline bubble and waiting) and "
          "data loading; each bar sums to the plan's step time." +
              source_note(o, shown),
          std::move(spec)};
}

HtmlChart search_memory_chart(const HtmlSearch& s) {
  const auto& o = outcome_of(s);
  const auto shown = shown_plans(s);
  Json bars = Json::array(), capacity = Json::array();
  for (const auto i : shown) {
    const auto& p = o.plans[i];
    push_memory_bars(bars, plan_label(o, i), p.memory, {{"stage", p.peak_stage}});
    capacity.push_back({{"row", plan_label(o, i)},
                        {"capacity_gib", num(in_gib(p.memory_capacity_bytes))},
                        {"headroom_gib", num(in_gib(p.headroom_bytes()))}});
  }
  Json spec = memory_spec("Memory per device of each ranked plan's fullest stage, by kind, against usable capacity, in GiB", std::move(bars),
                          std::move(capacity), plan_axis(rows_json(o, shown)), 560, 22, 18,
                          Json::array({field("row", "nominal", "plan"), field("stage", "quantitative", "pipeline stage"), field("kind", "nominal", "kind"),
                                       field("gib", "quantitative", "GiB", kFormat), field("total_gib", "quantitative", "stage total (GiB)", kFormat)}),
                          Json::array({field("row", "nominal", "plan"), field("capacity_gib", "quantitative", "usable capacity (GiB)", kFormat),
                                       field("headroom_gib", "quantitative", "headroom (GiB)", kFormat)}));
  return {"memory", "Memory by kind against capacity",
          "Peak memory of one device of each plan's fullest pipeline stage, by kind (mixed-precision weights, gradients, "
          "optimizer state, saved activations, buffers), in GiB (2^30 bytes), from the search's memory model "
          "(strategies::memory_per_stage); the black tick is the usable capacity per device (capacity less the runtime reserve).",
          std::move(spec)};
}

HtmlChart search_pareto_chart(const HtmlSearch& s) {
  const auto& o = outcome_of(s);
  // The front is of the simulated plans, so they are the points; with none simulated, the estimates.
  bool any_simulated = false;
  for (const auto& p : o.plans) any_simulated = any_simulated || p.ranked_by() != search::Fidelity::Estimate;
  Json values = Json::array();
  std::size_t points = 0;
  for (std::size_t i = 0; i < o.plans.size(); ++i) {
    const auto& p = o.plans[i];
    if (any_simulated && p.ranked_by() == search::Fidelity::Estimate) continue;
    if (points >= s.pareto_points && !p.pareto) continue;
    ++points;
    values.push_back({{"row", plan_label(o, i)},
                      {"rank", i + 1},
                      {"step_time_s", num(p.best().step_time_s)},
                      {"peak_gib", num(in_gib(p.memory.total_bytes()))},
                      {"devices", p.candidate.devices},
                      {"status", p.pareto ? "on the Pareto front" : "dominated"},
                      {"front_label", p.pareto ? Json("#" + std::to_string(i + 1)) : Json("")}});
  }
  const std::size_t shown = values.size();
  Json spec = pareto_spec("Pareto front of the search: step time, peak memory per device and device count", std::move(values),
                          {"on the Pareto front", "dominated"}, {"diamond", "circle"}, 80,
                          Json::array({field("row", "nominal", "plan"), field("step_time_s", "quantitative", "step time (s)", kFormat),
                                       field("peak_gib", "quantitative", "peak memory per device (GiB)", kFormat),
                                       field("devices", "quantitative", "devices"), field("status", "nominal", "status")}));
  std::string caption = std::string("Each ") + (any_simulated ? "simulated" : "estimated") +
                        " plan's step time against its peak memory per device, coloured by device count. Diamonds, named by rank, are on "
                        "the Pareto front: no other plan is as fast, as small and as few devices at once while better in one of the three.";
  if (shown < o.plans.size())
    caption += " " + std::to_string(shown) + " of the " + std::to_string(o.plans.size()) + " ranked plans are shown" +
               (any_simulated ? " (those simulated, whose figures the front is judged on)." : ".");
  return {"pareto", "Pareto front: step time, memory, devices", caption, std::move(spec)};
}

HtmlSweep sweep_from_points(std::span<const SweepChanges> changes, std::span<const sim::Result> results) {
  PARASIM_CHECK(changes.size() == results.size(), "a sweep needs the swept values of each result");
  HtmlSweep sweep;
  if (changes.empty()) return sweep;
  const SweepChanges& first = changes.front();
  PARASIM_CHECK(!first.empty(), "a sweep point sets at least one field");
  for (const auto& c : changes) {
    PARASIM_CHECK(c.size() == first.size(), "every sweep point sets the same fields");
    for (std::size_t k = 0; k < c.size(); ++k) PARASIM_CHECK(c[k].first == first[k].first, "every sweep point sets the same fields");
  }
  std::vector<std::vector<nlohmann::json>> parsed(changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i)
    for (const auto& [key, text] : changes[i]) {
      auto v = nlohmann::json::parse(text, nullptr, false);
      parsed[i].push_back(v.is_discarded() ? nlohmann::json(text) : std::move(v));
    }
  // The x axis: the first field with numbers only, so a curve has a quantitative axis when it can.
  std::size_t axis = 0;
  for (std::size_t k = 0; k < first.size(); ++k) {
    bool numbers = true;
    for (const auto& p : parsed) numbers = numbers && p[k].is_number();
    if (numbers) {
      axis = k;
      break;
    }
  }
  const auto text_of = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  sweep.parameter = first[axis].first;
  for (std::size_t k = 0; k < first.size(); ++k)
    if (k != axis) sweep.series_parameter += (sweep.series_parameter.empty() ? "" : ", ") + first[k].first;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    HtmlSweepPoint point;
    point.value = text_of(parsed[i][axis]);
    if (parsed[i][axis].is_number()) point.number = parsed[i][axis].get<double>();
    for (std::size_t k = 0; k < first.size(); ++k)
      if (k != axis)
        point.series += (point.series.empty() ? "" : ", ") + (first.size() == 2 ? std::string() : first[k].first + "=") + text_of(parsed[i][k]);
    point.result = results[i];
    sweep.points.push_back(std::move(point));
  }
  return sweep;
}

}  // namespace parasim::reports
