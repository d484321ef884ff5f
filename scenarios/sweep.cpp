#include "scenarios/sweep.hpp"

#include <cmath>
#include <filesystem>
#include <map>

#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "scenarios/decode.hpp"
#include "scenarios/local_update.hpp"
#include "scenarios/model_source.hpp"
#include "scenarios/schema_check.hpp"
#include "scenarios/what_if.hpp"
#include "sim/cluster.hpp"
#include "sim/profile_json.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {
namespace {

using nlohmann::json;

/// `x` to 12 significant digits, so that from + k·step prints as written (0.1 + 2·0.1 → 0.3).
double tidy(double x) { return round_to_digits(x, 12); }

bool integral(const json& v) { return v.is_number_integer() || (v.is_number() && std::trunc(v.get<double>()) == v.get<double>()); }

/// The values of a range object at `pointer`.
std::vector<json> range_values(const JsonDocument& doc, const std::string& pointer, const json& range) {
  const std::vector<std::string> keys{"from", "to", "step", "times"};
  for (const auto& item : range.items()) {
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end())
      throw doc.error_at_key(json_pointer_append(pointer, item.key()),
                             "unknown key \"" + item.key() + "\"" + did_you_mean(item.key(), keys) +
                                 "; a range is {\"from\", \"to\", \"step\"} or {\"from\", \"to\", \"times\"}");
    if (!item.value().is_number() || !std::isfinite(item.value().get<double>()))
      throw doc.error_at(json_pointer_append(pointer, item.key()), "found " + describe_json_value(item.value()) + ", expected a number");
  }
  for (const char* required : {"from", "to"})
    if (!range.contains(required)) throw doc.error_at(pointer, std::string("missing required key \"") + required + "\" of the range");
  const bool has_step = range.contains("step"), has_times = range.contains("times");
  if (has_step == has_times)
    throw doc.error_at(pointer, has_step ? "found both \"step\" and \"times\", expected exactly one of them"
                                         : "missing \"step\" (arithmetic range) or \"times\" (geometric range)");
  const double from = range["from"].get<double>(), to = range["to"].get<double>();
  if (to < from) throw doc.error_at(json_pointer_append(pointer, "to"), "found " + range["to"].dump() + ", expected a number >= from (" +
                                                                            range["from"].dump() + ")");
  std::vector<json> out;
  const bool ints = integral(range["from"]) && integral(range[has_step ? "step" : "times"]);
  auto push = [&](double v) {
    if (out.size() >= kMaxSweepPoints)
      throw doc.error_at(pointer, "the range has more than " + std::to_string(kMaxSweepPoints) + " values");
    if (ints) out.emplace_back(static_cast<std::int64_t>(std::llround(v)));
    else out.emplace_back(tidy(v));
  };
  // A relative slack so that a range whose end is reached up to rounding still includes it.
  const double slack = 1e-9 * std::max(1.0, std::fabs(to));
  if (has_step) {
    const double step = range["step"].get<double>();
    if (!(step > 0)) throw doc.error_at(json_pointer_append(pointer, "step"), "found " + range["step"].dump() + ", expected a number > 0");
    for (std::int64_t k = 0;; ++k) {
      const double v = from + static_cast<double>(k) * step;
      if (v > to + slack) break;
      push(v);
    }
  } else {
    const double times = range["times"].get<double>();
    if (!(times > 1)) throw doc.error_at(json_pointer_append(pointer, "times"), "found " + range["times"].dump() + ", expected a number > 1");
    if (!(from > 0)) throw doc.error_at(json_pointer_append(pointer, "from"), "found " + range["from"].dump() +
                                                                                 ", expected a number > 0 (a geometric range multiplies it)");
    for (double v = from; v <= to + slack; v *= times) push(v);
  }
  return out;
}

/// Turns faults at pointers of a point's JSON into InputErrors at the swept values that caused them.
class PointReporter {
 public:
  PointReporter(const JsonDocument& doc, std::string name, const std::vector<Assignment>& assignments)
      : doc_(doc), name_(std::move(name)), assignments_(assignments) {}

