// A search simulates a plan of many micro-batches at two shorter steps past its warm-up and takes
// every figure along the line through them (sim/search_estimate.hpp, SearchEvaluator::simulate):
// checked here against the whole step's simulation, on GPT-3 175B over 64 A100 (8 DGX A100), the
// size at which a search's cost used to follow its plans' micro-batches.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>

#include "scenarios/loader.hpp"
#include "scenarios/model_source.hpp"
#include "scenarios/search_evaluator.hpp"
#include "sim/search_estimate.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"
#include "tests/cli/run_parasim.hpp"

namespace {

using namespace parasim;

struct Case {
  const char* name;
  strategies::PlanSpec spec;
  std::int64_t global_batch;
};

strategies::PlanSpec spec_of(std::int64_t tp, std::int64_t pp, strategies::Schedule schedule, std::int64_t virtual_stages, int zero) {
  strategies::PlanSpec s;
  s.tp = tp;
  s.pp = pp;
  s.schedule = schedule;
  s.virtual_stages = virtual_stages;
  s.zero = zero;
  s.recompute = strategies::Recompute::Full;
  return s;
}

}  // namespace

TEST_CASE("a search's extrapolated step matches the whole step's simulation", "[sim][search]") {
  const parasim::testing::TempDir dir_temp("search-extrapolation");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string file = (dir / "gpt3.json").string();
  std::ofstream(file) << R"({ "name": "gpt3-64", "model": { "preset": "gpt3-175b", "seq_len": 2048 },
    "training": { "global_batch": 512, "micro_batch": 1, "precision": "fp16", "optimizer": "adam" },
    "cluster": { "preset": "dgx-a100", "nodes": 8 }, "plan": { "tp": 8, "pp": 8 } })";
  const scenarios::Scenario s = scenarios::load_scenario(file);
  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(s, scenarios::scenario_profile(s));

  // Each a pipeline the search ranks on 64 GPUs (96 layers), with its micro-batches per replica:
  // 512, 256, 256 and 192.
  const Case cases[] = {
      {"tp 8 × pp 8, 1F1B", spec_of(8, 8, strategies::Schedule::OneFOneB, 1, 1), 512},
      {"tp 8 × pp 4 × dp 2, interleaved 1F1B v 2", spec_of(8, 4, strategies::Schedule::Interleaved1F1B, 2, 1), 512},
      {"tp 8 × pp 2 × dp 4, GPipe", spec_of(8, 2, strategies::Schedule::GPipe, 1, 1), 1024},
      {"tp 8 × dp 8, ZeRO-3", spec_of(8, 1, strategies::Schedule::OneFOneB, 1, 3), 1536},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    strategies::TrainingSpec training = s.training;
    training.global_batch = k.global_batch;
    const std::int64_t dp = strategies::resolve_dp(k.spec, 64);
    const models::Graph graph = scenarios::build_model_graph(s.model, training.micro_batch * dp, s.file);
    const strategies::Plan plan = strategies::make_plan(graph, training, k.spec, 64);
    const sim::SteadyState steady = sim::steady_state_counts(plan);
    // 8·pp micro-batches (64 at the least), then half as many again, in whole groups of pp.
    REQUIRE(steady.low == std::max<std::int64_t>(64, 8 * plan.pp));
    REQUIRE(steady.high == steady.low + steady.low / 2);

    strategies::search::Candidate c;
    c.nodes = 8;
    c.devices = 64;
    c.training = training;
    c.plan = k.spec;
    const strategies::search::Evaluation e = evaluator.simulate(c, graph, plan, false);
    REQUIRE(e.extrapolated_low == steady.low);
    REQUIRE(e.extrapolated_high == steady.high);

    sim::LowerOptions options;
    options.replicate_data_parallel = true;
    const sim::Simulation whole = sim::simulate(graph, plan, evaluator.cluster(8), evaluator.profile(), sim::Backend::Analytical, options);
    const sim::Result& r = whole.result;
    // The tasks simulated: the two shorter steps' together, fewer than the whole step's.
    CHECK(e.tasks < r.tasks);
    // Measured: 2.9e-5, 4.1e-6, 2.8e-6 and 0 of the step, all of it in the pipeline's idle time (the
    // warm-up's effect fading, sim/search_estimate.cpp); ZeRO-3 without a pipeline is exact.
    CHECK(e.step_time_s == Approx(r.step_time_s).epsilon(1e-4));
    CHECK(e.samples_per_s == Approx(r.samples_per_s).epsilon(1e-4));
    CHECK(e.tokens_per_s == Approx(r.tokens_per_s).epsilon(1e-4));
    CHECK(e.mfu == Approx(r.mfu).epsilon(1e-4));
    // The breakdown's parts, each within 1e-4 of the step (the parts sum to it).
    CHECK(std::abs(e.bubble_s - r.breakdown.idle_s) < 1e-4 * r.step_time_s);
    CHECK(std::abs(e.exposed_comm_s - r.breakdown.exposed_comm_s()) < 1e-4 * r.step_time_s);
    CHECK(std::abs(e.compute_s - (r.breakdown.compute_s() - r.breakdown.seconds[static_cast<std::size_t>(sim::Category::DataLoad)])) < 1e-4 * r.step_time_s);
  }
}
