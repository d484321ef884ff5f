// Benchmark (issue 5): the full plan search of GPT-3 175B (sequence 2048) on 1024 A100 80GB (128 DGX
// A100 nodes), global batch 1536 — every tp × pp × dp mesh, micro-batch 1, 2, 4, 8, every schedule
// and virtual-stage count, ZeRO 0-3, three recomputation policies, sequence parallel off and on —
// with the analytical engine on every core, as `parasim search scenarios/search/gpt3-175b-1024-a100.json`
// runs it. Target: under 60 s wall on the project's 2-core machine. The simgrid re-simulation of the
// best plans is timed apart (it is optional: refine_top), since each GPT-3 step takes that backend
// close to a minute.
//
//   ./build/bench/search_bench              # the search, refine_top 0: the 60 s target
//   ./build/bench/search_bench --refine 4   # and the 4 best re-simulated with simgrid
//   ./build/bench/search_bench --threads 1  # on one thread
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "scenarios/loader.hpp"
#include "scenarios/search_evaluator.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search.hpp"

using namespace parasim;
namespace search = strategies::search;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::int64_t refine = 0;
  unsigned threads = std::thread::hardware_concurrency();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--refine") == 0) refine = std::atoll(argv[i + 1]);
    else if (std::strcmp(argv[i], "--threads") == 0) threads = static_cast<unsigned>(std::atoi(argv[i + 1]));
  }
  const auto wall0 = Clock::now();
  // The scenario beside this source (CMake compiles it by its absolute path).
  const std::string file = (std::filesystem::path(__FILE__).parent_path().parent_path() / "scenarios/search/gpt3-175b-1024-a100.json").string();
  const scenarios::Scenario s = scenarios::load_scenario(file);
  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(s, scenarios::scenario_profile(s));
  search::SearchProblem problem = scenarios::search_problem(s, evaluator.profile());
  search::SearchOptions options;  // the defaults parasim search uses: simulate_top 32, pareto_extra 4
  options.refine_top = refine;

  // Each phase's wall time, printed as it ends.
  std::string phase;
  std::size_t tasks = 0;
  auto phase_start = Clock::now();
  search::SearchObserver observer;
  observer.begin_phase = [&](std::string_view name, std::size_t n) {
    phase = name;
    tasks = n;
    phase_start = Clock::now();
  };
  observer.end_phase = [&] {
    std::printf("  %-45s %6zu tasks  %8.2f s wall\n", phase.c_str(), tasks,
                std::chrono::duration<double>(Clock::now() - phase_start).count());
  };
  const search::ThreadExecutor executor(threads == 0 ? 1 : threads);
  std::printf("search_bench: GPT-3 175B on 1024 A100, global batch 1536, %u thread%s, refine_top %lld\n", executor.threads(),
              executor.threads() == 1 ? "" : "s", static_cast<long long>(refine));
  const search::SearchOutcome o = search::run_search(problem, options, evaluator.evaluator(), executor, observer);
  const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
  std::printf("  candidates %lld, valid %lld, fitting %lld, simulated %lld, refined %lld\n", static_cast<long long>(o.candidates),
              static_cast<long long>(o.valid), static_cast<long long>(o.fitting), static_cast<long long>(o.simulated),
              static_cast<long long>(o.refined));
  std::printf("  best: %s, %.3f s per step\n", o.plans.front().description.c_str(), o.plans.front().best().step_time_s);
  std::printf("  total: %.2f s wall (target: under 60 s on 2 cores)\n", wall);
  return 0;
}
