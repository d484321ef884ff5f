#include "reports/html_charts.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "reports/comparison.hpp"
#include "reports/format.hpp"
#include "reports/html_spec.hpp"
#include "sim/local_update.hpp"

namespace parasim::reports {
namespace {

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

constexpr double kPsPerMs = 1e9;
/// Above this many bars the memory chart shows each result's peak stage only.
constexpr std::size_t kMaxMemoryBars = 40;

bool is_communication(sim::Category c) {
  return c == sim::Category::TensorComm || c == sim::Category::PipelineComm || c == sim::Category::GradientComm ||
         c == sim::Category::ExpertComm;
}

/// The colour of each category, the same in every chart: compute in blues, exposed communication in
/// warm colours, data loading green, idle grey (Vega's "tableau10" hues).
const char* colour(sim::Category c) {
  switch (c) {
    case sim::Category::Forward: return "#4c78a8";
    case sim::Category::Backward: return "#72b7b2";
    case sim::Category::Recompute: return "#9ecae9";
    case sim::Category::Optimizer: return "#1f4e79";
    case sim::Category::TensorComm: return "#e45756";
    case sim::Category::PipelineComm: return "#f58518";
    case sim::Category::GradientComm: return "#b279a2";
    case sim::Category::ExpertComm: return "#ff9da6";
    case sim::Category::DataLoad: return "#54a24b";
  }
  return "#4c78a8";
}
constexpr const char* kIdleColour = "#bab0ac";
constexpr const char* kIdlePart = "idle (pipeline bubble and waiting)";

std::string part_name(sim::Category c) {
  std::string name(sim::to_string(c));
  return is_communication(c) ? name + " (exposed)" : name;
}

std::string group_of(sim::Category c) {
  if (c == sim::Category::DataLoad) return "data loading";
  return is_communication(c) ? "exposed communication" : "compute";
}

Json tooltip(std::initializer_list<Json> fields) { return Json(fields); }

void check_labels(std::span<const sim::Result> results, std::span<const std::string> labels) {
  PARASIM_CHECK(labels.size() == results.size(), "a chart needs one label per result");
}

}  // namespace

std::vector<std::string> result_labels(std::span<const sim::Result> results) {
  bool one_scenario = true;
  for (const auto& r : results) one_scenario = one_scenario && r.scenario == results.front().scenario;
  std::vector<std::string> labels;
  std::set<std::string> taken;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::string label = r.variant.empty() ? "result " + std::to_string(i + 1) : r.variant;
    if (!one_scenario) label = r.scenario + " · " + label;
    std::string unique = label;
    for (int n = 2; taken.count(unique) > 0; ++n) unique = label + " #" + std::to_string(n);
    taken.insert(unique);
    labels.push_back(std::move(unique));
  }
  return labels;
}

std::vector<bool> pareto_optimal(std::span<const sim::Result> results) {
  std::vector<bool> optimal(results.size(), false);
  const auto no_worse = [](const sim::Result& a, const sim::Result& b) {
    return sim::time_per_step_s(a) <= sim::time_per_step_s(b) && peak_memory_bytes(a) <= peak_memory_bytes(b) &&
           sim::devices_in_run(a) <= sim::devices_in_run(b);
  };
  const auto better_somewhere = [](const sim::Result& a, const sim::Result& b) {
    return sim::time_per_step_s(a) < sim::time_per_step_s(b) || peak_memory_bytes(a) < peak_memory_bytes(b) ||
           sim::devices_in_run(a) < sim::devices_in_run(b);
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].fits) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < results.size() && !dominated; ++j)
      dominated = j != i && results[j].fits && no_worse(results[j], results[i]) && better_somewhere(results[j], results[i]);
    optimal[i] = !dominated;
  }
  return optimal;
}

