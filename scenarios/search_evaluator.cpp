#include "scenarios/search_evaluator.hpp"

#include "scenarios/data.hpp"
#include "scenarios/model_source.hpp"

namespace parasim::scenarios {

sim::SearchEvaluator search_evaluator(const Scenario& scenario, sim::Profile profile) {
  // A sample's bytes do not depend on the batch the graph is built for.
  std::optional<sim::InputPipeline> input;
  if (scenario.data) input = input_pipeline(scenario, build_model_graph(scenario.model, 1, scenario.file), profile);
  return sim::SearchEvaluator(
      scenario.cluster, std::move(profile),
      [model = scenario.model, file = scenario.file](std::int64_t batch) { return build_model_graph(model, batch, file); }, scenario.file,
      std::move(input));
}

strategies::search::SearchProblem search_problem(const Scenario& scenario, const sim::Profile& profile) {
  strategies::search::SearchProblem problem;
  problem.build_graph = [model = scenario.model, file = scenario.file](std::int64_t batch) { return build_model_graph(model, batch, file); };
  problem.training = scenario.training;
  problem.base = scenario.plan;
  problem.nodes = scenario.cluster.nodes;
  problem.devices_per_node = scenario.cluster.devices_per_node;
  problem.usable_memory_bytes = profile.device(scenario.cluster.device).usable_memory_bytes();
  return problem;
}

}  // namespace parasim::scenarios
