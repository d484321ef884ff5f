// Benchmark (issue 4): the GPT-3 175B step of gpt3_step_bench (1024 A100 in 128 DGX A100 nodes,
// tensor 8 × pipeline 16 × data 8, 1F1B, global batch 1536, micro-batch 1, full recompute) under
// the simgrid backend, every device simulated. Targets: under 120 s wall, at least 200,000 SimGrid
// activities per second. It runs the analytical backend on the same task graph too and prints the
// ratio of the two step times and of the two run times.
//
//   ./build/bench/gpt3_simgrid_bench
//
// Activities per second = the SimGrid activities the run created (communications, sleeps,
// semaphore acquisitions; SimGridRun::activities) / the wall time of SimGrid's run in its child
// process (platform built, simulation to its end; SimGridRun::run_wall_s). The run is one thread, so
// on a machine shared with other work the figure per CPU second (SimGridRun::run_cpu_s) is printed
// too: it is what the run would reach with a core to itself.
//
// Then the same pair under the profile's interference (sim/interference.hpp), as `parasim` runs each
// backend when overlap has a price: the analytical engine's simulate_interference, and SimGrid with
// compute as executions whose speed changes while collectives run beside them. The targets are the
// free-overlap run's.
#include <chrono>
#include <cstdio>

#include "gpt3_case.hpp"

#include "models/zoo.hpp"
#include "sim/cluster.hpp"
#include "sim/cost_model.hpp"
#include "sim/engine/interference_engine.hpp"
#include "sim/engine/simgrid_engine.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main() {
  const auto& profile = sim::datasheet_profile();
  const bench::Gpt3Case gpt3 = bench::gpt3_175b_1024_a100(profile);
  const sim::Cluster& cluster = gpt3.cluster;
  const strategies::TrainingSpec& training = gpt3.training;
  const strategies::PlanSpec& spec = gpt3.spec;
  const models::ModelOptions& options = gpt3.options;

  const auto w0 = Clock::now();
  const models::Graph graph = models::build_named_model("gpt3-175b", options);
  const strategies::Plan plan = strategies::make_plan(graph, training, spec, cluster.device_count());
  sim::LowerOptions all_devices;  // the simgrid backend simulates every replica (sim/simulate.hpp)
  all_devices.replicate_data_parallel = false;
  const sim::LoweredStep step = sim::lower(graph, plan, cluster, profile, all_devices);
  const auto estimates = sim::estimate_collectives(step.tasks, cluster);
  const double setup_wall = seconds_since(w0);

  // Analytical backend on the same task graph.
  const auto a0 = Clock::now();
  std::vector<Picoseconds> ps;
  for (const auto& e : estimates) ps.push_back(e.time);
  const sim::Timeline analytical = sim::simulate_fifo(step.tasks, ps);
  const double analytical_wall = seconds_since(a0);

  // Simgrid backend: flows of every collective, then the SimGrid run in its child process.
  const auto s0 = Clock::now();
  const auto flows = sim::collective_flows_of(step.tasks, cluster, estimates);
  std::vector<double> speeds;
  for (const auto& d : cluster.devices) speeds.push_back(sim::gemm_peak_flops(profile.device(d.kind), plan.precision) * d.speed_factor);
  const sim::SimGridRun run = sim::simulate_simgrid(step.tasks, cluster, flows, speeds);
  const double simgrid_wall = seconds_since(s0);

  const double tasks = static_cast<double>(step.tasks.task_count());
  std::printf("tasks                 %.0f (%zu collectives)\n", tasks, step.tasks.collectives.size());
  std::printf("setup (graph, plan, lowering, estimates)  %.2f s wall\n", setup_wall);
  std::printf("analytical backend    step %.4f s, run %.3f s wall\n", analytical.makespan.seconds(), analytical_wall);
  std::printf("simgrid backend       step %.4f s, run %.2f s wall (SimGrid itself %.2f s wall, %.2f s CPU)\n",
              run.timeline.makespan.seconds(), simgrid_wall, run.run_wall_s, run.run_cpu_s);
  std::printf("SimGrid activities    %lld (%lld communications, %lld semaphore acquisitions): %.0f activities/s wall, %.0f per CPU second\n",
              static_cast<long long>(run.activities), static_cast<long long>(run.communications),
              static_cast<long long>(run.synchronisations), static_cast<double>(run.activities) / run.run_wall_s,
              static_cast<double>(run.activities) / run.run_cpu_s);
  std::printf("simgrid / analytical  step time x%.4f, run time x%.1f\n", run.timeline.makespan.seconds() / analytical.makespan.seconds(),
              simgrid_wall / analytical_wall);
  std::printf("targets               < 120 s wall: %s; >= 200,000 activities/s: %s\n", simgrid_wall < 120 ? "met" : "NOT met",
              static_cast<double>(run.activities) / run.run_wall_s >= 200000 ? "met" : "NOT met");

  const sim::Interference x = sim::step_interference(step.tasks, cluster, profile);
  if (x.none()) return 0;
  const auto ai0 = Clock::now();
  const sim::InterferedTimeline a_int = sim::simulate_interference(step.tasks, ps, x);
  const double a_int_wall = seconds_since(ai0);
  const auto si0 = Clock::now();
  const sim::SimGridRun s_int = sim::simulate_simgrid(step.tasks, cluster, flows, speeds, x);
  const double s_int_wall = seconds_since(si0);
  std::printf("under interference\n");
  std::printf("analytical backend    step %.4f s, run %.3f s wall (%s)\n", a_int.timeline.makespan.seconds(), a_int_wall,
              a_int.one_pass ? "one pass over the ids" : "fluid event loop");
  std::printf("simgrid backend       step %.4f s, run %.2f s wall (SimGrid itself %.2f s wall, %.2f s CPU), %lld activities\n",
              s_int.timeline.makespan.seconds(), s_int_wall, s_int.run_wall_s, s_int.run_cpu_s, static_cast<long long>(s_int.activities));
  std::printf("simgrid / analytical  step time x%.4f, run time x%.1f\n", s_int.timeline.makespan.seconds() / a_int.timeline.makespan.seconds(),
              s_int_wall / a_int_wall);
  return 0;
}