HtmlChart ranking_chart(std::span<const sim::Result> results, std::span<const std::string> labels, const HtmlRanking& ranking) {
  check_labels(results, labels);
  PARASIM_CHECK(ranking.scores.size() == results.size(), "a ranking needs one score per result");
  std::vector<std::string> rows;
  Json values = Json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    rows.push_back("#" + std::to_string(i + 1) + " " + labels[i]);
    values.push_back({{"row", rows.back()},
                      {"rank", i + 1},
                      {"plan", r.plan},
                      {"score", num(ranking.scores[i])},
                      {"step_time_s", num(r.step_time_s)},
                      {"tokens_per_s", num(r.tokens_per_s)},
                      {"peak_gib", num(in_gib(peak_memory_bytes(r)))},
                      {"memory", r.fits ? "fits" : "does not fit"}});
  }
  const std::string x_title = ranking.objective + " (" + ranking.unit + ")";
  Json spec = base_spec("Ranked plans by " + ranking.objective);
  spec["width"] = 640;
  spec["height"] = Json{{"step", 22}};
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "row"}, {"type", "nominal"}, {"sort", strings(rows)}, {"title", "rank"}, {"axis", {{"labelLimit", 360}}}}},
      {"x", {{"field", "score"}, {"type", "quantitative"}, {"title", x_title}}},
      {"color",
       {{"field", "memory"},
        {"type", "nominal"},
        {"scale", {{"domain", {"fits", "does not fit"}}, {"range", {"#4c78a8", "#e45756"}}}},
        {"title", "memory"}}},
      {"tooltip", tooltip({field("rank", "ordinal", "rank"), field("plan", "nominal", "plan"),
                           field("score", "quantitative", x_title, kFormat), field("step_time_s", "quantitative", "step time (s)", kFormat),
                           field("tokens_per_s", "quantitative", "throughput (tokens/s)", kFormat),
                           field("peak_gib", "quantitative", "peak memory per device (GiB)", kFormat),
                           field("memory", "nominal", "memory")})}};
  return {"ranking", "Ranked plans",
          "Plans in rank order by " + ranking.objective + " (" + ranking.unit +
              "); red bars do not fit in device memory. Hover a bar for its plan, step time, throughput and peak memory.",
          std::move(spec)};
}

HtmlChart breakdown_chart(std::span<const sim::Result> results, std::span<const std::string> labels) {
  check_labels(results, labels);
  // The parts in display order; a part no result has is left out of the legend.
  std::vector<std::string> parts, colours;
  Json values = Json::array();
  std::vector<bool> present(sim::kCategoryCount + 1, false);
  for (const auto& r : results) {
    for (int c = 0; c < sim::kCategoryCount; ++c) present[static_cast<std::size_t>(c)] = present[static_cast<std::size_t>(c)] || r.breakdown.seconds[static_cast<std::size_t>(c)] > 0;
    present[sim::kCategoryCount] = present[sim::kCategoryCount] || r.breakdown.idle_s > 0;
  }
  for (int c = 0; c < sim::kCategoryCount; ++c)
    if (present[static_cast<std::size_t>(c)]) {
      parts.push_back(part_name(static_cast<sim::Category>(c)));
      colours.emplace_back(colour(static_cast<sim::Category>(c)));
    }
  if (present[sim::kCategoryCount]) {
    parts.emplace_back(kIdlePart);
    colours.emplace_back(kIdleColour);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const auto add = [&](const std::string& part, const std::string& group, double seconds) {
      if (seconds <= 0) return;
      const auto order = std::find(parts.begin(), parts.end(), part) - parts.begin();
      values.push_back({{"result", labels[i]},
                        {"part", part},
                        {"part_order", order},
                        {"group", group},
                        {"seconds", num(seconds)},
                        {"share", num(r.step_time_s > 0 ? seconds / r.step_time_s : 0.0)}});
    };
    for (int c = 0; c < sim::kCategoryCount; ++c) {
      const auto cat = static_cast<sim::Category>(c);
      add(part_name(cat), group_of(cat), r.breakdown.seconds[static_cast<std::size_t>(c)]);
    }
    add(kIdlePart, "pipeline bubble", r.breakdown.idle_s);
  }
  Json spec = base_spec("Step-time breakdown, mean over devices, in seconds");
  spec["width"] = 640;
  spec["height"] = Json{{"step", 28}};
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "result"}, {"type", "nominal"}, {"sort", strings(labels)}, {"title", nullptr}, {"axis", {{"labelLimit", 300}}}}},
      {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "seconds per step (mean over devices)"}}},
      {"color",
       {{"field", "part"},
        {"type", "nominal"},
        {"scale", {{"domain", strings(parts)}, {"range", strings(colours)}}},
        {"legend", {{"orient", "bottom"}, {"columns", 3}, {"labelLimit", 260}}},
        {"title", "part of the step"}}},
      {"order", {{"field", "part_order"}, {"type", "quantitative"}}},
      {"tooltip", tooltip({field("result", "nominal", "result"), field("part", "nominal", "part"), field("group", "nominal", "kind"),
                           field("seconds", "quantitative", "seconds", kFormat), field("share", "quantitative", "share of the step", ".1%")})}};
  return {"breakdown", "Where the step time goes",
          "Mean time per device of one training step, split into compute (forward, backward, recompute, optimizer), "
          "data loading, communication the compute stream waits on (exposed, by kind), and idle time (the pipeline "
          "bubble and waiting); each bar sums to the step time.",
          std::move(spec)};
}

