#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/output_files.hpp"
#include "cli/progress.hpp"
#include "cli/thousands.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "reports/html.hpp"
#include "reports/format.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"
#include "reports/trace.hpp"
#include "scenarios/data.hpp"
#include "scenarios/federated.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/local_update.hpp"
#include "scenarios/sweep.hpp"
#include "sim/cluster.hpp"
#include "sim/profile_json.hpp"
#include "sim/replicas.hpp"
#include "sim/result_json.hpp"
#include "sim/simulate.hpp"
#include "sim/task_estimate.hpp"
#include "strategies/plan.hpp"

namespace parasim::cli {
namespace {

struct RunArgs {
  std::string scenario;
  std::string out;
  std::string backend;
  std::string profile;
  bool json = false;
  bool allow_oom = false;
  bool no_replica_shortcut = false;
  std::int64_t trace_devices = -1;  // -1: the default selection; 0: every device
  double max_trace_gib = 1;         // the largest trace.json written without being asked
  std::int64_t max_devices = 1 << 20;  // the largest cluster simulated without being asked
  std::int64_t max_tasks = 0;       // 0: kDefaultMaxTasks
  double max_memory_gib = 0;        // 0: the memory available when the run starts
  bool quiet = false;               // no progress on stderr
};

// A simulation long enough to show its progress: about two seconds or more on one core at the
// rates bench/README.md records (analytical: about 3.5 million tasks per second end to end;
// simgrid: about 450,000 SimGrid activities per second, roughly one per task and a half).
constexpr std::uint64_t kLongAnalyticalTasks = 8'000'000;
constexpr std::uint64_t kLongSimGridTasks = 1'000'000;

/// Progress phases of one variant's simulation, named after the variant.
class VariantProgress final : public ProgressSink {
 public:
  VariantProgress(Progress& progress, std::string variant) : progress_(progress), prefix_("variant \"" + std::move(variant) + "\": ") {}
  void begin(std::string_view phase, std::size_t total) override { progress_.begin(prefix_ + std::string(phase), total); }
  void update(std::size_t done) override { progress_.update(done); }
  void end() override { progress_.end(); }

 private:
  Progress& progress_;
  std::string prefix_;
};

std::string gib(double bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return s.str();
}

/// The default task budget: a few hundred million tasks lower and simulate in minutes (the engine
/// runs millions of tasks per second) in about 25 GB (sim::kEngineBytes); more is refused unless
/// --max-tasks asks for it.
constexpr std::int64_t kDefaultMaxTasks = 300'000'000;

/// Bytes in the largest binary unit that keeps a whole part ("512.00 MiB", "1.45 GiB").
std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u + 1 < 7 && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++u;
  }
  std::ostringstream s;
  s << std::fixed << std::setprecision(u == 0 ? 0 : 2) << bytes << " " << units[u];
  return s.str();
}

/// Bytes of memory the kernel says a new allocation can get without swapping (MemAvailable), else
/// the physical memory.
double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024.0;
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

/// Refuses, before anything is lowered, a variant whose TaskGraph would exceed the budget: the task
/// count (--max-tasks), the memory (--max-memory) or what a TaskGraph can index at all.
void check_task_budget(const sim::TaskEstimate& e, const std::string& variant, const RunArgs& args) {
  const std::uint64_t max_tasks = static_cast<std::uint64_t>(args.max_tasks > 0 ? args.max_tasks : kDefaultMaxTasks);
  const double max_memory = args.max_memory_gib > 0 ? args.max_memory_gib * 1024.0 * 1024.0 * 1024.0 : available_memory_bytes();
  const std::string estimate = "variant \"" + reports::terminal_safe(variant) + "\" would lower to a task graph of about " + with_commas(e.tasks) + " tasks (" +
                               with_commas(e.queue_entries) + " queue entries) needing about " +
                               bytes_text(static_cast<double>(e.memory_bytes)) + " of memory";
  if (e.tasks > sim::kMaxTaskGraphIndex || e.queue_entries > sim::kMaxTaskGraphIndex || e.dependencies > sim::kMaxTaskGraphIndex)
    throw PlanError("the scenario is too large to simulate: " + estimate + ", more than the " + with_commas(sim::kMaxTaskGraphIndex) +
                    " a task graph can index; use fewer micro-batches or devices");
  if (e.tasks > max_tasks)
    throw PlanError("the scenario is too large to simulate: " + estimate + ", more than --max-tasks " + with_commas(max_tasks) +
                    "; raise --max-tasks to run it anyway");
  if (static_cast<double>(e.memory_bytes) > max_memory)
    throw PlanError("the scenario is too large to simulate: " + estimate + ", more than the " + bytes_text(max_memory) +
                    (args.max_memory_gib > 0 ? " of --max-memory" : " of memory available") + "; raise --max-memory (GiB) to run it anyway");
}

