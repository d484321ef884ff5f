// `parasim execute SCENARIO.json`: run the plan's own task graph for real, one MPI rank per device,
// and report predicted against measured (exec/README.md). Every rank loads the scenario, lowers and
// simulates the same step (the simulation is deterministic, so every rank holds the same task graph)
// and runs its device's share; rank 0 gathers the records, compares and writes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "cli/output_files.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "exec/compare.hpp"
#include "exec/cuda_kernels.hpp"
#include "exec/executor.hpp"
#include "exec/host_memory.hpp"
#include "exec/kernels.hpp"
#include "exec/loader_input.hpp"
#include "mpi/session.hpp"
#include "reports/format.hpp"
#include "reports/html.hpp"
#include "reports/html_timeline.hpp"
#include "reports/markdown.hpp"
#include "reports/trace.hpp"
#include "calibrate/cpu.hpp"
#include "calibrate/from_execution.hpp"
#include "calibrate/source_text.hpp"
#include "scenarios/data.hpp"
#include "scenarios/federated.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/local_update.hpp"
#include "sim/cluster.hpp"
#include "sim/profile_json.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search_json.hpp"

namespace parasim::cli {
namespace {

struct ExecuteArgs {
  std::string scenario;
  std::string plan = "base";
  std::string out;
  std::string profile;
  std::string recalibrate;  // a profile to write, the prediction's with the measured classes folded in
  int steps = 3;
  int warmup = 1;
  double warmup_seconds = 2;  // untimed steps until this long has passed on rank 0, before --warmup's
  int threads = 0;  // 0: this host's cores over its ranks
  std::string backend = "cpu";
  std::string data;  // the dataset the scenario's input pipeline loads (the real loader); "" none
};

/// The profile device of this host: what the CPU executor's ranks are.
constexpr const char* kCpuDevice = "host-cpu";

/// The profile a run predicts with: --profile's, which must describe the scenario, else the scenario's.
sim::Profile profile_of(const ExecuteArgs& args, const scenarios::Scenario& s) {
  if (args.profile.empty()) return scenarios::scenario_profile(s);
  sim::Profile profile = sim::profile_from_json(JsonDocument::read_file(args.profile));
  if (auto problem = scenarios::profile_problem(s, profile))
    throw InputError(args.profile, 0, 0, "", "this profile cannot describe the scenario (at " + problem->pointer + "): " + problem->message);
  return profile;
}

/// The prediction's error against the measurement ("+3.1%"), "-" where nothing was measured.
std::string error_text(double predicted, double measured) { return measured > 0 ? reports::change_percent(predicted, measured) : "-"; }

/// `--plan SEARCH.json#RANK`: the scenario with the plan `parasim search` ranked RANK for it — its
/// mesh degrees, schedule, ZeRO stage, recomputation, micro-batch and node count set as a what-if
/// would set them (the base's what-ifs and search space dropped).
scenarios::Scenario searched_plan(const std::string& spec, const std::string& scenario_file, const scenarios::Scenario& base) {
  const auto hash = spec.rfind('#');
  const std::string file = spec.substr(0, hash), rank_text = spec.substr(hash + 1);
  const bool digits = !rank_text.empty() && rank_text.size() <= 9 && rank_text.find_first_not_of("0123456789") == std::string::npos;
  const long long rank = digits ? std::stoll(rank_text) : 0;
  if (rank < 1)
    throw InputError("<command line>", 0, 0, "", "--plan: found \"" + spec + "\", expected SEARCH.json#RANK with RANK a plan's rank from 1 (\"search.json#1\")");
  const JsonDocument doc = JsonDocument::read_file(file);
  if (!strategies::search::is_search_json(doc)) throw doc.error_at("", "found no \"schema\": \"parasim.search/1\", expected a search.json written by `parasim search`");
  const nlohmann::json& root = doc.root();
  if (!root.contains("scenario") || root.at("scenario") != base.name)
    throw doc.error_at("/scenario", "found the search of " + (root.contains("scenario") ? describe_json_value(root.at("scenario")) : std::string("no scenario")) +
                                        ", expected one of \"" + base.name + "\", the scenario given");
  const nlohmann::json* entry = nullptr;
  std::size_t index = 0;
  const nlohmann::json& plans = root.contains("plans") ? root.at("plans") : nlohmann::json::array();
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (plans[i].contains("rank") && plans[i].at("rank") == rank) {
      entry = &plans[i];
      index = i;
    }
  if (!entry) throw doc.error_at("/plans", "found no plan ranked " + rank_text + "; the file ranks " + std::to_string(plans.size()) + " plans");
  nlohmann::json scenario = JsonDocument::read_file(scenario_file).root();
  scenario.erase("what_if");
  scenario.erase("search");
  const std::string at = "/plans/" + std::to_string(index);
  auto copy = [&](const char* key, nlohmann::json& into, const char* as) {
    if (!entry->contains(key)) throw doc.error_at(at, std::string("found no \"") + key + "\", expected every plan knob parasim search writes");
    into[as] = entry->at(key);
  };
  nlohmann::json& plan = scenario["plan"];
  for (const char* knob : {"tp", "cp", "pp", "dp", "ep", "schedule", "virtual_stages", "zero", "recompute", "sequence_parallel"}) copy(knob, plan, knob);
  plan.erase("fsdp");
  plan.erase("mesh_order");
  if (entry->at("cp") != 1) copy("cp_comm", plan, "cp_comm");
  if (entry->contains("stage_layers") && !entry->at("stage_layers").empty()) copy("stage_layers", plan, "stage_layers");
  else plan.erase("stage_layers");
  copy("micro_batch", scenario["training"], "micro_batch");
  copy("nodes", scenario["cluster"], "nodes");
  return scenarios::parse_scenario(scenario.dump(2), scenario_file + " with plan " + rank_text + " of " + file);
}

struct Report {
  std::string markdown;
  nlohmann::ordered_json json;
  std::string executed_by;  ///< the sentence saying how the plan ran (report.md and report.html)
};

constexpr int kHostCheckRuns = 5;  // each kernel's median of 5 on each rank (calibrate::host_check)

/// The most untimed steps (outer steps, rounds) run before the timed ones for --warmup-seconds. The
/// timed steps then run on buffers in use: on this project's 2-core VM a 64 MiB pass over freshly touched memory ran 1.3-2.2x as long
/// as after 2 s of use, and memory left idle for 2 s was slow again (docs/validation.md); a training
/// run hours long meets its buffers in use, and the calibration's sweeps time them so.
constexpr int kMostWarmupSteps = 1000;
/// Runs `one` (an untimed step, outer step or round) until `seconds` have passed on rank 0, whose
/// decision before each every rank learns through `any` (true on every rank if true on any), at most
/// kMostWarmupSteps times. Returns how many ran.
int warm_up(double seconds, int rank, const std::function<bool(bool)>& any, const std::function<void()>& one) {
  const auto begin = std::chrono::steady_clock::now();
  for (int k = 0; k < kMostWarmupSteps; ++k) {
    const bool more = rank == 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() < seconds;
    if (!any(more)) return k;
    one();
  }
  return kMostWarmupSteps;
}

/// `any` over a sum of every rank's buffer (the session's all-reduce among all ranks).
std::function<bool(bool)> any_by_sum(const std::function<void(float*, std::size_t)>& everyone) {
  return [&everyone](bool mine) {
    float v = mine ? 1.0f : 0.0f;
    everyone(&v, 1);
    return v > 0;
  };
}

/// "after 14 untimed steps (2.00 s) and 1 warm-up step" (`what`: "step", "outer step", "round"), as
/// the reports say it.
std::string warmed_text(int untimed, const std::string& what, double seconds, int warmup) {
  return "after " + std::to_string(untimed) + " untimed " + what + (untimed == 1 ? "" : "s") + " (" + reports::significant(seconds, 3) + " s) and " +
         std::to_string(warmup) + " warm-up " + what + (warmup == 1 ? "" : "s");
}

/// The host check's section of report.md: each check's measured time (the mean over the ranks of
/// each rank's median), the profile's price and the error.
std::string host_check_markdown(const std::vector<calibrate::HostCheck>& host) {
  if (host.empty()) return "";
  std::ostringstream md;
  md << "Host check, just before the run (each rank's median of " << kHostCheckRuns
     << ", the mean over the ranks): how far this host had moved since the profile was calibrated, an error the compute predictions share.\n\n";
  md << "| check | measured | profile | error |\n|---|---:|---:|---:|\n";
  for (const calibrate::HostCheck& h : host)
    md << "| " << h.what << " | " << reports::duration_text(h.measured_s) << " | " << reports::duration_text(h.predicted_s) << " | "
       << error_text(h.predicted_s, h.measured_s) << " |\n";
  md << "\n";
  return md.str();
}

/// The same for execution.json's "host_check".
template <class Json>
Json host_check_json(const std::vector<calibrate::HostCheck>& host) {
  Json checks = Json::array();
  for (const calibrate::HostCheck& h : host)
    checks.push_back({{"check", h.what}, {"measured_s", h.measured_s}, {"predicted_s", h.predicted_s}, {"error", (h.predicted_s - h.measured_s) / h.measured_s}});
  return checks;
}

/// The host check on every rank at once, each measured time then the mean over the `size` ranks:
/// `sum` adds a buffer over every rank (the session's all-reduce among all; nothing for one rank).
std::vector<calibrate::HostCheck> host_check_over(const sim::DeviceProfile& device, int size, const std::function<void(float*, std::size_t)>& sum) {
  std::vector<calibrate::HostCheck> host = calibrate::host_check(device, kHostCheckRuns);
  std::vector<float> seconds;
  for (const auto& h : host) seconds.push_back(static_cast<float>(h.measured_s));
  sum(seconds.data(), seconds.size());
  for (std::size_t i = 0; i < host.size(); ++i) host[i].measured_s = static_cast<double>(seconds[i]) / size;
  return host;
}

Report report_of(const exec::Comparison& c, const scenarios::Scenario& s, const std::string& variant, const strategies::Plan& plan, const sim::Result& r,
                 const exec::Kernels& kernels, const std::string& backend, const std::string& input_by = "",
                 const std::vector<calibrate::HostCheck>& host = {}, const std::string& warm_by = " after the warm-up") {
  std::ostringstream md;
  md << "# parasim execute: " << s.name << " (" << variant << ")\n\n";
  md << "Plan: " << plan.description << ".\n\n";
  md << "Predicted by the analytical backend from profile `" << r.profile << "` (" << r.profile_origin << "), for the task graph that ran. ";
  const std::string executed_by =
      "Executed by " + kernels.describe() + "; " + std::to_string(c.ranks) + (c.ranks == 1 ? " rank" : " ranks") + " (one per device), " +
      (c.ranks == 1 ? "no communication" : backend == "cuda" ? "NCCL collectives and sends" : "MPI collectives and sends polled to completion") + "; " +
      std::to_string(c.measured_step_s.size()) + " timed steps" + warm_by + "." + input_by;
  md << executed_by << "\n\n";
  md << "| step time | measured median | fastest | slowest | predicted | error |\n|---|---:|---:|---:|---:|---:|\n";
  md << "| one step | " << reports::duration_text(c.measured_median_s) << " | " << reports::duration_text(c.measured_min_s) << " | " << reports::duration_text(c.measured_max_s) << " | "
     << reports::duration_text(c.predicted_s) << " | " << error_text(c.predicted_s, c.measured_median_s) << " |\n\n";
  md << host_check_markdown(host);
  md << "Per class, in the median step, summed over ranks (a collective's time on each rank includes waiting for its group):\n\n";
  md << "| class | operations | measured | predicted | error |\n|---|---:|---:|---:|---:|\n";
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& f : c.classes) {
    md << "| " << f.name << " | " << (f.count > 0 ? std::to_string(f.count) : std::string("-")) << " | " << reports::duration_text(f.measured_s) << " | "
       << reports::duration_text(f.predicted_s) << " | " << error_text(f.predicted_s, f.measured_s) << " |\n";
    classes.push_back({{"class", f.name}, {"operations", f.count}, {"measured_s", f.measured_s}, {"predicted_s", f.predicted_s}});
  }
  // Each rank's compute in the median step: the same work on every rank of a data-parallel plan,
  // and the step waits for the slowest.
  nlohmann::ordered_json rank_compute = nlohmann::ordered_json::array();
  if (c.rank_compute_measured_s.size() > 1 && c.rank_compute_predicted_s.size() == c.rank_compute_measured_s.size()) {
    md << "\nCompute per rank, in the median step (each rank's compute tasks, end − start, summed; the prediction runs every rank of a device kind at one "
          "speed, the slowest rank's where the profile measured how far apart its ranks run, and with the host's ranks running at once where it measured that):\n\n| rank | measured | predicted | error |\n|---:|---:|---:|---:|\n";
    for (std::size_t k = 0; k < c.rank_compute_measured_s.size(); ++k) {
      md << "| " << k << " | " << reports::duration_text(c.rank_compute_measured_s[k]) << " | " << reports::duration_text(c.rank_compute_predicted_s[k]) << " | "
         << error_text(c.rank_compute_predicted_s[k], c.rank_compute_measured_s[k]) << " |\n";
      rank_compute.push_back({{"rank", k}, {"measured_s", c.rank_compute_measured_s[k]}, {"predicted_s", c.rank_compute_predicted_s[k]}});
    }
  }
  // What the prediction says of itself: among others, which profile entry priced the devices where
  // the host's ranks were measured running at once, and the ranks' spread (sim/simulate.cpp).
  if (!r.notes.empty()) {
    md << "\nNotes on the prediction:\n\n";
    for (const std::string& n : r.notes) md << "- " << reports::escape_markdown(n) << "\n";
  }
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& f : c.ops)
    ops.push_back({{"op", f.op}, {"pass", f.pass}, {"class", f.kernel_class}, {"runs", f.count}, {"measured_s", f.measured_s}, {"predicted_s", f.predicted_s}});
  Report out;
  out.markdown = md.str();
  out.executed_by = executed_by;
  out.json = {{"scenario", s.name},
              {"variant", variant},
              {"plan", plan.description},
              {"profile", r.profile},
              {"profile_origin", r.profile_origin},
              {"predicted_by", "analytical"},
              {"executor", backend},
              {"executed_by", kernels.describe()},
              {"ranks", c.ranks},
              {"measured_step_s", c.measured_step_s},
              {"measured_median_s", c.measured_median_s},
              {"predicted_step_s", c.predicted_s},
              {"error", c.error()},
              {"classes", classes},
              {"operator_passes", ops}};
  if (!rank_compute.empty()) out.json["rank_compute"] = rank_compute;
  if (!r.notes.empty()) out.json["prediction_notes"] = r.notes;
  if (!host.empty()) out.json["host_check"] = host_check_json<nlohmann::ordered_json>(host);
  return out;
}

