#include "strategies/search/search_json.hpp"

#include <charconv>
#include <cmath>

#include "common/error.hpp"

namespace parasim::strategies::search {
namespace {

using nlohmann::json;

/// Whole numbers below 2^53 exactly, anything else rounded to 9 significant digits, so that noise
/// in the last bits of a sum never changes the file.
json number(double x) {
  PARASIM_CHECK(std::isfinite(x), "search figure is not finite");
  if (std::fabs(x) < 9007199254740992.0 && std::trunc(x) == x) return x == 0 ? 0.0 : x;
  char buf[64];
  const auto written = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 9);
  double out = 0;
  std::from_chars(buf, written.ptr, out);
  return out;
}

json memory_json(const RankedPlan& p) {
  return json{{"peak_stage", p.peak_stage},
              {"weights_bytes", number(p.memory.weights_bytes)},
              {"gradients_bytes", number(p.memory.gradients_bytes)},
              {"optimizer_bytes", number(p.memory.optimizer_bytes)},
              {"activations_bytes", number(p.memory.activations_bytes)},
              {"buffers_bytes", number(p.memory.buffers_bytes)},
              {"total_bytes", number(p.memory.total_bytes())},
              {"capacity_bytes", number(p.memory_capacity_bytes)},
              {"headroom_bytes", number(p.headroom_bytes())}};
}

}  // namespace

json to_json(const Evaluation& e) {
  return json{{"step_time_s", number(e.step_time_s)},         {"samples_per_s", number(e.samples_per_s)},
              {"tokens_per_s", number(e.tokens_per_s)},       {"mfu_fraction", number(e.mfu)},
              {"compute_s", number(e.compute_s)},             {"exposed_comm_s", number(e.exposed_comm_s)},
              {"bubble_s", number(e.bubble_s)},               {"data_load_s", number(e.data_load_s)},
              {"task_count", e.tasks},                        {"replica_shortcut", e.replica_shortcut}};
}

json to_json(const SearchOutcome& o, const std::string& scenario, const std::string& model) {
  json plans = json::array();
  for (std::size_t i = 0; i < o.plans.size(); ++i) {
    const RankedPlan& p = o.plans[i];
    const Candidate& c = p.candidate;
    json stage_uses = json::array();
    for (const auto u : c.stage_uses) stage_uses.push_back(std::string(to_string(u)));
    json entry{{"rank", i + 1},
               {"description", p.description},
               {"ranked_by", std::string(to_string(p.ranked_by()))},
               {"pareto", p.pareto},
               {"reference", p.reference},
               {"nodes", c.nodes},
               {"device_count", c.devices},
               {"tp", c.plan.tp},
               {"pp", c.plan.pp},
               {"dp", c.plan.dp},
               {"ep", c.plan.ep},
               {"micro_batch", c.training.micro_batch},
               {"micro_batch_count", c.micro_batches()},
               {"schedule", std::string(to_string(c.plan.schedule))},
               {"virtual_stages", c.plan.virtual_stages},
               {"zero", c.plan.zero},
               {"recompute", std::string(to_string(c.plan.recompute))},
               {"sequence_parallel", c.plan.sequence_parallel},
               {"stage_layers", c.plan.stage_layers},
               {"stage_uses", stage_uses},
               {"memory", memory_json(p)},
               {"estimate", to_json(p.estimate)}};
    if (o.price_per_device_hour > 0) entry["cost_per_step"] = number(p.cost_per_step(o.price_per_device_hour));
    if (p.simulated) entry["analytical"] = to_json(*p.simulated);
    if (p.refined) entry["refined"] = to_json(*p.refined);
    plans.push_back(std::move(entry));
  }
  json pareto = json::array(), shapes = json::array();
  for (const auto i : o.pareto) pareto.push_back(i + 1);
  for (const auto i : o.shapes) shapes.push_back(i + 1);
  return json{{"schema", kSearchSchema},
              {"scenario", scenario},
              {"model", model},
              {"objective", std::string(to_string(o.objective))},
              {"price_per_device_hour", number(o.price_per_device_hour)},
              {"usable_memory_bytes", number(o.usable_memory_bytes)},
              {"counts",
               {{"candidate_count", o.candidates},
                {"valid_count", o.valid},
                {"fitting_count", o.fitting},
                {"simulated_count", o.simulated},
                {"refined_count", o.refined},
                {"pipeline_cut_count", o.pipeline_cuts}}},
              {"refine", {{"backend", o.refine_name}, {"note", o.refine_note}}},
              {"reference", {{"rank", o.reference ? json(*o.reference + 1) : json(nullptr)}, {"note", o.reference_note}}},
              {"pareto_ranks", pareto},
              {"shape_ranks", shapes},
              {"plans", plans}};
}

}  // namespace parasim::strategies::search
