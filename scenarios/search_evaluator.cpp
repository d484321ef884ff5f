#include "scenarios/search_evaluator.hpp"

#include "scenarios/model_source.hpp"

namespace parasim::scenarios {

sim::SearchEvaluator search_evaluator(const Scenario& scenario, sim::Profile profile) {
  return sim::SearchEvaluator(
      scenario.cluster, std::move(profile),
      [model = scenario.model, file = scenario.file](std::int64_t batch) { return build_model_graph(model, batch, file); }, scenario.file);
}

}  // namespace parasim::scenarios