HtmlChart memory_chart(std::span<const sim::Result> results, std::span<const std::string> labels) {
  check_labels(results, labels);
  std::size_t stage_bars = 0;
  for (const auto& r : results) stage_bars += r.memory.size();
  const bool every_stage = stage_bars <= kMaxMemoryBars;
  std::vector<std::string> rows;
  Json bars = Json::array(), capacity = Json::array();
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    for (const auto& s : r.memory) {
      if (!every_stage && s.stage != r.peak_memory_stage) continue;
      rows.push_back(labels[i] + " · stage " + std::to_string(s.stage));
      push_memory_bars(bars, rows.back(), s.memory);
      capacity.push_back({{"row", rows.back()}, {"capacity_gib", num(in_gib(r.memory_capacity_bytes))}, {"memory", r.fits ? "fits" : "does not fit"}});
    }
  }
  const Json y = {{"field", "row"}, {"type", "nominal"}, {"sort", strings(rows)}, {"title", nullptr}, {"axis", {{"labelLimit", 300}}}};
  Json spec = memory_spec("Memory per device by kind against usable capacity, in GiB", std::move(bars), std::move(capacity), y, 640, 24, 20,
                          tooltip({field("row", "nominal", "stage"), field("kind", "nominal", "kind"), field("gib", "quantitative", "GiB", kFormat),
                                   field("total_gib", "quantitative", "stage total (GiB)", kFormat)}),
                          tooltip({field("row", "nominal", "stage"), field("capacity_gib", "quantitative", "usable capacity (GiB)", kFormat),
                                   field("memory", "nominal", "memory")}));
  return {"memory", "Memory by kind against capacity",
          std::string(every_stage ? "Peak memory of one device of each pipeline stage"
                                  : "Peak memory of one device of each result's fullest pipeline stage") +
              ", by kind (mixed-precision weights, gradients, optimizer state, saved activations, buffers), in GiB (2^30 bytes); "
              "the black tick is the usable capacity per device (capacity less the runtime reserve).",
          std::move(spec)};
}

HtmlChart pareto_chart(std::span<const sim::Result> results, std::span<const std::string> labels) {
  check_labels(results, labels);
  const auto optimal = pareto_optimal(results);
  // Every point carries its number (its column in the comparison table), short enough not to run
  // into its neighbours where a sweep's points crowd together; the caption says which is which.
  Json values = Json::array();
  bool any_unfit = false, any_dominated = false;
  std::string key;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const std::string status = !r.fits ? "does not fit" : optimal[i] ? "on the Pareto front" : "dominated";
    any_unfit = any_unfit || !r.fits;
    any_dominated = any_dominated || status == "dominated";
    values.push_back({{"result", labels[i]},
                      {"plan", r.plan},
                      {"step_time_s", num(sim::time_per_step_s(r))},
                      {"peak_gib", num(in_gib(peak_memory_bytes(r)))},
                      {"devices", sim::devices_in_run(r)},
                      {"status", status},
                      {"front_label", std::to_string(i + 1)}});
    key += (key.empty() ? "" : "; ") + std::to_string(i + 1) + " " + labels[i];
  }
  // The legend names only the kinds of point drawn.
  Json statuses = Json::array({"on the Pareto front"}), shapes = Json::array({"diamond"});
  if (any_dominated) {
    statuses.push_back("dominated");
    shapes.push_back("circle");
  }
  if (any_unfit) {
    statuses.push_back("does not fit");
    shapes.push_back("cross");
  }
  Json spec = pareto_spec("Pareto front of step time, peak memory per device and device count", std::move(values), statuses, shapes, 90,
                          tooltip({field("result", "nominal", "result"), field("plan", "nominal", "plan"),
                                   field("step_time_s", "quantitative", "step time (s)", kFormat),
                                   field("peak_gib", "quantitative", "peak memory per device (GiB)", kFormat),
                                   field("devices", "quantitative", "devices"), field("status", "nominal", "status")}));
  return {"pareto", "Pareto front: step time, memory, devices",
          "Each result's step time (a local update's per inner step, its synchronisation included) against its peak memory per device, coloured by device count, "
          "numbered as the comparison's columns (" + key + "). Diamonds are on the Pareto front: they fit, and no other fitting result is as fast, as small "
          "and as few devices at once while better in one of the three.",
          std::move(spec)};
}

