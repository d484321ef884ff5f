// Benchmark (issue 3): one training step of GPT-3 175B on 1024 A100 (128 DGX A100 nodes), tensor 8 ×
// pipeline 16 × data 8, 1F1B, global batch 1536, micro-batch 1, per-layer tasks, simulated by the
// analytical backend WITHOUT replica shortcuts. Targets: under 1 s wall, at least 2 million tasks per
// second on one core, peak memory under 2 GiB.
//
//   ./build/bench/gpt3_step_bench            # prints the phases, tasks/s and peak RSS
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>

#include "gpt3_case.hpp"

#include "models/zoo.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Clock = std::chrono::steady_clock;

// Thread CPU time: the figure to compare when the machine is shared (wall time is printed too).
static double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
static double since(double t) { return cpu_now() - t; }

int main() {
  const auto& profile = sim::datasheet_profile();
  const bench::Gpt3Case gpt3 = bench::gpt3_175b_1024_a100(profile);
  const sim::Cluster& cluster = gpt3.cluster;
  const strategies::TrainingSpec& training = gpt3.training;
  const strategies::PlanSpec& spec = gpt3.spec;
  const models::ModelOptions& options = gpt3.options;

  const auto wall0 = Clock::now();
  const double t0 = cpu_now();
  const models::Graph graph = models::build_named_model("gpt3-175b", options);
  const strategies::Plan plan = strategies::make_plan(graph, training, spec, cluster.device_count());
  const double t_setup = since(t0);

  const double t1 = cpu_now();
  sim::LowerOptions no_shortcut;  // every device simulated: the issue asks for no replica shortcut
  no_shortcut.replicate_data_parallel = false;
  sim::LoweredStep step = sim::lower(graph, plan, cluster, profile, no_shortcut);
  const double t_lower = since(t1);
  const double t2 = cpu_now();
  const auto estimates = sim::estimate_collectives(step.tasks, cluster);
  std::vector<Picoseconds> ps;
  for (const auto& e : estimates) ps.push_back(e.time);
  const sim::Timeline tl = sim::simulate_fifo(step.tasks, ps);
  const double t_sim = since(t2);
  const double t3 = cpu_now();
  const sim::Result r = sim::summarize(graph, plan, cluster, profile, step, tl, estimates, sim::Backend::Analytical);
  const double t_sum = since(t3);

  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double tasks = static_cast<double>(step.tasks.task_count());
  const double total = t_setup + t_lower + t_sim + t_sum;
  const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
  std::printf("tasks              %.0f (%zu collectives, %.1f MiB task graph)\n", tasks, step.tasks.collectives.size(),
              static_cast<double>(step.tasks.memory_bytes()) / (1 << 20));
  std::printf("CPU time: graph+plan %.3f s, lower %.3f s, engine %.3f s, summary %.3f s\n", t_setup, t_lower, t_sim, t_sum);
  std::printf("total CPU          %.3f s   (%.2f M tasks/s overall, %.2f M tasks/s engine); wall %.3f s\n", total, tasks / total / 1e6,
              tasks / t_sim / 1e6, wall);
  std::printf("peak RSS           %.0f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  std::printf("predicted step     %.3f s, %.1f model TFLOP/s per GPU, MFU %.1f%%, HFU %.1f%%, bubble %.1f%%\n", r.step_time_s,
              r.model_tflops_per_device, 100 * r.mfu, 100 * r.hfu, 100 * r.bubble_fraction);
  return 0;
}
