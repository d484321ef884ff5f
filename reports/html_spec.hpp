#pragma once
/// Small pieces the chart builders of report.html share (reports/html_charts.cpp,
/// reports/html_search.cpp): how a figure is written into a Vega-Lite spec, field definitions for
/// encodings and tooltips, and the spec's header.
#include <cmath>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/result_json.hpp"

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
  return x == 0 ? 0.0 : sim::round_significant(x, 6);  // -0 prints as 0
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