/// `parasim execute` of a local-update plan (DiLoCo, PAPA, branch-train-merge): each replica's ranks
/// run its inner plan's task graph H steps on their own transport (the world split by replica), then
/// every rank computes its parameters' pseudo-gradient (or takes its weights, for PAPA and
/// branch-train-merge), all-reduces it with the same rank of every other replica (the outer
/// synchronisation, polled as the executor's collectives are) and applies Nesterov's outer step (or
/// mixes the mean into its weights): real loops over buffers of its parameters' size. Timed per outer step, the slowest rank's, against the
/// simulated outer step (scenarios/local_update.hpp).
int execute_local_update(const ExecuteArgs& args, const scenarios::Scenario& base, const scenarios::Scenario& s, const mpi::Session& session,
                         std::ostream& out) {
  const strategies::LocalUpdateSpec& lu = *s.local_update;
  if (lu.streaming())
    throw PlanError("--plan \"" + args.plan + "\" is Streaming DiLoCo: parasim execute runs the local updates that synchronise every fragment at once (DiLoCo, PAPA, branch-train-merge); `parasim " +
                    args.scenario + "` simulates the streaming one");
  if (args.backend != "cpu") throw PlanError("--backend " + args.backend + ": local-update plans run on the CPU executor (--backend cpu)");
  if (!args.recalibrate.empty()) throw PlanError("--recalibrate folds a synchronous plan's classes; a local-update run has none of its own");
  const int rank = session.rank(), size = session.size();
  const std::int64_t k = scenarios::replica_count(s);
  const sim::Profile profile = profile_of(args, s);
  const std::int64_t devices = s.cluster.device_count(), per_replica = devices / k;
  if (devices != size)
    throw PlanError("the plan has " + std::to_string(devices) + " devices (" + std::to_string(k) + " replicas of " + std::to_string(per_replica) + ") and " +
                    std::to_string(size) + (size == 1 ? " process was" : " processes were") + " launched: run it as `mpirun -np " +
                    std::to_string(devices) + " parasim execute ...`, one rank per device");
  if (s.cluster.device != kCpuDevice)
    throw PlanError("the plan's devices are " + s.cluster.device + "; the CPU executor runs plans of " + std::string(kCpuDevice) + " devices");
  const std::filesystem::path out_dir = args.out.empty() ? std::filesystem::path(base.output_dir) / "execute" : std::filesystem::path(args.out);
  if (args.out.empty()) check_scenario_output_dir(args.scenario, base.output_dir);

  // This rank's replica and its plan; the prediction of the whole outer step.
  const auto replica = static_cast<int>(rank / per_replica), local = static_cast<int>(rank % per_replica);
  const scenarios::Scenario rs = scenarios::replica_scenario(s, replica);
  const sim::Cluster cluster = sim::build_cluster(rs.cluster, profile);
  const models::Graph graph = scenarios::build_model(rs);
  const strategies::Plan plan = strategies::make_plan(graph, rs.training, rs.plan, cluster.device_count());
  const sim::Simulation inner = sim::simulate(graph, plan, cluster, profile, sim::Backend::Analytical, sim::LowerOptions{});
  const sim::Simulation predicted = scenarios::simulate_local_update(s, profile, sim::Backend::Analytical, sim::LowerOptions{});
  const sim::LocalUpdateFigures& figures = *predicted.result.local_update;

  const int blas_threads = args.threads > 0 ? args.threads : mpi::cores_per_rank();
  exec::CpuKernels kernels(graph, inner.step.work, plan, blas_threads);
  std::unique_ptr<exec::Transport> transport = session.execute_transport(replica);
  const std::function<void(float*, std::size_t)> outer = session.all_reduce_among(local);
  const std::function<void(float*, std::size_t)> everyone = session.all_reduce_among(0);
  std::string why = exec::cannot_execute(inner.step, transport->rank());
  if (why.empty()) why = kernels.refuses(plan);
  float failed = why.empty() ? 0.0f : 1.0f;
  everyone(&failed, 1);
  if (failed > 0) throw PlanError(why.empty() ? "another rank cannot run its part of the plan; its message says why" : why);
  transport->prepare(inner.step.tasks);
  // The host check, on every rank at once, before the first outer step.
  const std::vector<calibrate::HostCheck> host = host_check_over(profile.device(cluster.devices.front().figures()), size, everyone);

  // The outer step's state on this rank: its parameters, the anchor (the parameters of the last outer
  // step) and the Nesterov momentum, fp32, as many as the device holds.
  const auto n = static_cast<std::size_t>(scenarios::outer_parameters_per_device(inner.result, plan));
  exec::HostVector<float> theta(n, 0.01f), anchor(n, 0.02f), momentum(n, 0.0f), delta(n);
  const float lr = static_cast<float>(lu.outer_learning_rate), mu = static_cast<float>(lu.outer_momentum), inv_k = 1.0f / static_cast<float>(k);
  exec::ExecuteOptions inner_options;
  inner_options.warmup_steps = 0;
  inner_options.steps = static_cast<int>(lu.inner_steps);
  std::vector<double> outer_s, inner_s, sync_s;
  auto outer_step = [&](bool timed) {
    float ready = 1;
    everyone(&ready, 1);  // every replica starts the outer step together
    const auto t0 = std::chrono::steady_clock::now();
    (void)exec::execute_rank(plan, inner.step, *transport, kernels, inner_options);
    const auto t1 = std::chrono::steady_clock::now();
    if (lu.averages_weights()) {
      // PAPA pulls the weights toward the replicas' mean; branch-train-merge replaces them by it.
      const float alpha = lu.algorithm == strategies::LocalUpdateAlgorithm::PAPA ? static_cast<float>(lu.mixing) : 0.0f;
      std::copy(theta.begin(), theta.end(), delta.begin());
      outer(delta.data(), n);
      for (std::size_t i = 0; i < n; ++i) theta[i] = alpha * theta[i] + (1 - alpha) * delta[i] * inv_k;
    } else {
      for (std::size_t i = 0; i < n; ++i) delta[i] = anchor[i] - theta[i];
      outer(delta.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const float d = delta[i] * inv_k;
        momentum[i] = mu * momentum[i] + d;
        anchor[i] -= lr * (mu * momentum[i] + d);
        theta[i] = anchor[i] + 0.01f;  // the next inner steps start from the anchor (and move off it)
      }
    }
    const auto t2 = std::chrono::steady_clock::now();
    if (!timed) return;
    outer_s.push_back(std::chrono::duration<double>(t2 - t0).count());
    inner_s.push_back(std::chrono::duration<double>(t1 - t0).count() / static_cast<double>(lu.inner_steps));
    sync_s.push_back(std::chrono::duration<double>(t2 - t1).count());
  };
  // Untimed outer steps for --warmup-seconds, then --warmup's, then the timed ones.
  const int untimed = warm_up(args.warmup_seconds, rank, any_by_sum(everyone), [&] { outer_step(false); });
  for (int step = 0; step < args.warmup + args.steps; ++step) outer_step(step >= args.warmup);
  // Every rank's times to every rank (each in its own slot of a summed buffer); the slowest rank's
  // counts for each outer step.
  const std::size_t timed = outer_s.size();
  std::vector<float> all(static_cast<std::size_t>(size) * timed * 3, 0.0f);
  for (std::size_t i = 0; i < timed; ++i) {
    const std::size_t at = (static_cast<std::size_t>(rank) * timed + i) * 3;
    all[at] = static_cast<float>(outer_s[i]);
    all[at + 1] = static_cast<float>(inner_s[i]);
    all[at + 2] = static_cast<float>(sync_s[i]);
  }
  everyone(all.data(), all.size());
  if (rank != 0) return 0;
  std::vector<double> measured(timed, 0), measured_inner(timed, 0), measured_sync(timed, 0);
  for (int r = 0; r < size; ++r)
    for (std::size_t i = 0; i < timed; ++i) {
      const std::size_t at = (static_cast<std::size_t>(r) * timed + i) * 3;
      measured[i] = std::max(measured[i], static_cast<double>(all[at]));
      measured_inner[i] = std::max(measured_inner[i], static_cast<double>(all[at + 1]));
      measured_sync[i] = std::max(measured_sync[i], static_cast<double>(all[at + 2]));
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
  };
  const double m = median(measured);
  const double predicted_sync = figures.outer_step_s - static_cast<double>(lu.inner_steps) * figures.inner_step_s;
  const double error = (figures.outer_step_s - m) / m;
  std::ostringstream md;
  md << "# parasim execute: " << base.name << " (" << args.plan << ")\n\n"
     << "Local-update training: " << figures.algorithm << ", " << k << " replicas of " << per_replica << (per_replica == 1 ? " rank" : " ranks")
     << ", H = " << lu.inner_steps << " inner steps; each replica's plan: " << predicted.result.plan << ".\n\n"
     << "Predicted by the analytical backend from profile `" << profile.name << "` (" << profile.origin << "). Executed by "
     << kernels.describe() << "; the outer synchronisation an MPI all-reduce between the replicas' corresponding ranks, polled to completion, and "
     << "the outer step's passes as loops over " << n << " fp32 parameters a rank; " << timed << " timed outer steps "
     << warmed_text(untimed, "outer step", args.warmup_seconds, args.warmup) << ".\n\n"
     << "| figure | measured median | fastest | slowest | predicted | error |\n|---|---:|---:|---:|---:|---:|\n";
  auto row = [&](const std::string& name, const std::vector<double>& v, double p) {
    const double mid = median(v);
    md << "| " << name << " | " << reports::duration_text(mid) << " | " << reports::duration_text(*std::min_element(v.begin(), v.end())) << " | "
       << reports::duration_text(*std::max_element(v.begin(), v.end())) << " | " << reports::duration_text(p) << " | " << error_text(p, mid) << " |\n";
  };
  row("outer step", measured, figures.outer_step_s);
  row("inner step (mean over the outer step's)", measured_inner, figures.inner_step_s);
  row("synchronisation and outer passes", measured_sync, predicted_sync);
  md << "\n" << host_check_markdown(host);
  nlohmann::json j = {{"scenario", base.name},
                      {"variant", args.plan},
                      {"algorithm", figures.algorithm},
                      {"replicas", k},
                      {"inner_steps", lu.inner_steps},
                      {"measured_outer_step_s", measured},
                      {"measured_median_s", m},
                      {"predicted_outer_step_s", figures.outer_step_s},
                      {"error", error},
                      {"measured_inner_step_s", measured_inner},
                      {"predicted_inner_step_s", figures.inner_step_s},
                      {"measured_sync_s", measured_sync},
                      {"predicted_sync_s", predicted_sync},
                      {"profile", profile.name},
                      {"warmup_seconds", args.warmup_seconds},
                      {"untimed_steps", untimed},
                      {"warmup_steps", args.warmup}};
  if (!host.empty()) j["host_check"] = host_check_json<nlohmann::json>(host);
  PendingFile json_file(out_dir / "execution.json", [&](std::ostream& o) { o << j.dump(1) << "\n"; });
  PendingFile md_file(out_dir / "report.md", [&](std::ostream& o) { o << md.str(); });
  commit_together({&json_file, &md_file});
  out << md.str() << "\nwrote " << (out_dir / "execution.json").string() << ", " << (out_dir / "report.md").string() << "\n";
  return 0;
}