HtmlChart local_update_chart(std::span<const sim::Result> results, std::span<const std::string> labels) {
  check_labels(results, labels);
  const char* const metrics[] = {"time per step, synchronisation included (s)", "WAN bytes per step (GB)", "compute utilisation (%)"};
  std::vector<std::string> rows;
  Json values = Json::array();
  auto add = [&](const std::string& row, const std::string& kind, double step_s, double wan_bytes, std::optional<double> utilisation) {
    rows.push_back(row);
    const std::optional<double> amounts[] = {step_s, wan_bytes / 1e9, utilisation ? std::optional<double>(*utilisation * 100) : std::nullopt};
    for (std::size_t m = 0; m < 3; ++m)
      if (amounts[m]) values.push_back({{"row", row}, {"kind", kind}, {"metric", metrics[m]}, {"amount", num(*amounts[m])}});
  };
  std::vector<double> synchronous_seen;
  bool any = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const sim::Result& r = results[i];
    if (!r.local_update) {
      add(labels[i], "synchronous", r.step_time_s, sim::wan_bytes(r), std::nullopt);
      continue;
    }
    any = true;
    const sim::LocalUpdateFigures& l = *r.local_update;
    add(labels[i], l.algorithm, l.time_per_inner_step_s, l.wan_bytes_per_inner_step, l.compute_utilisation);
    // The synchronous run it was compared with, once per distinct one.
    if (std::find(synchronous_seen.begin(), synchronous_seen.end(), l.sync_step_s) == synchronous_seen.end()) {
      synchronous_seen.push_back(l.sync_step_s);
      add("synchronous DP on " + labels[i] + "'s devices", "synchronous", l.sync_step_s, l.sync_wan_bytes_per_step, std::nullopt);
    }
  }
  PARASIM_CHECK(any, "a local-update chart needs a local-update result");
  Json spec = base_spec("Local-update training against synchronous data parallelism");
  spec["data"] = {{"values", values}};
  spec["facet"] = {{"column", {{"field", "metric"}, {"type", "nominal"}, {"sort", {metrics[0], metrics[1], metrics[2]}}, {"title", nullptr}}}};
  spec["spec"] = {
      {"width", 220},
      {"height", Json{{"step", 20}}},
      {"mark", {{"type", "bar"}}},
      {"encoding",
       {{"y", {{"field", "row"}, {"type", "nominal"}, {"sort", strings(rows)}, {"title", nullptr}, {"axis", {{"labelLimit", 280}}}}},
        {"x", {{"field", "amount"}, {"type", "quantitative"}, {"title", nullptr}, {"axis", {{"format", kFormat}}}}},
        {"color", {{"field", "kind"}, {"type", "nominal"}, {"title", "training"}}},
        {"tooltip", tooltip({field("row", "nominal", "result"), field("metric", "nominal", "figure"), field("amount", "quantitative", "value", kFormat)})}}}};
  spec["resolve"] = {{"scale", {{"x", "independent"}}}};
  return {"local-update", "Local-update training against synchronous data parallelism",
          "Each result's time per step with its synchronisation (a local update's outer step over its inner steps), the bytes it sends over "
          "the WAN per step, and the share of the outer step its replicas compute; the synchronous data-parallel run on the same devices, "
          "simulated beside each local update, for comparison.",
          std::move(spec)};
}

