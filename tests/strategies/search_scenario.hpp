#pragma once
// Runs the search a bundled scenario describes, as `parasim search` does (without the simgrid
// refinement), for the tests that check a search's answer.
#include <string>

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/search_evaluator.hpp"
#include "scenarios/search_spec.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/search.hpp"

namespace parasim::testing {

/// Runs the search a bundled scenario describes (its "search" object), on two threads, with the
/// scenario's plan as the reference; checks the scenario's device count and data-parallel degree.
inline strategies::search::SearchOutcome search_scenario(const std::string& file, std::int64_t devices, std::int64_t dp) {
  const scenarios::Scenario s = scenarios::load_scenario(file);
  const sim::SearchEvaluator evaluator = scenarios::search_evaluator(s, scenarios::scenario_profile(s));
  const scenarios::SearchSpec spec = scenarios::decode_search_spec(JsonDocument::read_file(file), s, evaluator.profile());
  strategies::search::SearchProblem problem = scenarios::search_problem(s, evaluator.profile());
  strategies::search::Candidate reference;
  reference.nodes = s.cluster.nodes;
  reference.devices = s.cluster.device_count();
  reference.training = s.training;
  reference.plan = s.plan;
  reference.plan.dp = strategies::resolve_dp(s.plan, reference.devices);
  problem.reference = reference;
  REQUIRE(reference.devices == devices);
  REQUIRE(reference.plan.dp == dp);

  strategies::search::SearchOptions options;
  options.space = spec.space;
  options.objective = spec.objective;
  options.simulate_top = spec.simulate_top;
  options.refine_top = 0;
  return strategies::search::run_search(problem, options, evaluator.evaluator(), strategies::search::ThreadExecutor(2));
}

}  // namespace parasim::testing