/// The backend a variant runs on: --backend wins over the scenario's "backend".
sim::Backend backend_of(const scenarios::Scenario& s, const RunArgs& args) {
  if (!args.backend.empty()) return args.backend == "simgrid" ? sim::Backend::SimGrid : sim::Backend::Analytical;
  return s.backend == scenarios::Backend::SimGrid ? sim::Backend::SimGrid : sim::Backend::Analytical;
}

/// The devices the trace shows by default, among those simulated: all of them when at most 64; else
/// the whole first data-parallel replica when it has at most 64 devices; else one device per pipeline
/// stage (the first tensor-parallel rank), so the trace always shows the whole pipeline.
reports::TraceOptions default_trace(const strategies::Plan& plan, const sim::LoweredStep& step) {
  reports::TraceOptions t;
  const auto& mesh = plan.mesh;
  const auto& simulated = step.simulated_devices;
  if (simulated.size() <= 64) {
    if (static_cast<std::int64_t>(simulated.size()) < mesh.device_count()) {
      t.devices = simulated;
      t.selection = "every simulated device: identical data-parallel replicas were simulated once";
    }
    return t;
  }
  const std::int64_t replica = plan.pp * plan.tp();
  for (const std::int64_t d : simulated) {
    const auto c = mesh.coords_of(d);
    bool first_replica = true, first_rank = true;
    for (std::size_t a = 0; a < c.size(); ++a) {
      if (static_cast<int>(a) == plan.pp_axis) continue;
      if (static_cast<int>(a) != plan.tp_axis && c[a] != 0) first_replica = false;
      if (c[a] != 0) first_rank = false;
    }
    if (replica <= 64 ? first_replica : first_rank) t.devices.push_back(d);
  }
  t.selection = replica <= 64 ? "the first data-parallel replica" : "one device per pipeline stage, first tensor-parallel rank";
  return t;
}

struct Variant {
  scenarios::Scenario scenario;
  std::string name;  // "base" or the what-if's name
};