/// `parasim execute` of a federated plan (FedAvg, FedOpt): rank 0 is the server, every other rank a
/// sampled client running the scenario's one-device plan. A round: the server sends the model to
/// every client at once, each runs `local_steps` steps of its plan's task graph, sends its update
/// back, and the server sums the updates and applies its optimizer — real messages, real steps, real
/// loops over fp32 buffers of the model's size. Timed on the server per round, against the round
/// simulated for exactly these clients: speed 1, all responding, no deadline, and the bandwidth of
/// the profile's `shm` link the ranks exchange over (its send-recv curve at the model's size) for
/// every client and for the server's link.
int execute_federated(const ExecuteArgs& args, const scenarios::Scenario& base, const scenarios::Scenario& s, const mpi::Session& session,
                      std::ostream& out) {
  const strategies::FederatedSpec& spec = *s.federated;
  if (args.backend != "cpu") throw PlanError("--backend " + args.backend + ": federated plans run on the CPU executor (--backend cpu)");
  if (!args.recalibrate.empty()) throw PlanError("--recalibrate folds a synchronous plan's classes; a federated run has none of its own");
  const int rank = session.rank(), size = session.size();
  if (size < 2)
    throw PlanError("a federated round needs a server and a client: run it as `mpirun -np N parasim execute ...`, rank 0 the server and the "
                    "other N - 1 ranks the round's clients");
  if (s.cluster.device_count() != 1 || s.cluster.device != kCpuDevice)
    throw PlanError("the CPU executor runs federated clients of one " + std::string(kCpuDevice) + " device each; the scenario's client is " +
                    std::to_string(s.cluster.device_count()) + " x " + s.cluster.device);
  const sim::Profile profile = profile_of(args, s);
  const auto shm = profile.links.find("shm");
  if (shm == profile.links.end())
    throw PlanError("the profile has no \"shm\" link, the one the ranks exchange over here: calibrate it with `mpirun -np 2 parasim calibrate "
                    "--backend mpi --link shm`");
  const std::filesystem::path out_dir = args.out.empty() ? std::filesystem::path(base.output_dir) / "execute" : std::filesystem::path(args.out);
  if (args.out.empty()) check_scenario_output_dir(args.scenario, base.output_dir);

  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  const sim::Simulation step = sim::simulate(graph, plan, cluster, profile, sim::Backend::Analytical, sim::LowerOptions{});
  // The round these ranks run, predicted: their clients, at this host's speed, over its link.
  sim::FederatedInputs in = scenarios::federated_inputs(s, profile, step.result, graph, plan);
  const std::int64_t clients = size - 1;
  in.spec.population = in.spec.per_round = clients;
  in.spec.rounds = 1;
  in.spec.deadline_s = 0;
  const sim::Link link{"shm", shm->second.bandwidth_bytes_per_s, shm->second.latency_s, shm->second.efficiency, {}, shm->second.collective_efficiency};
  const double rate = link.bandwidth_bytes_per_s * link.efficiency_of(sim::CollectiveKind::SendRecv).at(in.model_bytes);
  auto constant = [](double v) { return strategies::Distribution{strategies::Distribution::Kind::Constant, v, 0, 0, 0}; };
  in.spec.speed = constant(1);
  in.spec.availability = constant(1);
  in.spec.upload_mbps = in.spec.download_mbps = constant(rate * 8 / 1e6);
  in.spec.server_gbps = rate * 8 / 1e9;
  const sim::FederatedRun predicted = sim::simulate_federated(in);

  const auto count = static_cast<std::size_t>(in.model_bytes / sizeof(float));
  exec::HostVector<float> model(count, 0.01f), sum, state;
  exec::HostVector<float> received;
  if (rank == 0) {
    received.assign(count * static_cast<std::size_t>(clients), 0.0f);
    sum.assign(count, 0.0f);
    state.assign(count * 2, 0.0f);  // the server optimizer's momentum and second moment (FedAdam's and FedYogi's)
  }
  const int blas_threads = args.threads > 0 ? args.threads : mpi::cores_per_rank();
  const auto kernels = std::make_unique<exec::CpuKernels>(graph, step.step.work, plan, blas_threads);
  exec::LocalTransport local;
  const std::function<void(float*, std::size_t)> everyone = session.all_reduce_among(0);
  // Every rank learns whether a client cannot run the plan before any waits for it.
  std::string why = rank == 0 ? "" : exec::cannot_execute(step.step, 0);
  if (why.empty() && rank != 0) why = kernels->refuses(plan);
  float failed = why.empty() ? 0.0f : 1.0f;
  everyone(&failed, 1);
  if (failed > 0) throw PlanError(why.empty() ? "a client cannot run its plan; its message says why" : why);
  if (rank != 0) local.prepare(step.step.tasks);
  // The host check, on the server and every client at once, before the first round.
  const std::vector<calibrate::HostCheck> host = host_check_over(profile.device(cluster.devices.front().figures()), size, everyone);
  exec::ExecuteOptions local_steps;
  local_steps.warmup_steps = 0;
  local_steps.steps = static_cast<int>(spec.local_steps);
  std::vector<double> round_s;
  auto one_round = [&](bool timed) {
    float ready = 1;
    everyone(&ready, 1);
    const auto t0 = std::chrono::steady_clock::now();
    session.send_to_clients(model.data(), count);
    if (rank != 0) {
      (void)exec::execute_rank(plan, step.step, local, *kernels, local_steps);
      for (auto& w : model) w += 1e-6f;  // its update
    }
    session.gather_from_clients(model.data(), count, received.data());
    if (rank == 0) {
      // The sum of the updates, then the server optimizer's pass over its state arrays.
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (std::int64_t c = 0; c < clients; ++c)
        for (std::size_t i = 0; i < count; ++i) sum[i] += received[static_cast<std::size_t>(c) * count + i];
      // The server's step (Reddi et al. 2021, Algorithm 2; FedAvg's is the mean itself).
      const float inv = 1.0f / static_cast<float>(clients);
      float* m1 = state.data();
      float* m2 = state.data() + count;
      switch (spec.server_optimizer) {
        case strategies::ServerOptimizer::Mean:
          for (std::size_t i = 0; i < count; ++i) model[i] = sum[i] * inv;
          break;
        case strategies::ServerOptimizer::SGDMomentum:
          for (std::size_t i = 0; i < count; ++i) {
            m1[i] = 0.9f * m1[i] + (sum[i] * inv - model[i]);
            model[i] += m1[i];
          }
          break;
        case strategies::ServerOptimizer::Adam:
        case strategies::ServerOptimizer::Yogi:
          for (std::size_t i = 0; i < count; ++i) {
            const float d = sum[i] * inv - model[i];
            m1[i] = 0.9f * m1[i] + 0.1f * d;
            m2[i] = spec.server_optimizer == strategies::ServerOptimizer::Adam ? 0.99f * m2[i] + 0.01f * d * d
                                                                              : m2[i] - 0.01f * d * d * (m2[i] > d * d ? 1.0f : -1.0f);
            model[i] += 0.01f * m1[i] / (std::sqrt(m2[i]) + 1e-3f);
          }
          break;
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (timed) round_s.push_back(std::chrono::duration<double>(t1 - t0).count());
  };
  // Untimed rounds for --warmup-seconds, then --warmup's, then the timed ones.
  const int untimed = warm_up(args.warmup_seconds, rank, any_by_sum(everyone), [&] { one_round(false); });
  for (int round = 0; round < args.warmup + args.steps; ++round) one_round(round >= args.warmup);
  if (rank != 0) return 0;
  std::vector<double> sorted = round_s;
  std::sort(sorted.begin(), sorted.end());
  const double m = sorted[(sorted.size() - 1) / 2];
  const double p = predicted.mean_s;
  std::ostringstream md;
  md << "# parasim execute: " << base.name << " (" << args.plan << ")\n\n"
     << "Federated training: " << strategies::to_string(spec.algorithm) << " (" << strategies::to_string(spec.server_optimizer) << "), rank 0 the server and "
     << clients << (clients == 1 ? " client" : " clients") << ", " << spec.local_steps << " local steps a round of the client's plan: " << step.result.plan << ".\n\n"
     << "Predicted by the analytical backend from profile `" << profile.name << "` (" << profile.origin << ") for exactly these clients: speed 1, "
     << "all responding, no deadline, every client's and the server's link the `shm` link's send-recv rate at the model's "
     << reports::significant(in.model_bytes / 1e6, 4) << " MB (" << reports::significant(rate * 8 / 1e9, 4) << " Gbit/s). Executed by "
     << kernels->describe() << "; the model and the updates as MPI messages between the server and each client, polled to completion; "
     << round_s.size() << " timed rounds " << warmed_text(untimed, "round", args.warmup_seconds, args.warmup) << ".\n\n"
     << "| figure | measured median | fastest | slowest | predicted | error |\n|---|---:|---:|---:|---:|---:|\n"
     << "| round | " << reports::duration_text(m) << " | " << reports::duration_text(sorted.front()) << " | " << reports::duration_text(sorted.back()) << " | "
     << reports::duration_text(p) << " | " << error_text(p, m) << " |\n\n"
     << host_check_markdown(host);
  nlohmann::json j = {{"scenario", base.name},   {"variant", args.plan},        {"algorithm", std::string(strategies::to_string(spec.algorithm))},
                      {"clients", clients},      {"local_steps", spec.local_steps}, {"measured_round_s", round_s},
                      {"measured_median_s", m},  {"predicted_round_s", p},      {"error", (p - m) / m},
                      {"client_step_s", in.client_step_s}, {"model_bytes", in.model_bytes}, {"profile", profile.name},
                      {"warmup_seconds", args.warmup_seconds}, {"untimed_rounds", untimed}, {"warmup_rounds", args.warmup}};
  if (!host.empty()) j["host_check"] = host_check_json<nlohmann::json>(host);
  PendingFile json_file(out_dir / "execution.json", [&](std::ostream& o) { o << j.dump(1) << "\n"; });
  PendingFile md_file(out_dir / "report.md", [&](std::ostream& o) { o << md.str(); });
  commit_together({&json_file, &md_file});
  out << md.str() << "\nwrote " << (out_dir / "execution.json").string() << ", " << (out_dir / "report.md").string() << "\n";
  return 0;
}

int execute(const ExecuteArgs& args, std::ostream& out) {
  // Before anything is allocated: MPI's scratch blocks then come back warm every step, as they do in
  // the calibration the prediction reads (exec/host_memory.hpp).
  (void)exec::keep_freed_memory();
  const mpi::Session session(true);
  const int rank = session.rank(), size = session.size();
  const scenarios::Scenario base = scenarios::load_scenario(args.scenario);
  const scenarios::Scenario* chosen = args.plan == "base" ? &base : nullptr;
  std::optional<scenarios::Scenario> searched;
  if (args.plan.find('#') != std::string::npos) {
    searched = searched_plan(args.plan, args.scenario, base);
    chosen = &*searched;
  }
  std::vector<std::string> names{"base"};
  for (const auto& w : base.what_ifs) {
    names.push_back(w.name);
    if (w.name == args.plan) chosen = &w;
  }
  if (!chosen) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
    throw InputError("<command line>", 0, 0, "", "--plan: found \"" + args.plan + "\", expected \"base\", a what-if of the scenario (" + list +
                                                     ") or SEARCH.json#RANK");
  }
  const scenarios::Scenario& s = *chosen;
  if (s.federated) return execute_federated(args, base, s, session, out);
  if (s.local_update) return execute_local_update(args, base, s, session, out);
  const sim::Profile profile = profile_of(args, s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  if (cluster.device_count() != size)
    throw PlanError("the plan has " + std::to_string(cluster.device_count()) + " devices and " + std::to_string(size) +
                    (size == 1 ? " process was" : " processes were") + " launched: run it as `mpirun -np " + std::to_string(cluster.device_count()) +
                    " parasim execute ...`, one rank per device");
  // The CPU executor measures this host, so the plan's devices must be the profile device that
  // models it (calibrated by `parasim calibrate --backend cpu`): a prediction for another device
  // compared with this CPU's times would say nothing about either. The GPU executor runs GPUs.
  for (const auto& d : cluster.devices) {
    if (args.backend == "cpu" && d.kind != kCpuDevice)
      throw PlanError("the plan's devices are " + d.kind + "; the CPU executor runs plans of " + std::string(kCpuDevice) +
                      " devices (this host, as `parasim calibrate --backend cpu` measures it); a GPU plan runs with --backend cuda");
    if (args.backend == "cuda" && d.kind == kCpuDevice) throw PlanError("the plan's devices are this host's CPU; the CUDA executor runs GPU plans (--backend cpu runs this one)");
  }
  // Every rank finds the same: a build without the CUDA executor, or a machine without a GPU.
  if (args.backend == "cuda") {
    if (const std::string why = exec::cuda_unavailable(); !why.empty()) throw PlanError("--backend cuda: " + why);
  }
  const std::filesystem::path out_dir = args.out.empty() ? std::filesystem::path(base.output_dir) / "execute" : std::filesystem::path(args.out);
  if (args.out.empty()) check_scenario_output_dir(args.scenario, base.output_dir);

  // The input pipeline runs for real when the scenario has one and --data names its dataset: the
  // step is lowered with it, and this rank's loader feeds its load and copy tasks.
  sim::LowerOptions lower_options;
  if (!args.data.empty()) {
    if (!s.data) throw InputError("<command line>", 0, 0, "", "--data: the scenario has no \"data\" section, so no input pipeline to load it");
    if (s.data->format == scenarios::DataFormat::Tokens)
      throw PlanError("--data: the real loader reads images (cifar-bin, jpeg-tar); the scenario's dataset is \"tokens\"");
    if (s.data->placement == data::Placement::Naive)
      throw PlanError("--data: the naive placement (one loader thread sending every sample to every rank) is simulated, not executed; "
                      "execute \"sharded\" or \"per_device\"");
    if (args.backend == "cuda") throw PlanError("--data: the real loader feeds the CPU executor's ranks; a GPU rank's copies over PCIe are not run");
    lower_options.input = scenarios::input_pipeline(s, graph, profile);
  }
  const sim::Simulation simulation = sim::simulate(graph, plan, cluster, profile, sim::Backend::Analytical, lower_options);
  std::unique_ptr<exec::LoaderInput> input;
  if (lower_options.input) {
    const sim::LoaderCosts& lc = *simulation.step.loader;
    const auto me = static_cast<std::size_t>(rank);
    if (lc.load_ps[me].count > 0 || lc.copy_ps[me].count > 0) {
      data::LoaderOptions lo;
      lo.placement = s.data->placement;
      lo.threads = s.data->threads_per_host;
      lo.prefetch = s.data->prefetch;
      lo.image_size = scenarios::model_image_size(graph);
      input = std::make_unique<exec::LoaderInput>(args.data, plan, rank, lo);
    }
  }
  const int blas_threads = args.threads > 0 ? args.threads : mpi::cores_per_rank();
  // The GPU of this rank: its index among the ranks of its host, over the host's GPUs.
  const int gpu = mpi::local_rank();
  std::unique_ptr<exec::Kernels> kernels;
  if (args.backend == "cuda") {
    kernels = exec::make_cuda_kernels(graph, simulation.step.work, plan, gpu);
  } else {
    kernels = std::make_unique<exec::CpuKernels>(graph, simulation.step.work, plan, blas_threads);
  }
  std::string why = exec::cannot_execute(simulation.step, rank, input != nullptr);
  if (why.empty()) why = kernels->refuses(plan);
  std::unique_ptr<exec::Transport> transport;
  if (session.active()) {
    transport = args.backend == "cuda" ? session.execute_nccl_transport(gpu) : session.execute_transport();
  } else {
    transport = std::make_unique<exec::LocalTransport>();
  }
  if (transport->any(!why.empty())) throw PlanError(why.empty() ? "another rank cannot run its part of the plan; its message says why" : why);
  transport->prepare(simulation.step.tasks);

  exec::ExecuteOptions options;
  options.steps = args.steps;
  options.warmup_steps = args.warmup;
  options.input = input.get();
  // The host check, on every CPU rank at once as the step runs them, the mean over the ranks.
  std::vector<calibrate::HostCheck> host;
  if (args.backend == "cpu") {
    exec::set_blas_threads(blas_threads);
    const std::function<void(float*, std::size_t)> sum = session.active() ? session.all_reduce_among(0) : [](float*, std::size_t) {};
    host = host_check_over(profile.device(cluster.devices.front().figures()), size, sum);
  }
  exec::ExecuteOptions one;
  one.warmup_steps = 0;
  one.steps = 1;
  one.input = options.input;
  const int warmed = warm_up(
      args.warmup_seconds, rank, [&](bool more) { return transport->any(more); },
      [&] { (void)exec::execute_rank(plan, simulation.step, *transport, *kernels, one); });
  const exec::RankRecord mine = exec::execute_rank(plan, simulation.step, *transport, *kernels, options);
  const auto gathered = transport->gather(exec::to_bytes(mine));
  if (rank != 0) return 0;

  std::vector<exec::RankRecord> records;
  for (const auto& bytes : gathered) records.push_back(exec::record_from_bytes(bytes));
  const exec::Comparison c = exec::compare(simulation, graph, plan, profile, cluster, records);
  std::string input_by;
  if (lower_options.input)
    input_by = " Input: each rank's real loader on " + calibrate::source_text(args.data) + " (" + std::string(data::to_string(s.data->placement)) + ", " +
               std::to_string(s.data->threads_per_host) + " thread" + (s.data->threads_per_host == 1 ? "" : "s") + ", " +
               std::to_string(s.data->prefetch) + " micro-batches ahead), its loads and copies run as the step's tasks.";
  else if (s.data)
    input_by = " The scenario's input pipeline was left out of the step (no --data DIR): inputs were on the ranks as each step began.";
  const std::string warm_by = " " + warmed_text(warmed, "step", args.warmup_seconds, args.warmup);
  Report report = report_of(c, base, args.plan, plan, simulation.result, *kernels, args.backend, input_by, host, warm_by);
  report.json["warmup_seconds"] = args.warmup_seconds;
  report.json["untimed_steps"] = warmed;
  report.json["warmup_steps"] = args.warmup;
  const sim::Simulation measured = exec::measured_simulation(simulation, records, c.median_step);
  PendingFile json_file(out_dir / "execution.json", [&](std::ostream& o) { o << report.json.dump(1) << "\n"; });
  PendingFile md_file(out_dir / "report.md", [&](std::ostream& o) { o << report.markdown; });
  PendingFile trace_file(out_dir / "trace.json", [&](std::ostream& o) { (void)reports::write_trace(o, measured); });
  PendingFile predicted_file(out_dir / "trace-predicted.json", [&](std::ostream& o) { (void)reports::write_trace(o, simulation); });
  reports::HtmlExecution execution{report.executed_by, c.measured_step_s, c.measured_median_s, c.predicted_s, {}, {}, {}};
  for (const auto& f : c.classes) execution.classes.push_back({f.name, f.count, f.measured_s, f.predicted_s});
  for (const calibrate::HostCheck& h : host) execution.host_check.push_back({h.what, h.measured_s, h.predicted_s});
  if (c.rank_compute_predicted_s.size() == c.rank_compute_measured_s.size())
    for (std::size_t k = 0; k < c.rank_compute_measured_s.size(); ++k) execution.rank_compute.push_back({c.rank_compute_measured_s[k], c.rank_compute_predicted_s[k]});
  const std::vector<sim::Result> predicted{simulation.result};
  reports::HtmlReport page;
  page.title = "parasim execute: " + base.name + " (" + args.plan + ")";
  page.results = predicted;
  page.labels = {args.plan};
  page.timeline = reports::pipeline_timeline(simulation);
  page.measured_timeline = reports::pipeline_timeline(measured);
  // One time axis for both timelines, the longer step's, so that the two read side by side.
  page.timeline->step_ps = page.measured_timeline->step_ps = std::max(page.timeline->step_ps, page.measured_timeline->step_ps);
  page.execution = std::move(execution);
  PendingFile html_file(out_dir / "report.html", [&](std::ostream& o) { o << reports::render_html(page); });
  std::vector<PendingFile*> files{&json_file, &md_file, &html_file, &trace_file, &predicted_file};
  std::optional<calibrate::Recalibration> recalibration;
  std::optional<PendingFile> profile_file;
  if (!args.recalibrate.empty()) {
    std::vector<calibrate::ExecutedClass> classes;
    for (const auto& f : c.classes) classes.push_back({f.name, f.measured_s, f.predicted_s});
    std::vector<std::string> links;
    if (cluster.devices_per_node > 1) links.push_back(cluster.intra.name);
    if (cluster.nodes > 1 && std::find(links.begin(), links.end(), cluster.inter.name) == links.end()) links.push_back(cluster.inter.name);
    const std::string what = "parasim execute " + calibrate::source_text(std::filesystem::path(args.scenario).filename().string()) + " --plan " +
                             calibrate::source_text(args.plan) + " on " + calibrate::today_utc() + " UTC (" + std::to_string(c.ranks) +
                             (c.ranks == 1 ? " rank, " : " ranks, ") + args.backend + " executor; median of " + std::to_string(c.measured_step_s.size()) + " timed steps)";
    recalibration = calibrate::recalibrated(profile, cluster.devices.front().figures(), links, classes, what);
    const std::string text = sim::to_json(recalibration->profile).dump(2) + "\n";
    profile_file.emplace(args.recalibrate, [text](std::ostream& o) { o << text; });
    files.push_back(&*profile_file);
  }
  commit_together(files);
  out << report.markdown << "\nwrote " << (out_dir / "execution.json").string() << ", " << (out_dir / "report.md").string() << ", "
      << (out_dir / "report.html").string() << ", "
      << (out_dir / "trace.json").string() << " (measured), " << (out_dir / "trace-predicted.json").string() << "\n";
  if (recalibration) {
    out << "wrote " << args.recalibrate << ": profile \"" << recalibration->profile.name << "\" with the measured classes folded in:";
    if (recalibration->changes.empty()) out << " nothing measured to fold";
    for (const auto& line : recalibration->changes) out << "\n  " << line;
    out << "\n";
  }
  return 0;
}

}  // namespace

void add_execute_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<ExecuteArgs>();
  CLI::App* cmd = app.add_subcommand("execute", "run the plan's own task graph for real (under mpirun: one rank per device) and compare with the prediction");
  cmd->add_option("scenario", args->scenario, "the scenario JSON file")->required();
  cmd->add_option("--plan", args->plan,
                  "which plan: \"base\" (default), the name of one of the scenario's what-ifs, or SEARCH.json#RANK (the plan `parasim search` ranked RANK)");
  cmd->add_option("--steps", args->steps, "timed steps (default 3)")->check(integer_from_to(1, 1000));
  cmd->add_option("--warmup", args->warmup, "steps run before the timed ones (default 1)")->check(integer_from_to(0, 1000));
  cmd->add_option("--warmup-seconds", args->warmup_seconds,
                  "before those, untimed steps until this many seconds have passed (default 2): the timed steps then run on memory in use, "
                  "as a long training run's do and as the calibration times it")
      ->check(CLI::Range(0.0, 600.0));
  cmd->add_option("--threads", args->threads, "cpu: OpenBLAS threads a rank (default: this host's cores over its ranks)")->check(integer_from_to(1, 1024));
  cmd->add_option("--backend", args->backend, "cpu (OpenBLAS and MPI, the default) or cuda (cuBLAS, cuDNN and NCCL, a GPU a rank)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--out", args->out, "output folder (default: the scenario's output folder /execute)");
  cmd->add_option("--profile", args->profile, "the profile to predict with (default: the scenario's)");
  cmd->add_option("--data", args->data,
                  "the dataset of the scenario's input pipeline (cifar-bin or jpeg-tar; parasim data synth writes one): each rank's real loader "
                  "feeds its load and copy tasks");
  cmd->add_option("--recalibrate", args->recalibrate,
                  "write this profile: the one predicted with, its device's and links' figures scaled by each class's measured time (calibrate/from_execution.hpp)");
  cmd->callback([&action, &out, args] { action = [&out, args] { return execute(*args, out); }; });
}

}  // namespace parasim::cli
