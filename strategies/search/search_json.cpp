#include "strategies/search/search_json.hpp"

#include <cmath>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/json_reader.hpp"

namespace parasim::strategies::search {
namespace {

using nlohmann::json;

/// Whole numbers below 2^53 exactly, anything else rounded to 9 significant digits, so that noise
/// in the last bits of a sum never changes the file.
json number(double x) {
  PARASIM_CHECK(std::isfinite(x), "search figure is not finite");
  if (std::fabs(x) < 9007199254740992.0 && std::trunc(x) == x) return x == 0 ? 0.0 : x;
  return round_significant(x, 9);
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

/// An EVAL object of search.json (search_json.hpp).
Evaluation read_evaluation(ObjectReader r) {
  Evaluation e;
  e.step_time_s = r.positive("step_time_s");
  e.samples_per_s = r.number("samples_per_s", 0);
  e.tokens_per_s = r.number("tokens_per_s", 0);
  e.mfu = r.number("mfu_fraction", 0);
  e.compute_s = r.number("compute_s", 0);
  e.exposed_comm_s = r.number("exposed_comm_s", 0);
  e.bubble_s = r.number("bubble_s", 0);
  e.data_load_s = r.number("data_load_s", 0);
  e.tasks = r.integer("task_count", 0);
  e.replica_shortcut = r.boolean_or("replica_shortcut", false);
  e.extrapolated_low = r.integer_or("extrapolated_from_micro_batches_low", 1, 0);
  e.extrapolated_high = r.integer_or("extrapolated_from_micro_batches_high", 1, 0);
  r.finish();
  return e;
}

}  // namespace

json to_json(const Evaluation& e) {
  json out{{"step_time_s", number(e.step_time_s)},         {"samples_per_s", number(e.samples_per_s)},
           {"tokens_per_s", number(e.tokens_per_s)},       {"mfu_fraction", number(e.mfu)},
           {"compute_s", number(e.compute_s)},             {"exposed_comm_s", number(e.exposed_comm_s)},
           {"bubble_s", number(e.bubble_s)},               {"data_load_s", number(e.data_load_s)},
           {"task_count", e.tasks},                        {"replica_shortcut", e.replica_shortcut}};
  if (e.extrapolated_high > 0) {
    out["extrapolated_from_micro_batches_low"] = e.extrapolated_low;
    out["extrapolated_from_micro_batches_high"] = e.extrapolated_high;
  }
  return out;
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
               {"cp", c.plan.cp},
               {"cp_comm", std::string(to_string(c.plan.cp_comm))},
               {"pp", c.plan.pp},
               {"dp", c.data_parallel()},
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
              {"implementation", o.implementation},
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

bool is_search_json(const JsonDocument& doc) {
  const auto& root = doc.root();
  return root.is_object() && root.contains("schema") && root["schema"].is_string() && root["schema"].get<std::string>() == kSearchSchema;
}

SavedSearch search_from_json(const JsonDocument& doc) {
  ObjectReader r(doc, "");
  r.accept("schema");
  SavedSearch s;
  s.scenario = r.string("scenario");
  s.model = r.string("model");
  SearchOutcome& o = s.outcome;
  o.objective = *objective_from_string(r.enum_string("objective", objective_names()));
  o.implementation = r.string_or("implementation", "");
  o.price_per_device_hour = r.number("price_per_device_hour", 0);
  o.usable_memory_bytes = r.number("usable_memory_bytes", 0);
  {
    ObjectReader c = r.object("counts");
    o.candidates = c.integer("candidate_count", 0);
    o.valid = c.integer("valid_count", 0);
    o.fitting = c.integer("fitting_count", 0);
    o.simulated = c.integer("simulated_count", 0);
    o.refined = c.integer("refined_count", 0);
    o.pipeline_cuts = c.integer("pipeline_cut_count", 0);
    c.finish();
  }
  {
    ObjectReader refine = r.object("refine");
    o.refine_name = refine.string("backend");
    o.refine_note = refine.string("note");
    refine.finish();
  }
  {
    ObjectReader ref = r.object("reference");
    ref.accept("rank");  // the plan marked "reference" below
    o.reference_note = ref.string("note");
    ref.finish();
  }
  r.accept("pareto_ranks");  // the plans marked "pareto" below
  r.accept("shape_ranks");
  const auto plans = r.array("plans");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    ObjectReader p(doc, plans[i]);
    RankedPlan plan;
    const std::int64_t rank = p.integer("rank", 1);
    if (rank != static_cast<std::int64_t>(i) + 1)
      throw p.error("rank", "found rank " + std::to_string(rank) + ", expected " + std::to_string(i + 1) + " (plans are listed best first)");
    plan.description = p.string("description");
    p.enum_string("ranked_by", {"estimate", "analytical"});  // follows from "analytical" being present
    plan.pareto = p.boolean_or("pareto", false);
    plan.reference = p.boolean_or("reference", false);
    plan.candidate.nodes = p.integer("nodes", 1);
    plan.candidate.devices = p.integer("device_count", 1);
    for (const char* knob : {"tp", "cp", "cp_comm", "pp", "dp", "ep", "micro_batch", "micro_batch_count", "schedule", "virtual_stages", "zero",
                             "recompute", "sequence_parallel", "stage_layers", "stage_uses", "cost_per_step"})
      p.accept(knob);
    {
      ObjectReader m = p.object("memory");
      plan.peak_stage = m.integer("peak_stage", 0);
      plan.memory.weights_bytes = m.number("weights_bytes", 0);
      plan.memory.gradients_bytes = m.number("gradients_bytes", 0);
      plan.memory.optimizer_bytes = m.number("optimizer_bytes", 0);
      plan.memory.activations_bytes = m.number("activations_bytes", 0);
      plan.memory.buffers_bytes = m.number("buffers_bytes", 0);
      plan.memory_capacity_bytes = m.positive("capacity_bytes");
      m.accept("total_bytes");  // the sum of the kinds
      m.accept("headroom_bytes");  // capacity − total
      m.finish();
    }
    plan.estimate = read_evaluation(p.object("estimate"));
    if (p.has("analytical")) plan.simulated = read_evaluation(p.object("analytical"));
    if (p.has("refined")) plan.refined = read_evaluation(p.object("refined"));
    p.finish();
    if (plan.reference) o.reference = i;
    if (plan.pareto) o.pareto.push_back(i);
    o.plans.push_back(std::move(plan));
  }
  if (o.plans.empty()) throw r.error("plans", "found no plan, expected at least one ranked plan");
  r.finish();
  return s;
}

}  // namespace parasim::strategies::search
