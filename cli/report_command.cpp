// `parasim report RESULT.json… [--out DIR]`: saved results side by side — the comparison table on
// stdout, report.md and report.html in the output folder. Each file is what `parasim SCENARIO` wrote
// as result.json (one result or a list of them); the results are compared in the order given. One
// file may instead be a search.json (`parasim search`, schema parasim.search/1): report.html then
// draws its ranked plans, their step-time breakdown and memory, and its Pareto front.
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/output_files.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "common/json_reader.hpp"
#include "reports/html.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"
#include "sim/result_json.hpp"
#include "strategies/search/search_json.hpp"

namespace parasim::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> files;
  std::string out = "parasim-out/report";
};

namespace search = strategies::search;

/// A search.json read back: what report.html draws of it.
struct SavedSearch {
  search::SearchOutcome outcome;
  std::string scenario;
  std::string model;
};

bool is_search(const JsonDocument& doc) {
  const auto& root = doc.root();
  return root.is_object() && root.contains("schema") && root["schema"].is_string() &&
         root["schema"].get<std::string>() == search::kSearchSchema;
}

/// An EVAL object of search.json (search_json.hpp).
search::Evaluation read_evaluation(ObjectReader r) {
  search::Evaluation e;
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
  r.finish();
  return e;
}

/// Reads what report.html needs of a search.json; every key of the schema is known (the plan knobs
/// are in each plan's description, so they are accepted unread), any other is an error.
SavedSearch read_search(const JsonDocument& doc) {
  ObjectReader r(doc, "");
  r.accept("schema");
  SavedSearch s;
  s.scenario = r.string("scenario");
  s.model = r.string("model");
  search::SearchOutcome& o = s.outcome;
  o.objective = *search::objective_from_string(r.enum_string("objective", search::objective_names()));
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
    search::RankedPlan plan;
    const std::int64_t rank = p.integer("rank", 1);
    if (rank != static_cast<std::int64_t>(i) + 1)
      throw p.error("rank", "found rank " + std::to_string(rank) + ", expected " + std::to_string(i + 1) + " (plans are listed best first)");
    plan.description = p.string("description");
    p.enum_string("ranked_by", {"estimate", "analytical"});  // follows from "analytical" being present
    plan.pareto = p.boolean_or("pareto", false);
    plan.reference = p.boolean_or("reference", false);
    plan.candidate.nodes = p.integer("nodes", 1);
    plan.candidate.devices = p.integer("device_count", 1);
    for (const char* knob : {"tp", "pp", "dp", "ep", "micro_batch", "micro_batch_count", "schedule", "virtual_stages", "zero", "recompute",
                             "sequence_parallel", "stage_layers", "stage_uses", "cost_per_step"})
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

int compare_results(const ReportArgs& args, std::ostream& out) {
  std::vector<sim::Result> results;
  std::optional<SavedSearch> saved_search;
  for (const auto& file : args.files) {
    const JsonDocument doc = JsonDocument::read_file(file);
    if (is_search(doc)) {
      if (saved_search) throw doc.error_at("", "found a second search.json, expected one search per report (compare results side by side instead)");
      saved_search = read_search(doc);
      continue;
    }
    for (auto& r : sim::results_from_json(doc)) results.push_back(std::move(r));
  }

  // Every report names a result by its variant; results from several files ("base" of each run)
  // get names that tell them apart, the same in the table, report.md and report.html.
  const std::vector<std::string> labels = reports::result_labels(results);
  for (std::size_t i = 0; i < results.size(); ++i) results[i].variant = labels[i];

  const std::filesystem::path out_dir(args.out);
  reports::HtmlReport html;
  std::set<std::string> scenarios;
  for (const auto& r : results) scenarios.insert(r.scenario);
  if (scenarios.size() > 1)
    html.title = "parasim report: " + std::to_string(results.size()) + " results of " + std::to_string(scenarios.size()) + " scenarios";
  html.results = results;
  html.labels = labels;
  if (saved_search) html.search = reports::HtmlSearch{&saved_search->outcome, saved_search->scenario, saved_search->model};
  if (results.empty()) {
    // A search alone: report.html only (report.md and the table compare results).
    PendingFile page(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(html); });
    page.commit();
    out << "wrote " << (out_dir / "report.html").string() << "\n";
    return 0;
  }
  PendingFile markdown(out_dir / "report.md", [&](std::ostream& o) { o << reports::render_markdown(results); });
  PendingFile page(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(html); });
  markdown.commit();
  page.commit();

  out << reports::render_table(results);
  out << "\nwrote " << (out_dir / "report.md").string() << ", " << (out_dir / "report.html").string() << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "Compare saved results side by side: a table, report.md and report.html");
  cmd->add_option("results", args->files,
                  "result.json files written by parasim (each one result or a list of them), and at most one search.json of parasim search")
      ->required();
  cmd->add_option("--out", args->out, "output folder for report.md and report.html (default parasim-out/report)");
  cmd->callback([&action, &out, args] { action = [&out, args] { return compare_results(*args, out); }; });
}

}  // namespace parasim::cli