  [[nodiscard]] InputError error(const std::string& pointer, const std::string& message) const {
    const FaultSource source = source_of(assignments_, "/sweep", pointer);
    std::string text = "sweep point \"" + name_ + "\": ";
    if (!source.direct) text += "in the variant, " + (pointer.empty() ? std::string("/") : pointer) + ": ";
    return doc_.error_at(source.pointer, text + message);
  }
  [[nodiscard]] SourceLocation locate(const std::string& pointer) const { return doc_.locate(source_of(assignments_, "/sweep", pointer).pointer); }

 private:
  const JsonDocument& doc_;
  std::string name_;
  const std::vector<Assignment>& assignments_;
};

/// The checks the loader makes of a what-if, for one point.
Scenario check_point(const json& variant, const JsonDocument& doc, const PointReporter& reporter,
                     std::map<std::string, sim::Profile>& profiles) {
  const Locator where = [&reporter](const std::string& pointer, bool) { return reporter.locate(pointer); };
  if (auto fault = check_scenario_structure(variant, where)) throw reporter.error(fault->pointer, fault->message);
  const ErrorAt error_at = [&reporter](const std::string& pointer, const std::string& message) { return reporter.error(pointer, message); };
  Scenario s = decode_scenario(variant, std::filesystem::path(doc.file()).parent_path().string(), error_at);
  s.file = doc.file();
  const sim::Profile* profile = &sim::datasheet_profile();
  if (s.profile) {
    auto it = profiles.find(*s.profile);
    if (it == profiles.end()) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(*s.profile, ec))
        throw reporter.error("/profile", "cannot find the profile file \"" + *s.profile + "\" (paths are relative to the scenario file's folder)");
      it = profiles.emplace(*s.profile, sim::profile_from_json(JsonDocument::read_file(*s.profile))).first;
    }
    profile = &it->second;
  }
  if (auto problem = sim::check_cluster_spec(s.cluster, *profile)) throw reporter.error("/cluster" + problem->pointer, problem->message);
  if (s.local_update)
    if (auto problem = local_update_problem(s)) throw reporter.error(problem->pointer, problem->message);
  // A local update's plan runs on one replica's devices and batch (scenarios/local_update.hpp).
  const Scenario judged = s.local_update ? replica_scenario(s, 0) : s;
  const std::int64_t devices = judged.cluster.device_count();
  const std::int64_t dp = strategies::resolve_dp(judged.plan, devices);
  const std::int64_t batch = std::min(judged.training.micro_batch * dp, judged.training.global_batch);
  std::optional<models::Graph> graph;
  try {
    graph = build_model_graph(s.model, batch, s.file);
  } catch (const InputError& e) {
    if (e.line() != 0 || e.file() != s.file || e.json_pointer().empty()) throw;
    throw reporter.error(e.json_pointer(), e.message());
  }
  if (s.model.source == ModelSource::Graph && graph->batch() != s.training.micro_batch * dp) {
    const std::string n = std::to_string(graph->batch());
    throw reporter.error("/training/micro_batch", "the graph in \"" + s.model.path + "\" is built for a batch of " + n +
                                                      " samples, so micro_batch × dp must be " + n + "; found " +
                                                      std::to_string(judged.training.micro_batch) + " × " + std::to_string(dp) + " = " +
                                                      std::to_string(judged.training.micro_batch * dp));
  }
  if (auto problem = strategies::check_plan(*graph, judged.training, judged.plan, devices)) throw reporter.error(problem->pointer, problem->message);
  return s;
}

}  // namespace