int run_scenario(const RunArgs& args, std::ostream& out) {
  const scenarios::Scenario base = scenarios::load_scenario(args.scenario);
  std::vector<Variant> variants{{base, "base"}};
  for (const auto& w : base.what_ifs) variants.push_back({w, w.name});
  // A "sweep" adds one variant per point, after the what-ifs (scenarios/sweep.hpp).
  const std::size_t sweep_begin = variants.size();
  for (auto& point : scenarios::load_sweep(base)) {
    std::string name = point.name;
    variants.push_back({std::move(point), std::move(name)});
  }

  std::optional<sim::Profile> override_profile;
  if (!args.profile.empty()) override_profile = sim::profile_from_json(JsonDocument::read_file(args.profile));
  const std::filesystem::path out_dir = args.out.empty() ? std::filesystem::path(base.output_dir) : std::filesystem::path(args.out);
  if (args.out.empty()) check_scenario_output_dir(args.scenario, base.output_dir);
  // A variant's profile: the --profile file's, which must describe the scenario's cluster, or the
  // scenario's own.
  auto profile_of = [&](const scenarios::Scenario& s) {
    if (!override_profile) return scenarios::scenario_profile(s);
    if (auto problem = scenarios::profile_problem(s, *override_profile))
      throw InputError(args.profile, 0, 0, "", "this profile cannot describe the scenario (at " + problem->pointer + "): " + problem->message);
    return *override_profile;
  };
  // Every variant's task graph is sized before any is lowered, so a scenario too large for this
  // machine is refused at once, not after the variants before it have run. The estimate counts one
  // data-parallel replica only where lowering will: the analytical backend, when every replica has
  // the same devices and links as the first (sim/replicas.hpp; the simgrid backend always simulates
  // every replica, sim/summarize.cpp).
  std::vector<bool> long_simulation;  // per variant: show its phases as it runs
  for (const auto& v : variants) {
    // A local update simulates a replica's step and the synchronous step on the same devices: the
    // larger of the two is what must fit.
    std::vector<scenarios::Scenario> steps;
    if (v.scenario.local_update) {
      steps.push_back(scenarios::replica_scenario(v.scenario, 0));
      steps.push_back(scenarios::synchronous_scenario(v.scenario));
    } else {
      steps.push_back(v.scenario);
    }
    bool long_one = false;
    for (const scenarios::Scenario& s : steps) {
      // The cluster first: a collective is costed over its whole group, so a step's work and memory
      // grow with the devices even where the replica shortcut keeps its task graph small (524,288
      // devices: 20 s and 0.6 GB on the development machine; 8.4 million: over 120 s and 1.6 GB).
      const auto max_devices = static_cast<std::uint64_t>(args.max_devices);
      if (static_cast<std::uint64_t>(s.cluster.device_count()) > max_devices)
        throw PlanError("the scenario is too large to simulate: variant \"" + reports::terminal_safe(v.name) + "\" has " +
                        with_commas(static_cast<std::uint64_t>(s.cluster.device_count())) + " devices, more than --max-devices " + with_commas(max_devices) +
                        "; raise --max-devices to run it anyway");
      const models::Graph graph = scenarios::build_model(s);
      const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, s.cluster.device_count());
      const bool analytical = backend_of(s, args) == sim::Backend::Analytical;
      const bool one_replica =
          !args.no_replica_shortcut && analytical && sim::data_parallel_replicas_alike(plan, sim::build_cluster(s.cluster, profile_of(s)));
      const sim::TaskEstimate e = sim::estimate_task_graph(graph, plan, {.one_data_parallel_replica = one_replica});
      check_task_budget(e, v.name, args);
      long_one = long_one || e.tasks >= (analytical ? kLongAnalyticalTasks : kLongSimGridTasks);
    }
    long_simulation.push_back(long_one);
  }

  std::vector<sim::Result> results;
  std::optional<PendingFile> trace;
  std::optional<reports::PipelineTimeline> timeline;  // the base's, for report.html
  reports::TraceSummary trace_summary;
  std::vector<std::string> oom;
  // A sweep's points are counted on stderr: a bar on a terminal, plain lines otherwise (cli/progress.hpp).
  // Without a sweep, a long simulation shows its own phases instead (lowering, the engine's count of
  // finished tasks, the summary).
  std::optional<Progress> progress;
  const bool sweep_progress = sweep_begin < variants.size() && !args.quiet;
  if (!args.quiet && (sweep_progress || std::find(long_simulation.begin(), long_simulation.end(), true) != long_simulation.end()))
    progress.emplace(std::cerr, stderr_is_terminal());
  if (sweep_progress) progress->begin("simulating the base, its what-ifs and the sweep's points", variants.size());
  for (std::size_t vi = 0; vi < variants.size(); ++vi) {
    const Variant& v = variants[vi];
    const scenarios::Scenario& s = v.scenario;
    const sim::Profile profile = profile_of(s);
    // A local update's Result is its slowest replica's inner step, and its plan that replica's.
    const scenarios::Scenario& stepped = s.local_update ? scenarios::replica_scenario(s, 0) : s;
    const sim::Cluster cluster = sim::build_cluster(stepped.cluster, profile);
    const models::Graph graph = scenarios::build_model(stepped);
    const strategies::Plan plan = strategies::make_plan(graph, stepped.training, stepped.plan, cluster.device_count());
    const sim::Backend backend = backend_of(s, args);

    sim::LowerOptions lower_options;
    lower_options.replicate_data_parallel = !args.no_replica_shortcut;
    std::optional<VariantProgress> phases;
    if (progress && !sweep_progress && long_simulation[vi]) phases.emplace(*progress, reports::terminal_safe(v.name));
    ProgressSink* sink = phases ? &*phases : nullptr;
    sim::Simulation simulation = s.local_update ? scenarios::simulate_local_update(s, profile, backend, lower_options, sink)
                                 : s.federated  ? scenarios::simulate_federated_scenario(s, profile, backend, lower_options, sink)
                                                : scenarios::simulate_step(s, graph, plan, cluster, profile, backend, lower_options, sink);
    simulation.result.scenario = base.name;
    simulation.result.variant = v.name;
    if (!simulation.result.fits) {
      const auto& sm = simulation.result.memory[static_cast<std::size_t>(simulation.result.peak_memory_stage)];
      oom.push_back("variant \"" + v.name + "\": pipeline stage " + std::to_string(sm.stage) + " needs " + gib(sm.memory.total_bytes()) +
                    " per " + simulation.result.device_kind + " device (weights " + gib(sm.memory.weights_bytes) + ", gradients " +
                    gib(sm.memory.gradients_bytes) + ", optimizer " + gib(sm.memory.optimizer_bytes) + ", activations " +
                    gib(sm.memory.activations_bytes) + ", buffers " + gib(sm.memory.buffers_bytes) + "), capacity " +
                    gib(simulation.result.memory_capacity_bytes));
    }
    if (results.empty()) {
      // The base's trace is written now (a temporary file) so its task graph can be freed before the
      // what-ifs run; it takes its final name only when every output is ready.
      reports::TraceOptions options = default_trace(plan, simulation.step);
      if (args.trace_devices == 0) {
        options = {};
        options.max_devices = simulation.step.tasks.devices;
        if (simulation.step.replica_shortcut) {
          options.devices = simulation.step.simulated_devices;
          options.selection = "every simulated device: identical data-parallel replicas were simulated once";
        }
      }
      if (args.trace_devices > 0) options = reports::TraceOptions{args.trace_devices, {}, {}};
      // A trace of every device of a large step runs to gigabytes: refused above --max-trace-gib.
      const std::int64_t events = reports::trace_events(simulation, options);
      const double trace_gib = static_cast<double>(events) * reports::kTraceBytesPerEvent / double(1 << 30);
      if (trace_gib > args.max_trace_gib) {
        auto g3 = [](double v) {
          std::ostringstream o;
          o << std::setprecision(3) << v;
          return o.str();
        };
        throw InputError("<command line>", 0, 0, "",
                         "trace.json would hold " + with_commas(events) + " task events, about " + g3(trace_gib) +
                             " GiB at 200 bytes an event, above --max-trace-gib " + g3(args.max_trace_gib) +
                             ": trace fewer devices (--trace-devices N), or raise --max-trace-gib");
      }
      timeline = reports::pipeline_timeline(simulation);
      trace.emplace(out_dir / "trace.json",
                    [&](std::ostream& o) { trace_summary = reports::write_trace(o, simulation, options); });
    }
    results.push_back(std::move(simulation.result));
    if (sweep_progress) progress->update(results.size());
  }
  if (sweep_progress) progress->end();

  if (!oom.empty() && !args.allow_oom) {
    std::string msg = "the plan does not fit in device memory:";
    for (const auto& line : oom) msg += "\n  " + line;
    msg += "\nrun with --allow-oom to report it anyway";
    throw PlanError(msg);
  }

  const std::string result_json = sim::json_text(sim::to_json(std::span<const sim::Result>(results)));
  PendingFile result_file(out_dir / "result.json", [&](std::ostream& o) { o << result_json; });
  PendingFile report_file(out_dir / "report.md", [&](std::ostream& o) { o << reports::render_markdown(results); });
  reports::HtmlReport page;
  page.results = results;
  page.timeline = std::move(timeline);
  if (sweep_begin < variants.size()) {
    std::vector<reports::SweepChanges> changes;
    for (std::size_t i = sweep_begin; i < variants.size(); ++i) changes.push_back(variants[i].scenario.changes);
    page.sweeps.push_back(reports::sweep_from_points(changes, std::span<const sim::Result>(results).subspan(sweep_begin)));
  }
  PendingFile html_file(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(page); });
  commit_together({&result_file, &report_file, &html_file, &*trace});

  if (args.json) {
    out << result_json;
  } else {
    out << reports::render_table(results);
    out << "\nwrote " << (out_dir / "result.json").string() << ", " << (out_dir / "report.md").string() << ", "
        << (out_dir / "report.html").string() << ", " << (out_dir / "trace.json").string() << "\n";
    if (trace_summary.truncated) out << trace_summary.note << "\n";
    if (!oom.empty()) {
      out << "\nWARNING: the plan does not fit in device memory (--allow-oom):\n";
      for (const auto& line : oom) out << "  " << line << "\n";
    }
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<RunArgs>();
  app.add_option("scenario", args->scenario, "a scenario file: simulate it and every what-if in it");
  app.add_option("--out", args->out, "output folder (wins over the scenario's output.dir)");
  app.add_option("--backend", args->backend, "engine: analytical or simgrid (wins over the scenario's)")
      ->check(CLI::IsMember({"analytical", "simgrid"}));
  app.add_option("--profile", args->profile, "a calibrated profile file (wins over the scenario's)");
  app.add_flag("--json", args->json, "print result.json on stdout instead of the table");
  app.add_flag("--quiet", args->quiet, "no progress on stderr (shown for sweeps and long simulations)");
  app.add_flag("--allow-oom", args->allow_oom, "report a plan that does not fit in memory instead of failing");
  app.add_flag("--no-replica-shortcut", args->no_replica_shortcut,
               "simulate every data-parallel replica (by default identical replicas are simulated once)");
  app.add_option("--trace-devices", args->trace_devices,
                 "devices in trace.json: N = the first N, 0 = all (default: the first replica, or one per stage)")
      ->check(integer_at_least(0));
  app.add_option("--max-devices", args->max_devices, "refuse a scenario of more devices than this (default 1,048,576)")->check(integer_at_least(1));
  app.add_option("--max-trace-gib", args->max_trace_gib, "refuse to write a trace.json estimated above this many GiB (default 1)")
      ->check(number_above(0));
  app.add_option("--max-tasks", args->max_tasks,
                 "refuse a scenario whose task graph would exceed this many tasks (default " + with_commas(kDefaultMaxTasks) + ")")
      ->check(integer_at_least(1));
  app.add_option("--max-memory", args->max_memory_gib,
                 "refuse a scenario whose task graph would need more than this many GiB (default: the memory available)")
      ->check(number_above(0));
  app.final_callback([&action, &out, args, &app] {
    if (!args->scenario.empty() && app.get_subcommands().empty()) action = [&out, args] { return run_scenario(*args, out); };
  });
}

}  // namespace parasim::cli
