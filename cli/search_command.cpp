// `parasim search SCENARIO.json`: rank every plan of the scenario's model on its cluster
// (strategies/search), with sim/ wired in as the evaluator (scenarios/search_evaluator.hpp), spread over
// threads and, under mpirun, over MPI ranks (mpi/session.hpp). Rank 0 prints the ranking and the Pareto
// front and writes search.json; progress goes to stderr.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/output_files.hpp"
#include "cli/progress.hpp"
#include "cli/thousands.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "mpi/session.hpp"
#include "reports/format.hpp"
#include "reports/html.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/model_source.hpp"
#include "scenarios/search_evaluator.hpp"
#include "scenarios/search_spec.hpp"
#include "sim/profile_json.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search.hpp"
#include "strategies/search/search_json.hpp"

namespace parasim::cli {
namespace {

namespace search = strategies::search;

/// The automatic sharding's plans for `parasim search` (search.auto_sharding): for each node count of
/// the space, the scenario's cluster with that many nodes
///  - on one pipeline stage, as two meshes — the devices as nodes × devices per node (one axis where
///    either is 1), and as one data axis with ZeRO-1 (ZeRO shards over a mesh's data axis only: this is
///    the automatic plan that can use it) — each with the fewest micro-batches whose sharding fits (the
///    global batch halved until one does);
///  - in pp = 2, 4, … pipeline stages (Alpa's inter-operator pass, sim/auto_pipeline.hpp: the stages
///    cut by dynamic programming, each sharded on its own), each stage's devices as nodes × devices
///    per node, or one axis within a node, with pp, 2·pp and 4·pp micro-batches (the pipeline's fill
///    against its per-micro-batch cost; each ranked);
/// each solved (sim/auto_sharding.hpp) into its annotations. A plan that cannot run or where nothing
/// fits is said on stderr and left out.
std::vector<search::Candidate> auto_sharded_candidates(const scenarios::Scenario& base, const sim::Profile& profile,
                                                       const scenarios::SearchSpec& spec, bool say) {
  std::vector<search::Candidate> out;
  std::vector<std::int64_t> nodes = spec.space.nodes;
  if (nodes.empty()) nodes = {base.cluster.nodes};
  // Solves `s` (its plan's sharding) and adds it; the reason where it cannot.
  auto add = [&](scenarios::Scenario s, std::int64_t n) -> std::string {
    try {
      const models::Graph graph = scenarios::build_model(s);
      if (auto problem = strategies::check_plan(graph, s.training, s.plan, s.cluster.device_count())) return problem->message;
      scenarios::solve_auto_sharding(s, profile);
    } catch (const PlanError& e) {
      return e.what();
    }
    search::Candidate c;
    c.nodes = n;
    c.devices = s.cluster.device_count();
    c.training = s.training;
    c.plan = s.plan;
    out.push_back(std::move(c));
    return {};
  };
  auto tell = [&](std::int64_t n, const strategies::PlanSpec& plan, const std::string& why) {
    if (!why.empty() && say)
      std::cerr << "parasim search: no automatic sharding on " << n << " node" << (n == 1 ? "" : "s") << " as mesh "
                << strategies::describe_mesh(plan, 0, false) << (plan.pp > 1 ? ", pp " + std::to_string(plan.pp) : "") << ": " << why << "\n";
  };
  for (const std::int64_t n : nodes) {
    const std::int64_t per_node = base.cluster.devices_per_node;
    const std::int64_t devices = n * per_node;
    auto start = [&](scenarios::Scenario& s, strategies::PlanSpec plan) {
      s.cluster.nodes = n;
      plan.auto_sharding = true;
      plan.implementation = base.plan.implementation;
      plan.grad_bucket_mb = base.plan.grad_bucket_mb;
      plan.overlap_grad_reduce = base.plan.overlap_grad_reduce;
      plan.grad_accumulation = base.plan.grad_accumulation;
      s.plan = plan;
    };
    std::vector<strategies::PlanSpec> meshes(2);
    if (n > 1) meshes[0].mesh.push_back({"node", n, false});
    if (per_node > 1 || n == 1) meshes[0].mesh.push_back({"gpu", per_node, false});
    meshes[1].mesh.push_back({"data", devices, true});
    meshes[1].zero = 1;
    for (const strategies::PlanSpec& plan : meshes) {
      scenarios::Scenario s = base;
      start(s, plan);
      // A micro-batch is the whole mesh's, or with a data axis each of its ranks'.
      const std::int64_t ranks = strategies::resolve_dp(s.plan, s.cluster.device_count());
      std::string why = "the global batch does not divide over the data axis";
      for (std::int64_t m = 1; m * ranks <= s.training.global_batch; m *= 2) {
        if (s.training.global_batch % (m * ranks) != 0) break;
        s.training.micro_batch = s.training.global_batch / (m * ranks);
        why = add(s, n);
        if (why.empty()) break;
      }
      tell(n, plan, why);
    }
    // Pipelines: the stages as whole nodes, or as parts of one.
    for (std::int64_t pp = 2; pp <= devices; pp *= 2) {
      if (devices % pp != 0) break;
      const std::int64_t stage = devices / pp;
      strategies::PlanSpec plan;
      plan.pp = pp;
      if (stage >= per_node && stage % per_node == 0) {
        if (stage > per_node) plan.mesh.push_back({"node", stage / per_node, false});
        plan.mesh.push_back({"gpu", per_node, false});
      } else {
        plan.mesh.push_back({"gpu", stage, false});
      }
      std::string why;
      for (std::int64_t m = pp; m <= 4 * pp; m *= 2) {
        if (base.training.global_batch % m != 0) break;
        scenarios::Scenario s = base;
        start(s, plan);
        s.training.micro_batch = s.training.global_batch / m;
        why = add(s, n);
      }
      tell(n, plan, why);
    }
  }
  return out;
}

struct SearchArgs {
  std::string scenario;
  std::string out;
  std::string objective;
  std::string profile;
  std::int64_t top = 10;
  std::int64_t simulate = 0;  // 0: the scenario's search.simulate_top
  unsigned threads = 0;       // 0: every core (shared among the MPI ranks of a node)
  bool json = false;
  bool quiet = false;
  std::int64_t max_devices = 1 << 20;  // the largest cluster searched without being asked
};

/// Threads for this process: every core, divided among the MPI ranks that share the node.
unsigned default_threads() { return static_cast<unsigned>(mpi::cores_per_rank()); }

std::string pad_left(const std::string& s, std::size_t width) {
  const std::size_t w = reports::display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}
std::string pad_right(const std::string& s, std::size_t width) {
  const std::size_t w = reports::display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string render_ranking(const search::SearchOutcome& o, const scenarios::Scenario& s, const std::string& model, std::int64_t top,
                           bool has_price) {
  std::ostringstream t;
  const auto& first = o.plans.front();
  const bool tokens = first.best().tokens_per_s != first.best().samples_per_s;
  t << "parasim search: " << reports::terminal_safe(s.name) << " — " << reports::terminal_safe(model) << " on "
    << reports::terminal_safe(s.cluster.device) << " nodes of " << s.cluster.devices_per_node << ", global batch "
    << s.training.global_batch << "\n";
  if (!o.implementation.empty()) t << "every plan under " << reports::terminal_safe(o.implementation) << "\n";
  t << o.candidates << " plans enumerated, " << o.valid << " valid, " << o.fitting << " fit in " << reports::gib(o.usable_memory_bytes)
    << " GiB usable per device";
  if (o.pipeline_cuts > 0) t << " (" << o.pipeline_cuts << " with stages cut by dynamic programming)";
  t << "\n";
  t << "ranked by " << search::to_string(o.objective) << ": every fitting plan by the closed-form estimate; " << o.simulated
    << " simulated (analytical engine, one data-parallel replica standing for all) and ranked first: the best " << o.simulated_top << " by estimate";
  if (o.simulated_front > 0) t << ", " << o.simulated_front << " more from the estimates' Pareto front";
  if (o.simulated_reference > 0) t << ", and the scenario's own plan";
  t << "\n";
  std::int64_t extrapolated = 0, low = 0, high = 0;
  for (const auto& p : o.plans)
    for (const auto* e : {p.simulated ? &*p.simulated : nullptr, p.refined ? &*p.refined : nullptr})
      if (e && e->extrapolated_high > 0) {
        ++extrapolated;
        if (low == 0 || e->extrapolated_low < low) low = e->extrapolated_low;
        high = std::max(high, e->extrapolated_high);
      }
  if (extrapolated > 0)
    t << extrapolated << (extrapolated == 1 ? " simulation" : " simulations")
      << " of a plan with many micro-batches ran two shorter steps (" << low << " to " << high
      << " micro-batches) and took each figure along the line through them: past its warm-up a pipeline repeats itself\n";
  if (o.refined > 0) t << "the best " << o.refined << " re-simulated with " << o.refine_name << " (figures in search.json)\n";
  else t << o.refine_name << " re-simulation: none (" << reports::terminal_safe(o.refine_note) << ")\n";
  t << "\n";

  std::ostringstream head;
  head << pad_left("rank", 5) << pad_left("step (s)", 11) << pad_left(tokens ? "tokens/s" : "samples/s", 13) << pad_left("MFU %", 7)
       << pad_left("peak GiB", 10);
  if (has_price) head << pad_left("cost/step", 11);
  head << "  " << pad_right("figures", 11) << " plan";
  t << head.str() << "\n";
  auto row = [&](std::size_t i) {
    const search::RankedPlan& p = o.plans[i];
    const search::Evaluation& e = p.best();
    t << pad_left(std::to_string(i + 1), 5) << pad_left(reports::fixed(e.step_time_s, 3), 11)
      << pad_left(with_commas(tokens ? e.tokens_per_s : e.samples_per_s), 13) << pad_left(reports::percent(e.mfu), 7)
      << pad_left(reports::gib(p.memory.total_bytes()), 10);
    if (has_price) t << pad_left(reports::significant(p.cost_per_step(o.price_per_device_hour), 4), 11);
    t << "  " << pad_right(std::string(search::to_string(p.ranked_by())), 11) << " " << (p.pareto ? "* " : "  ")
      << reports::terminal_safe(p.description) << (p.reference ? "  <- the scenario's plan" : "") << "\n";
  };
  const auto shown = std::min<std::size_t>(o.plans.size(), static_cast<std::size_t>(std::max<std::int64_t>(top, 1)));
  for (std::size_t i = 0; i < shown; ++i) row(i);
  if (o.reference && *o.reference >= shown) {
    t << pad_left("...", 5) << "\n";
    row(*o.reference);
  }
  t << "\n";
  if (o.reference) {
    const double best = first.best().step_time_s, mine = o.plans[*o.reference].best().step_time_s;
    t << "the scenario's plan ranks " << *o.reference + 1 << " of " << o.plans.size() << "; the best plan's step is "
      << reports::change_percent(best, mine) << " against it\n";
  } else if (!o.reference_note.empty()) {
    t << reports::terminal_safe(o.reference_note) << "\n";
  }
  t << "best plan of each mesh shape:";
  for (std::size_t k = 0; k < o.shapes.size() && k < shown; ++k) {
    const search::RankedPlan& p = o.plans[o.shapes[k]];
    const auto& c = p.candidate;
    t << (k ? "," : "") << " " << k + 1 << ". " << strategies::describe_mesh(c.plan, c.plan.dp, false);
    if (c.plan.ep > 1) t << " (ep " << c.plan.ep << ")";
    if (c.devices != first.candidate.devices) t << " on " << c.devices;
    t << " (rank " << o.shapes[k] + 1 << ", " << reports::fixed(p.best().step_time_s, 3) << " s)";
  }
  t << "\n";
  t << "Pareto front (step time × peak memory × devices, * above): ranks ";
  for (std::size_t k = 0; k < o.pareto.size(); ++k) {
    if (k == 12) {
      t << ", … (" << o.pareto.size() << " in all, in search.json)";
      break;
    }
    t << (k ? ", " : "") << o.pareto[k] + 1;
  }
  t << "\n";
  return t.str();
}

int run_search_command(const SearchArgs& args, std::ostream& out) {
  const mpi::Session session;
  const bool root = session.rank() == 0;
  const scenarios::Scenario base = scenarios::load_scenario(args.scenario);
  if (base.federated)
    throw PlanError("the scenario is federated training (" + std::string(strategies::to_string(base.federated->algorithm)) +
                    "): parasim search ranks synchronous plans of the whole cluster; `parasim " + args.scenario + "` simulates its rounds");
  if (base.local_update)
    throw PlanError("the scenario is local-update training (" + std::string(strategies::to_string(base.local_update->algorithm)) +
                    "): parasim search ranks synchronous plans of the whole cluster; `parasim " + args.scenario +
                    "` simulates it, and a sweep over local_update fields compares its settings");
  const JsonDocument doc = JsonDocument::read_file(args.scenario);

  sim::Profile profile = scenarios::scenario_profile(base);
  if (!args.profile.empty()) {
    profile = sim::profile_from_json(JsonDocument::read_file(args.profile));
    if (auto problem = scenarios::profile_problem(base, profile))
      throw InputError(args.profile, 0, 0, "", "this profile cannot describe the scenario (at " + problem->pointer + "): " + problem->message);
  }
  const scenarios::SearchSpec spec = scenarios::decode_search_spec(doc, base, profile);
  // The largest cluster a candidate has: refused up front as `parasim SCENARIO` refuses it.
  std::int64_t largest = base.cluster.device_count();
  for (const std::int64_t n : spec.space.nodes) largest = std::max(largest, n * base.cluster.devices_per_node);
  if (largest > args.max_devices)
    throw PlanError("the search is too large to simulate: its largest cluster has " + with_commas(largest) + " devices, more than --max-devices " +
                    with_commas(args.max_devices) + "; raise --max-devices to search it anyway");
  search::SearchOptions options;
  options.space = spec.space;
  options.objective = spec.objective;
  options.price_per_device_hour = spec.price_per_device_hour;
  options.simulate_top = args.simulate > 0 ? args.simulate : spec.simulate_top;
  options.refine_top = spec.refine_top;
  if (!args.objective.empty()) {
    options.objective = *search::objective_from_string(args.objective);
    if (options.objective == search::Objective::Cost && !spec.has_price)
      throw InputError("<command line>", 0, 0, "", "--objective cost needs a price: set cluster.price_per_device_hour in the scenario");
  }

  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(base, profile);
  search::SearchProblem problem = scenarios::search_problem(base, profile);
  search::Candidate reference;
  reference.nodes = base.cluster.nodes;
  reference.devices = base.cluster.device_count();
  reference.training = base.training;
  reference.plan = base.plan;
  // A plan on a named mesh keeps dp 0: its data axis says it.
  if (base.plan.mesh.empty()) reference.plan.dp = strategies::resolve_dp(base.plan, reference.devices);
  if (reference.plan.fsdp) {
    reference.plan.fsdp = false;  // the same plan as ZeRO-3, which is how the search names it
    reference.plan.zero = 3;
  }
  problem.reference = reference;
  if (spec.auto_sharding) problem.extra = auto_sharded_candidates(base, profile, spec, root && !args.quiet);

  std::optional<Progress> progress;
  if (root && !args.quiet) progress.emplace(std::cerr, stderr_is_terminal());
  search::SearchObserver observer;
  if (progress) {
    observer.begin_phase = [&](std::string_view phase, std::size_t tasks) { progress->begin(phase, tasks); };
    observer.progress = [&](std::size_t done, std::size_t) { progress->update(done); };
    observer.end_phase = [&] { progress->end(); };
  }
  const unsigned threads = args.threads > 0 ? args.threads : default_threads();
  const auto executor = session.executor(threads);
  if (root && !args.quiet) {
    std::cerr << "parasim search: " << threads << " thread" << (threads == 1 ? "" : "s");
    if (session.active()) std::cerr << " on each of " << session.size() << " MPI ranks";
    if (!session.note().empty()) std::cerr << " (" << session.note() << ")";
    std::cerr << "\n";
  }
  const auto started = std::chrono::steady_clock::now();
  search::SearchOutcome outcome = search::run_search(problem, options, evaluator.evaluator(), *executor, observer);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!root) return 0;

  const std::string model = scenarios::build_model_graph(base.model, 1, base.file).name();
  const std::filesystem::path out_dir = args.out.empty() ? std::filesystem::path(base.output_dir) : std::filesystem::path(args.out);
  // report.html (reports/html_search.hpp): the ranked plans, their breakdown and memory, the Pareto
  // front, and the best plan simulated once more for its pipeline timeline and comparison column.
  const search::RankedPlan& best = outcome.plans.front();
  const models::Graph best_graph = problem.build_graph(best.candidate.batch());
  sim::LowerOptions lower_options;
  lower_options.replicate_data_parallel = true;
  lower_options.input = evaluator.input_pipeline();
  sim::Simulation best_run = sim::simulate(best_graph, search::make_candidate_plan(best_graph, best.candidate),
                                           evaluator.cluster(best.candidate.nodes), profile, sim::Backend::Analytical, lower_options);
  best_run.result.scenario = base.name;
  best_run.result.variant = "#1 " + best.description;
  // Every candidate holds the scenario's implementation: the best plan's result names it.
  outcome.implementation = best_run.result.implementation_detail;
  const std::string text = search::to_json(outcome, base.name, model).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::vector<sim::Result> best_results{best_run.result};
  reports::HtmlReport page;
  page.title = "parasim search: " + base.name;
  page.results = best_results;
  page.labels = {"#1 (best plan)"};
  page.search = reports::HtmlSearch{&outcome, base.name, model, std::max<std::size_t>(20, static_cast<std::size_t>(args.top))};
  page.timeline = reports::pipeline_timeline(best_run);
  page.timeline_result = 0;
  page.timeline_of = "#1 " + best.description;
  const std::string html = reports::render_html(page);
  write_atomically(out_dir / "search.json", text);
  write_atomically(out_dir / "report.html", html);
  if (args.json) {
    out << text;
  } else {
    out << render_ranking(outcome, base, model, args.top, spec.has_price || options.objective == search::Objective::Cost);
    out << "wrote " << (out_dir / "search.json").string() << ", " << (out_dir / "report.html").string() << "\n";
  }
  if (!args.quiet) std::cerr << "parasim search: searched in " << Progress::duration_text(elapsed_s) << "\n";
  return 0;
}

}  // namespace

void add_search_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand("search", "rank every plan of the scenario's model on its cluster (under mpirun: over the MPI ranks)");
  cmd->add_option("scenario", args->scenario, "the scenario file: its model, training, cluster and \"search\" settings")->required();
  cmd->add_option("--out", args->out, "output folder for search.json (wins over the scenario's output.dir)");
  cmd->add_option("--top", args->top, "ranked plans the table shows (default 10; search.json has all)")->check(integer_at_least(1));
  cmd->add_option("--objective", args->objective, "what best means: time, throughput, cost or memory (wins over search.objective)")
      ->check(CLI::IsMember(search::objective_names()));
  cmd->add_option("--simulate", args->simulate, "candidates simulated with the analytical engine (wins over search.simulate_top)")
      ->check(integer_at_least(1));
  cmd->add_option("--threads", args->threads, "threads per process (default: every core, shared by the MPI ranks of a node)")
      ->check(integer_at_least(1));
  cmd->add_option("--profile", args->profile, "a calibrated profile file (wins over the scenario's)");
  cmd->add_option("--max-devices", args->max_devices, "refuse a search whose largest cluster has more devices than this (default 1,048,576)")
      ->check(integer_at_least(1));
  cmd->add_flag("--json", args->json, "print search.json on stdout instead of the table");
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->final_callback([&action, &out, args] { action = [&out, args] { return run_search_command(*args, out); }; });
}

}  // namespace parasim::cli
