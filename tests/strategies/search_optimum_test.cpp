// The search finds the true optimum where brute force is cheap: every valid, fitting plan of the
// space simulated by the analytical engine, the best picked under the same objective and tie-break,
// against what the search ranks first when it simulates only a few candidates (the closed-form
// estimate chooses which). Transformers and a CNN (with pipeline cuts by dynamic programming), each
// objective, and a space over two node counts.
#include <catch2/catch.hpp>

#include <map>

#include "scenarios/loader.hpp"
#include "scenarios/search_evaluator.hpp"
#include "strategies/search/search.hpp"

namespace search = parasim::strategies::search;
using namespace parasim;

namespace {

struct Case {
  const char* name;
  const char* scenario;
  search::Objective objective;
  double price;
};

const Case kCases[] = {
    {"gpt2 on one DGX A100, time",
     R"({ "name": "c1", "model": { "preset": "gpt2", "seq_len": 1024 }, "training": { "global_batch": 32 },
          "cluster": { "preset": "dgx-a100", "nodes": 1 } })",
     search::Objective::Time, 0},
    {"gpt2 on one or two DGX A100, cost",
     R"({ "name": "c2", "model": { "preset": "gpt2", "seq_len": 1024 }, "training": { "global_batch": 64 },
          "cluster": { "preset": "dgx-a100", "nodes": 2 } })",
     search::Objective::Cost, 2.5},
    {"bert-large on 8 V100 PCIe, memory headroom",
     R"({ "name": "c3", "model": { "preset": "bert-large-uncased", "seq_len": 512 }, "training": { "global_batch": 64 },
          "cluster": { "preset": "pcie-v100", "nodes": 1 } })",
     search::Objective::Memory, 0},
    {"resnet50 on one DGX A100 with cut pipelines, time",
     R"({ "name": "c4", "model": { "preset": "resnet50" }, "training": { "global_batch": 256 },
          "cluster": { "preset": "dgx-a100", "nodes": 1 } })",
     search::Objective::Time, 0},
};

}  // namespace

TEST_CASE("the search ranks first the plan brute force finds best", "[strategies][search]") {
  const std::size_t c = GENERATE(range(std::size_t{0}, std::size(kCases)));
  const Case& k = kCases[c];
  INFO(k.name);
  const scenarios::Scenario s = scenarios::parse_scenario(k.scenario, "case.json");
  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(s, scenarios::scenario_profile(s));
  search::SearchProblem problem = scenarios::search_problem(s, evaluator.profile());
  search::SearchOptions options;
  options.objective = k.objective;
  options.price_per_device_hour = k.price;
  // Few against the 200 to 1,700 plans that fit (half the default 32): the estimate must bring the
  // optimum among them. The cost case needs more than 6: its best dozen plans lie within 4% of
  // one another in cost, about the estimate's error (gpt2 on 16 devices: 0.0396 s estimated,
  // 0.0380 s simulated), and the optimum is tenth by estimate.
  options.simulate_top = 16;
  options.pareto_extra = 0;
  options.refine_top = 0;
  options.space.micro_batch = {1, 2, 4};
  options.space.zero = {0, 1, 3};
  options.space.max_virtual_stages = 2;
  if (k.objective == search::Objective::Cost) options.space.nodes = {1, 2};
  const search::ThreadExecutor executor(2);
  const search::SearchOutcome outcome = search::run_search(problem, options, evaluator.evaluator(), executor);
  REQUIRE_FALSE(outcome.plans.empty());
  REQUIRE(outcome.plans.front().simulated);
  if (k.objective == search::Objective::Time) {
    // The CNN case must have tried dynamic-programming cuts beside the balanced ones.
    if (!s.model.preset.empty() && s.model.preset == "resnet50") CHECK(outcome.pipeline_cuts > 0);
  }

  // Brute force: simulate every plan that fits.
  std::map<std::int64_t, models::Graph> graphs;
  std::vector<search::RankedPlan> all = outcome.plans;
  for (auto& p : all) {
    const std::int64_t batch = p.candidate.training.micro_batch * p.candidate.plan.dp;
    auto it = graphs.find(batch);
    if (it == graphs.end()) it = graphs.emplace(batch, problem.build_graph(batch)).first;
    p.simulated = evaluator.simulate(p.candidate, it->second, search::make_candidate_plan(it->second, p.candidate), false);
  }
  search::rank_plans(all, k.objective, k.price);
  INFO("brute force: " << all.front().description << ", " << all.front().simulated->step_time_s << " s");
  INFO("search:      " << outcome.plans.front().description << ", " << outcome.plans.front().simulated->step_time_s << " s");
  INFO(outcome.plans.size() << " plans fit");
  CHECK(outcome.plans.front().candidate == all.front().candidate);
  CHECK(outcome.plans.front().simulated->step_time_s == all.front().simulated->step_time_s);
}