std::string sweep_value_text(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::vector<SweepAxis> sweep_axes(const JsonDocument& doc) {
  std::vector<SweepAxis> axes;
  const auto it = doc.root().find("sweep");
  if (it == doc.root().end()) return axes;
  for (const auto& item : it->items()) {
    SweepAxis axis;
    axis.key = item.key();
    axis.pointer = json_pointer_append("/sweep", item.key());
    if (axis.key == "sweep" || axis.key.rfind("sweep.", 0) == 0 || axis.key == "search" || axis.key.rfind("search.", 0) == 0)
      throw doc.error_at_key(axis.pointer, "\"" + axis.key + "\" cannot be swept: a sweep varies the scenario's own fields");
    if (auto problem = check_field_path(axis.key)) throw doc.error_at_key(axis.pointer, *problem);
    const json& v = item.value();
    if (v.is_array()) {
      if (v.empty()) throw doc.error_at(axis.pointer, "found an empty array, expected at least 1 value");
      for (std::size_t i = 0; i < v.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j)
          if (v[j] == v[i])
            throw doc.error_at(json_pointer_append(axis.pointer, i),
                               "found " + describe_json_value(v[i]) + " again (it is also item " + std::to_string(j) + "), expected each value once");
        axis.values.push_back(v[i]);
      }
    } else if (v.is_object()) {
      axis.range = true;
      axis.values = range_values(doc, axis.pointer, v);
      if (axis.values.empty()) throw doc.error_at(axis.pointer, "the range has no values");
    } else {
      throw doc.error_at(axis.pointer, "found " + describe_json_value(v) +
                                           ", expected a list of values or a range {\"from\", \"to\", \"step\"} / {\"from\", \"to\", \"times\"}");
    }
    axes.push_back(std::move(axis));
  }
  // Keys in file order (nlohmann sorts object keys).
  std::stable_sort(axes.begin(), axes.end(), [&doc](const SweepAxis& a, const SweepAxis& b) {
    const SourceLocation la = doc.locate_key(a.pointer), lb = doc.locate_key(b.pointer);
    return std::tie(la.line, la.column) < std::tie(lb.line, lb.column);
  });
  std::size_t points = 1;
  for (const auto& a : axes) {
    points *= a.values.size();
    if (points > kMaxSweepPoints)
      throw doc.error_at("/sweep", "the sweep has more than " + std::to_string(kMaxSweepPoints) + " points (every combination of its values)");
  }
  return axes;
}

std::vector<Scenario> sweep_points(const JsonDocument& doc, const Scenario& base) {
  const std::vector<SweepAxis> axes = sweep_axes(doc);
  std::vector<Scenario> out;
  if (axes.empty()) return out;
  std::map<std::string, sim::Profile> profiles;
  std::map<std::string, std::string> slugs;  // slug → name, so that no two points share a folder
  std::vector<std::size_t> at(axes.size(), 0);
  while (true) {
    std::vector<Assignment> assignments;
    std::string name;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const SweepAxis& axis = axes[a];
      const json& value = axis.values[at[a]];
      assignments.push_back(Assignment{axis.key, field_pointer(axis.key),
                                       axis.range ? axis.pointer : json_pointer_append(axis.pointer, at[a]), value});
      name += (a ? ", " : "") + axis.key + "=" + sweep_value_text(value);
    }
    const PointReporter reporter(doc, name, assignments);
    Scenario s = check_point(apply_assignments(doc.root(), assignments), doc, reporter, profiles);
    s.name = name;
    s.description.clear();
    s.pointer = "/sweep";
    for (const Assignment& asg : assignments) s.changes.emplace_back(asg.key, asg.value.dump());
    const std::string folder = slug(name);
    if (const auto [it, fresh] = slugs.emplace(folder, name); !fresh)
      throw doc.error_at("/sweep", "sweep points \"" + it->second + "\" and \"" + name + "\" would share the output folder \"" + folder + "\"");
    s.output_dir = base.output_dir + "/" + folder;
    out.push_back(std::move(s));
    // Next combination: the last axis varies fastest.
    std::size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++at[a] < axes[a].values.size()) break;
      at[a] = 0;
      if (a == 0) return out;
    }
  }
}

std::vector<Scenario> load_sweep(const Scenario& base) { return sweep_points(JsonDocument::read_file(base.file), base); }

}  // namespace parasim::scenarios
