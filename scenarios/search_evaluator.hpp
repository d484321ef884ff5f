#pragma once
/// The plan search's evaluator (sim/search_estimate.hpp) for a loaded scenario: what the evaluator
/// needs of it — its cluster, its model (built by build_model_graph) and its file name — handed over.
#include "scenarios/scenario.hpp"
#include "sim/profile.hpp"
#include "sim/search_estimate.hpp"
#include "strategies/search/search.hpp"

namespace parasim::scenarios {

/// The evaluator of `scenario`'s plans on its cluster under `profile` (the scenario's own, or one
/// given on the command line; the cluster must have been checked against it). `scenario` must come
/// from the loader; the evaluator keeps copies of what it uses.
[[nodiscard]] sim::SearchEvaluator search_evaluator(const Scenario& scenario, sim::Profile profile);

/// The search problem of `scenario` on its cluster: its model (built by build_model_graph, from
/// copies), training, plan (the knobs the search does not vary), node shape and the device's usable
/// memory under `profile`. The reference plan is left to the caller.
[[nodiscard]] strategies::search::SearchProblem search_problem(const Scenario& scenario, const sim::Profile& profile);

}  // namespace parasim::scenarios
