#include "cli/model_shardings.hpp"

#include <map>

#include <nlohmann/json.hpp>

#include "scenarios/loader.hpp"
#include "sim/sharding_view.hpp"
#include "strategies/plan.hpp"

namespace parasim::cli {
namespace {

std::string axes_text(const std::vector<std::string>& axes) {
  std::string out;
  for (const auto& a : axes) out += (out.empty() ? "" : "×") + a;
  return out;
}

/// "[b:data, s, f:model]", with " partial model" where it is a partial sum.
std::string tensor_text(const sim::TensorView& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.dims.size(); ++i)
    out += (i ? ", " : "") + t.dims[i].first + (t.dims[i].second.empty() ? "" : ":" + axes_text(t.dims[i].second));
  out += "]";
  if (!t.partial.empty()) out += " partial over " + axes_text(t.partial);
  return out;
}

std::string reshard_text(const sim::ReshardView& r, bool forward) {
  return std::string(sim::to_string(r.kind)) + " over " + r.axis + (forward ? " of " + r.tensor + " (input " + std::to_string(r.slot) + ")"
                                                                            : " of the gradient from " + r.consumer);
}

void print_text(std::ostream& out, const sim::ShardingView& v) {
  out << "plan      " << v.plan << (v.annotated ? " (annotated; propagated)" : " (the knobs' shardings)") << "\n";
  out << "mesh     ";
  for (const auto& [name, size] : v.mesh) out << " " << name << " " << size;
  out << "\n";
  std::map<std::string, int> forward, backward;  // "all_reduce over model" → count
  for (const auto& o : v.operators) {
    out << "\n" << o.name << " (" << o.kind << ")\n";
    out << "  dims      ";
    for (std::size_t k = 0; k < o.dims.size(); ++k)
      out << (k ? "  " : "") << o.dims[k].first << (o.dims[k].second.empty() ? "" : ":" + axes_text(o.dims[k].second));
    out << "\n";
    for (std::size_t k = 0; k < o.dims.size(); ++k) out << "    " << o.dims[k].first << "  " << o.origin[k] << "\n";
    out << "  output    " << tensor_text(o.output) << "\n";
    for (const auto& w : o.weights) out << "  weight    " << w.name << " " << tensor_text(w) << "\n";
    for (const auto& r : o.forward) {
      out << "  forward   " << reshard_text(r, true) << "\n";
      ++forward[std::string(sim::to_string(r.kind)) + " over " + r.axis];
    }
    for (const auto& r : o.backward) {
      out << "  backward  " << reshard_text(r, false) << "\n";
      ++backward[std::string(sim::to_string(r.kind)) + " over " + r.axis];
    }
  }
  out << "\ncollectives where layouts meet (one micro-batch, within a stage):\n";
  auto list = [&out](const char* pass, const std::map<std::string, int>& counts) {
    out << "  " << pass;
    if (counts.empty()) out << " none";
    bool first = true;
    for (const auto& [what, n] : counts) out << (first ? " " : ", ") << n << " × " << what, first = false;
    out << "\n";
  };
  list("forward: ", forward);
  list("backward:", backward);
}

nlohmann::ordered_json tensor_json(const sim::TensorView& t) {
  nlohmann::ordered_json j;
  if (!t.name.empty()) j["name"] = t.name;
  nlohmann::ordered_json dims = nlohmann::ordered_json::array();
  for (const auto& [name, axes] : t.dims) dims.push_back({{"dim", name}, {"axes", axes}});
  j["dims"] = std::move(dims);
  j["partial"] = t.partial;
  return j;
}

void print_json(std::ostream& out, const sim::ShardingView& v) {
  nlohmann::ordered_json j;
  j["plan"] = v.plan;
  j["annotated"] = v.annotated;
  nlohmann::ordered_json mesh = nlohmann::ordered_json::array();
  for (const auto& [name, size] : v.mesh) mesh.push_back({{"name", name}, {"size", size}});
  j["mesh"] = std::move(mesh);
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& o : v.operators) {
    nlohmann::ordered_json oj;
    oj["name"] = o.name;
    oj["kind"] = o.kind;
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < o.dims.size(); ++k) dims.push_back({{"dim", o.dims[k].first}, {"axes", o.dims[k].second}, {"from", o.origin[k]}});
    oj["dims"] = std::move(dims);
    oj["output"] = tensor_json(o.output);
    nlohmann::ordered_json weights = nlohmann::ordered_json::array();
    for (const auto& w : o.weights) weights.push_back(tensor_json(w));
    oj["weights"] = std::move(weights);
    for (const auto* pass : {"forward", "backward"}) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& r : std::string(pass) == "forward" ? o.forward : o.backward)
        list.push_back({{"collective", sim::to_string(r.kind)}, {"axis", r.axis}, {"tensor", r.tensor}, {"consumer", r.consumer}, {"slot", r.slot}});
      oj[pass] = std::move(list);
    }
    ops.push_back(std::move(oj));
  }
  j["operators"] = std::move(ops);
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace

void print_shardings(std::ostream& out, const std::string& scenario_file, bool json) {
  const scenarios::Scenario s = scenarios::load_scenario(scenario_file);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, s.cluster.device_count());
  const sim::ShardingView v = sim::view_shardings(graph, plan, s.plan);
  if (json) {
    print_json(out, v);
  } else {
    print_text(out, v);
    if (!s.plan.auto_sharding_report.empty()) out << "\n" << s.plan.auto_sharding_report;
  }
}

}  // namespace parasim::cli