HtmlChart sweep_chart(const HtmlSweep& sweep, std::size_t index) {
  bool numeric = !sweep.points.empty();
  bool series = false;
  for (const auto& p : sweep.points) {
    numeric = numeric && p.number.has_value();
    series = series || !p.series.empty();
  }
  // Throughput in tokens for sequence models, in samples for the others (an image is no token).
  const bool tokens = std::any_of(sweep.points.begin(), sweep.points.end(), [](const HtmlSweepPoint& p) { return p.result.tokens_per_s != p.result.samples_per_s; });
  const char* const metrics[] = {"step time (s)", tokens ? "throughput (tokens/s)" : "throughput (samples/s)", "peak memory per device (GiB)"};
  std::vector<std::string> order, series_order;
  Json values = Json::array();
  for (const auto& p : sweep.points) {
    if (std::find(order.begin(), order.end(), p.value) == order.end()) order.push_back(p.value);
    if (!p.series.empty() && std::find(series_order.begin(), series_order.end(), p.series) == series_order.end()) series_order.push_back(p.series);
    // A local update's step is its time per inner step with the synchronisation, its throughput
    // every replica's (the Result's own are one replica's inner step).
    const auto& l = p.result.local_update;
    // (An image model counts a sample as its one token, so a local update's tokens are its samples.)
    const double throughput = l ? l->tokens_per_s : tokens ? p.result.tokens_per_s : p.result.samples_per_s;
    const double amounts[] = {sim::time_per_step_s(p.result), throughput, in_gib(peak_memory_bytes(p.result))};
    for (std::size_t m = 0; m < 3; ++m)
      values.push_back({{"value", numeric ? num(*p.number) : Json(p.value)},
                        {"value_text", p.value},
                        {"series", p.series},
                        {"metric", metrics[m]},
                        {"amount", num(amounts[m])},
                        {"memory", p.result.fits ? "fits" : "does not fit"}});
  }
  Json x = {{"field", "value"}, {"type", numeric ? "quantitative" : "ordinal"}, {"title", sweep.parameter}};
  if (!numeric) x["sort"] = strings(order);
  else x["scale"] = {{"zero", false}};
  Json encoding = {
      {"x", x},
      {"y", {{"field", "amount"}, {"type", "quantitative"}, {"scale", {{"zero", false}}}, {"axis", {{"format", kFormat}}}, {"title", nullptr}}},
      {"tooltip", tooltip({field("value_text", "nominal", sweep.parameter), field("series", "nominal", sweep.series_parameter.empty() ? "series" : sweep.series_parameter),
                           field("metric", "nominal", "figure"), field("amount", "quantitative", "value", kFormat),
                           field("memory", "nominal", "memory")})}};
  if (series) {
    // Numbers in numeric order (25, 100, 200), not as text (100, 200, 25); the legend at the bottom,
    // where a long parameter name has the width of the chart.
    const bool numbers = std::all_of(series_order.begin(), series_order.end(), [](const std::string& v) {
      char* end = nullptr;
      std::strtod(v.c_str(), &end);
      return !v.empty() && end && *end == '\0';
    });
    if (numbers)
      std::sort(series_order.begin(), series_order.end(), [](const std::string& a, const std::string& b) { return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr); });
    encoding["color"] = {{"field", "series"},
                         {"type", "nominal"},
                         {"sort", strings(series_order)},
                         {"legend", {{"orient", "bottom"}, {"titleLimit", 600}, {"labelLimit", 300}}},
                         {"title", sweep.series_parameter.empty() ? "series" : sweep.series_parameter}};
  }
  Json spec = base_spec("Sweep of " + sweep.parameter + ": step time, throughput and peak memory");
  spec["data"] = {{"values", values}};
  spec["facet"] = {{"column", {{"field", "metric"}, {"type", "nominal"}, {"sort", {metrics[0], metrics[1], metrics[2]}}, {"title", nullptr}}}};
  spec["spec"] = {{"width", 220}, {"height", 180}, {"mark", {{"type", "line"}, {"point", true}}}, {"encoding", encoding}};
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};
  return {"sweep-" + std::to_string(index + 1), "Sweep: " + sweep.parameter,
          "Every point of the sweep simulated: step time, throughput and peak memory per device against " + sweep.parameter +
              (series ? ", one curve per " + (sweep.series_parameter.empty() ? std::string("series") : sweep.series_parameter) : std::string()) + ".",
          std::move(spec)};
}

