// Benchmark (issue 3): one training step of GPT-3 175B on 1024 A100 (128 DGX A100 nodes), tensor 8 ×
// pipeline 16 × data 8, 1F1B, global batch 1536, micro-batch 1, per-layer tasks, simulated by the
// analytical backend WITHOUT replica shortcuts. Targets: under 1 s wall, at least 2 million tasks per
// second on one core, peak memory under 2 GiB.
//
//   ./build/bench/gpt3_step_bench [--repeat N]   # N steps in one process (default 5)
//
// Each step is built and simulated from scratch (graph, plan, lowering, engine, summary). The first
// step is reported apart: it is the one a `parasim` run pays, and it first-touches every page of the
// task graph — on a virtual machine whose host takes back freed memory (balloon free-page
// reporting) those faults cost far more than the simulation itself. Later steps reuse pages the
// process just freed. Per phase: wall time and the main thread's CPU time (user + system); the
// summary runs on two threads for a step this large, so its CPU is only the main thread's share.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpt3_case.hpp"

#include "models/zoo.hpp"
#include "sim/cluster.hpp"
#include "sim/engine/interference_engine.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
double wall_now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

struct Phase {
  double wall = 0, cpu = 0;
};
enum { kSetup, kLower, kEngine, kSummary, kPhases };
const char* const kPhaseNames[kPhases] = {"graph+plan", "lower", "engine", "summary"};

struct Step {
  Phase phase[kPhases];
  std::size_t tasks = 0, collectives = 0, graph_bytes = 0;
  double free_makespan_s = 0;  ///< the step with overlap free (0: the profile gives no interference)
  bool one_pass = false;       ///< the interfered timeline came from the one pass over the ids
  sim::Result result;
  [[nodiscard]] double wall() const {
    double w = 0;
    for (const Phase& p : phase) w += p.wall;
    return w;
  }
};

/// Times `f` into `p`.
template <class F>
auto timed(Phase& p, F&& f) {
  const double w0 = wall_now(), c0 = cpu_now();
  auto out = f();
  p.wall = wall_now() - w0;
  p.cpu = cpu_now() - c0;
  return out;
}

Step one_step(const bench::Gpt3Case& gpt3, const sim::Profile& profile) {
  Step s;
  const auto [graph, plan] = timed(s.phase[kSetup], [&] {
    models::Graph g = models::build_named_model("gpt3-175b", gpt3.options);
    strategies::Plan p = strategies::make_plan(g, gpt3.training, gpt3.spec, gpt3.cluster.device_count());
    return std::make_pair(std::move(g), std::move(p));
  });
  sim::LowerOptions no_shortcut;  // every device simulated: the issue asks for no replica shortcut
  no_shortcut.replicate_data_parallel = false;
  const sim::LoweredStep step = timed(s.phase[kLower], [&] { return sim::lower(graph, plan, gpt3.cluster, profile, no_shortcut); });
  std::vector<sim::CollectiveEstimate> estimates;
  // As sim::simulate runs the engine: under the profile's interference, the one-pass engine for the
  // step with overlap free, then simulate_interference (its one pass over the ids, or the fluid
  // event loop where that does not apply) for the step.
  std::vector<std::int64_t> finish_ps;
  const sim::Timeline tl = timed(s.phase[kEngine], [&] {
    estimates = sim::estimate_collectives(step.tasks, gpt3.cluster);
    std::vector<Picoseconds> ps;
    for (const auto& e : estimates) ps.push_back(e.time);
    const sim::Interference x = sim::step_interference(step.tasks, gpt3.cluster, profile);
    if (x.none()) return sim::simulate_fifo(step.tasks, ps);
    s.free_makespan_s = sim::simulate_fifo(step.tasks, ps).makespan.seconds();
    sim::InterferedTimeline run = sim::simulate_interference(step.tasks, ps, x);
    s.one_pass = run.one_pass;
    finish_ps = std::move(run.finish_ps);
    return std::move(run.timeline);
  });
  s.result = timed(s.phase[kSummary], [&] {
    return sim::summarize(graph, plan, gpt3.cluster, profile, step, tl, estimates, sim::Backend::Analytical, finish_ps);
  });
  s.tasks = step.tasks.task_count();
  s.collectives = step.tasks.collectives.size();
  s.graph_bytes = step.tasks.memory_bytes();
  return s;
}

void print_step(const char* what, const Step& s) {
  std::printf("%-8s wall %.3f s:", what, s.wall());
  for (int p = 0; p < kPhases; ++p) std::printf("  %s %.3f (cpu %.3f)", kPhaseNames[p], s.phase[p].wall, s.phase[p].cpu);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: gpt3_step_bench [--repeat N]\n");
      return 2;
    }
  }
  const auto& profile = sim::datasheet_profile();
  const bench::Gpt3Case gpt3 = bench::gpt3_175b_1024_a100(profile);

  std::vector<Step> steps;
  for (int i = 0; i < repeat; ++i) {
    steps.push_back(one_step(gpt3, profile));
    print_step(i == 0 ? "first" : "again", steps.back());
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);

  const Step& first = steps.front();
  const double tasks = static_cast<double>(first.tasks);
  std::printf("tasks              %.0f (%zu collectives, %.1f MiB task graph)\n", tasks, first.collectives,
              static_cast<double>(first.graph_bytes) / (1 << 20));
  std::printf("first step         wall %.3f s (%.2f M tasks/s)\n", first.wall(), tasks / first.wall() / 1e6);
  if (steps.size() > 1) {
    std::vector<double> walls, engine_walls;
    for (std::size_t i = 1; i < steps.size(); ++i) {
      walls.push_back(steps[i].wall());
      engine_walls.push_back(steps[i].phase[kEngine].wall);
    }
    std::sort(walls.begin(), walls.end());
    std::sort(engine_walls.begin(), engine_walls.end());
    const double median = walls[walls.size() / 2];
    std::printf("later steps (%zu)   wall min %.3f s, median %.3f s (%.2f M tasks/s at the median; engine alone %.2f M tasks/s)\n",
                walls.size(), walls.front(), median, tasks / median / 1e6, tasks / engine_walls[engine_walls.size() / 2] / 1e6);
  }
  std::printf("peak RSS           %.0f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  const sim::Result& r = first.result;
  std::printf("predicted step     %.3f s, %.1f model TFLOP/s per GPU, MFU %.1f%%, HFU %.1f%%, bubble %.1f%%\n", r.step_time_s,
              r.model_tflops_per_device, 100 * r.mfu, 100 * r.hfu, 100 * r.bubble_fraction);
  if (first.free_makespan_s > 0)
    std::printf("interference       the engine ran %s; with overlap free the step is %.3f s\n",
                first.one_pass ? "one pass over the ids" : "the fluid event loop", first.free_makespan_s);
  return 0;
}
