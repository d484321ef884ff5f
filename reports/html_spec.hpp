#pragma once
/// Small pieces the chart builders of report.html share (reports/html_charts.cpp,
/// reports/html_search.cpp): how a figure is written into a Vega-Lite spec, field definitions for
/// encodings and tooltips, the spec's header, and the two charts both reports draw (memory by kind,
/// the Pareto front).
#include <cmath>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "common/format.hpp"
#include "sim/result_json.hpp"
#include "strategies/memory.hpp"

namespace parasim::reports::html_spec {

using Json = nlohmann::ordered_json;

inline constexpr const char* kSchema = "https://vega.github.io/schema/vega-lite/v6.json";
/// d3-format for figures in tooltips and axes: 4 significant digits, thousands grouped, no exponent.
inline constexpr const char* kFormat = ",.4~r";
inline constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

/// A figure as the spec holds it: 6 significant digits are more than a chart can show, and keep the
/// page small; the rounding is deterministic, so the same figures give the same bytes. Not finite:
/// null (Vega leaves the datum out).
inline Json num(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x == 0 ? 0.0 : round_significant(x, 6);  // -0 prints as 0
}

inline double in_gib(double bytes) { return bytes / kBytesPerGib; }

inline Json strings(std::span<const std::string> values) {
  Json a = Json::array();
  for (const auto& v : values) a.push_back(v);
  return a;
}

inline Json base_spec(const std::string& description) {
  Json spec;
  spec["$schema"] = kSchema;
  spec["description"] = description;
  return spec;
}

/// A field definition: {"field", "type", "title"} and the d3 format when given.
inline Json field(const std::string& name, const std::string& type, const std::string& title, const std::string& format = "") {
  Json f{{"field", name}, {"type", type}, {"title", title}};
  if (!format.empty()) f["format"] = format;
  return f;
}

/// Memory kinds in the order the memory chart stacks them, and their colours.
inline constexpr const char* kMemoryKinds[] = {"weights", "gradients", "optimizer state", "activations", "buffers"};
inline constexpr const char* kMemoryKindColours[] = {"#4c78a8", "#72b7b2", "#f58518", "#e45756", "#bab0ac"};

/// Appends to `bars` one datum per memory kind of `m` above zero, for the bar of row `row`:
/// row, kind, kind_order, gib, total_gib, then the fields of `extra`.
inline void push_memory_bars(Json& bars, const std::string& row, const strategies::MemoryBreakdown& m, const Json& extra = Json::object()) {
  const double bytes[] = {m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.buffers_bytes};
  for (std::size_t k = 0; k < 5; ++k) {
    if (bytes[k] <= 0) continue;
    Json d = {{"row", row}, {"kind", kMemoryKinds[k]}, {"kind_order", k}, {"gib", num(in_gib(bytes[k]))}, {"total_gib", num(in_gib(m.total_bytes()))}};
    for (const auto& [key, value] : extra.items()) d[key] = value;
    bars.push_back(std::move(d));
  }
}

/// The memory-by-kind chart both reports draw: per row (`y`), a bar stacked by kind from `bars`
/// (push_memory_bars) and a black tick at the usable capacity from `capacity` (row, capacity_gib).
inline Json memory_spec(const std::string& description, Json bars, Json capacity, const Json& y, int width, int row_step, int tick_size,
                        Json bar_tooltip, Json tick_tooltip) {
  Json spec = base_spec(description);
  spec["width"] = width;
  spec["height"] = Json{{"step", row_step}};
  Json bar_layer;
  bar_layer["data"] = {{"values", std::move(bars)}};
  bar_layer["mark"] = {{"type", "bar"}};
  Json domain = Json::array(), range = Json::array();
  for (std::size_t k = 0; k < 5; ++k) {
    domain.push_back(kMemoryKinds[k]);
    range.push_back(kMemoryKindColours[k]);
  }
  bar_layer["encoding"] = {
      {"y", y},
      {"x", {{"field", "gib"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "GiB per device"}}},
      {"color",
       {{"field", "kind"}, {"type", "nominal"}, {"scale", {{"domain", domain}, {"range", range}}}, {"legend", {{"orient", "bottom"}}}, {"title", "memory kind"}}},
      {"order", {{"field", "kind_order"}, {"type", "quantitative"}}},
      {"tooltip", std::move(bar_tooltip)}};
  Json tick_layer;
  tick_layer["data"] = {{"values", std::move(capacity)}};
  tick_layer["mark"] = {{"type", "tick"}, {"color", "#000000"}, {"thickness", 3}, {"size", tick_size}};
  tick_layer["encoding"] = {{"y", y}, {"x", {{"field", "capacity_gib"}, {"type", "quantitative"}}}, {"tooltip", std::move(tick_tooltip)}};
  spec["layer"] = {bar_layer, tick_layer};
  return spec;
}

/// The Pareto-front chart both reports draw (reports/html_charts.cpp for results,
/// reports/html_search.cpp for a search): `values` hold step_time_s, peak_gib, devices, status and
/// front_label per point; points coloured by device count, shaped by `statuses` (in that order,
/// drawn as `shapes`), the front's points named beside them.
inline Json pareto_spec(const std::string& description, Json values, const Json& statuses, const Json& shapes, int point_size,
                        Json tooltip) {
  const Json x = {{"field", "step_time_s"}, {"type", "quantitative"}, {"scale", {{"zero", false}, {"padding", 16}}}, {"axis", {{"format", kFormat}}},
                  {"title", "step time (s)"}};
  const Json y = {{"field", "peak_gib"}, {"type", "quantitative"}, {"scale", {{"zero", false}, {"padding", 16}}}, {"axis", {{"format", kFormat}}},
                  {"title", "peak memory per device (GiB)"}};
  Json spec = base_spec(description);
  spec["width"] = 640;
  spec["height"] = 360;
  spec["data"] = {{"values", std::move(values)}};
  Json points;
  points["mark"] = {{"type", "point"}, {"filled", true}, {"size", point_size}, {"opacity", 0.85}};
  points["encoding"] = {
      {"x", x},
      {"y", y},
      {"color", {{"field", "devices"}, {"type", "ordinal"}, {"scale", {{"scheme", "viridis"}}}, {"title", "devices"}}},
      {"shape", {{"field", "status"}, {"type", "nominal"}, {"scale", {{"domain", statuses}, {"range", shapes}}}, {"title", "plan"}}},
      {"tooltip", std::move(tooltip)}};
  Json text;
  text["mark"] = {{"type", "text"}, {"align", "left"}, {"dx", 8}, {"fontSize", 11}};
  text["encoding"] = {{"x", x}, {"y", y}, {"text", {{"field", "front_label"}}}};
  spec["layer"] = {points, text};
  return spec;
}

}  // namespace parasim::reports::html_spec