HtmlChart timeline_chart(const PipelineTimeline& timeline, const std::string& of, bool measured) {
  std::vector<std::string> categories, colours;
  std::vector<bool> present(sim::kCategoryCount, false);
  for (const auto& b : timeline.bars) present[static_cast<std::size_t>(b.category)] = true;
  for (int c = 0; c < sim::kCategoryCount; ++c)
    if (present[static_cast<std::size_t>(c)]) {
      categories.emplace_back(sim::to_string(static_cast<sim::Category>(c)));
      colours.emplace_back(colour(static_cast<sim::Category>(c)));
    }
  Json values = Json::array();
  for (const auto& b : timeline.bars) {
    std::string parts;
    for (std::size_t c = 0; c < b.busy_ps.size(); ++c)
      if (b.busy_ps[c] > 0)
        parts += (parts.empty() ? "" : " + ") + std::string(sim::to_string(static_cast<sim::Category>(c))) + " " +
                 significant(static_cast<double>(b.busy_ps[c]) / kPsPerMs, 4) + " ms";
    values.push_back({{"row_index", b.row},
                      {"start_ms", num(static_cast<double>(b.start_ps) / kPsPerMs)},
                      {"end_ms", num(static_cast<double>(b.end_ps) / kPsPerMs)},
                      {"category", std::string(sim::to_string(b.category))},
                      {"micro_batch", b.micro_batch >= 0 ? Json(b.micro_batch) : Json(nullptr)},
                      {"tasks", b.tasks},
                      {"busy", parts}});
  }
  Json spec = base_spec("Pipeline timeline of one step of " + of);
  // 760 wide with labels of up to 200 px: inside its card on a 1280 px window.
  spec["width"] = 760;
  spec["height"] = Json{{"step", 16}};
  spec["data"] = {{"values", values}};
  // Bars name their row by index and look its name up once, which keeps thousands of bars small.
  Json rows = Json::array();
  for (std::size_t i = 0; i < timeline.rows.size(); ++i) rows.push_back({{"row_index", i}, {"row", timeline.rows[i]}});
  Json lookup;
  lookup["lookup"] = "row_index";
  lookup["from"] = {{"data", {{"values", rows}}}, {"key", "row_index"}, {"fields", {"row"}}};
  spec["transform"] = Json::array({lookup});
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"y", {{"field", "row"}, {"type", "nominal"}, {"sort", strings(timeline.rows)}, {"title", nullptr}, {"axis", {{"labelLimit", 200}}}}},
      {"x", {{"field", "start_ms"}, {"type", "quantitative"}, {"title", "time in the step (ms)"},
             {"scale", {{"domain", {0, num(static_cast<double>(timeline.step_ps) / kPsPerMs)}}}}}},
      {"x2", {{"field", "end_ms"}}},
      {"color",
       {{"field", "category"},
        {"type", "nominal"},
        {"scale", {{"domain", strings(categories)}, {"range", strings(colours)}}},
        {"legend", {{"orient", "bottom"}, {"columns", 5}}},
        {"title", "task category"}}},
      {"tooltip", tooltip({field("row", "nominal", "stream"), field("micro_batch", "ordinal", "micro-batch"),
                           field("category", "nominal", "mostly"), field("busy", "nominal", "busy"), field("tasks", "quantitative", "tasks"),
                           field("start_ms", "quantitative", "start (ms)", kFormat), field("end_ms", "quantitative", "end (ms)", kFormat)})}};
  std::string caption = std::string(measured ? "The median timed step, as it ran, of " : "One simulated step of ") + of +
                        ": for one device of each pipeline stage, its compute stream and its communication streams; each bar "
                        "is one micro-batch's forward, backward (with its recomputation), or communication, coloured by what kept it busy "
                        "longest (hover for its time by category).";
  if (!timeline.note.empty()) caption += " To keep the page small it is " + timeline.note + ".";
  if (measured) caption += " Each task starts when its last rank started it and ends when its last rank ended it.";
  return {measured ? "timeline-measured" : "timeline", std::string(measured ? "Measured timeline of " : "Pipeline timeline of ") + of, caption, std::move(spec)};
}

}  // namespace parasim::reports
