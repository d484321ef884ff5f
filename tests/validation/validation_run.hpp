#pragma once
// The one way the validation tests run a scenario: load it as the CLI does (datasheet profile unless
// the scenario names another), simulate its base plan on the analytical backend with identical
// data-parallel replicas simulated once (tests/sim/replica_shortcut_test shows that changes no figure).
#include <algorithm>
#include <string>
#include <utility>

#include "scenarios/loader.hpp"
#include "scenarios/scenario.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "strategies/memory.hpp"
#include "strategies/plan.hpp"

namespace parasim::validation {

struct Run {
  scenarios::Scenario scenario;
  sim::Profile profile;
  sim::Cluster cluster;
  sim::Result result;
};

/// Simulates the scenario `s` (already loaded, perhaps edited) as `parasim` would.
inline Run simulate_scenario(scenarios::Scenario s) {
  Run run{std::move(s), {}, {}, {}};
  run.profile = scenarios::scenario_profile(run.scenario);
  run.cluster = sim::build_cluster(run.scenario.cluster, run.profile);
  const models::Graph graph = scenarios::build_model(run.scenario);
  const strategies::Plan plan = strategies::make_plan(graph, run.scenario.training, run.scenario.plan, run.cluster.device_count());
  sim::LowerOptions shortcut;
  shortcut.replicate_data_parallel = true;
  run.result = sim::simulate(graph, plan, run.cluster, run.profile, sim::Backend::Analytical, shortcut).result;
  return run;
}

/// Loads and simulates the scenario file at `path` relative to the source tree.
inline Run simulate_file(const std::string& path) {
  return simulate_scenario(scenarios::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/" + path));
}

/// Peak bytes per device of the scenario's plan by the memory model alone (no simulation), and the
/// device's usable bytes.
inline std::pair<double, double> peak_and_capacity(const scenarios::Scenario& s) {
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  double peak = 0;
  for (const auto& st : strategies::memory_per_stage(graph, plan)) peak = std::max(peak, st.memory.total_bytes());
  return {peak, profile.device(cluster.devices.front().kind).usable_memory_bytes()};
}

/// Peak bytes per device over the stages of a result.
inline double peak_gib(const sim::Result& r) {
  return r.memory[static_cast<std::size_t>(r.peak_memory_stage)].memory.total_bytes() / (1024.0 * 1024 * 1024);
}

}  // namespace parasim::validation
