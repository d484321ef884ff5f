#pragma once
// Small simulations for the report tests: GPT-2 (12 layers, hidden 768) at sequence length 128 on one
// DGX node of 8 GPUs, tensor 2 × pipeline 2 × data 2, 1F1B, global batch 8 (micro-batch 1, so 4
// micro-batches per replica). Small enough to simulate in milliseconds, large enough to hold every
// stream, pipeline sends, tensor- and data-parallel collectives.
#include <string>

#include <catch2/catch.hpp>

#include "models/zoo.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

namespace parasim::testing {

/// The simulation above on `preset` ("dgx-a100", "dgx-h100", ...), its Result named (scenario, variant).
inline sim::Simulation tiny_simulation(const std::string& preset = "dgx-a100", const std::string& scenario = "tiny",
                                       const std::string& variant = "base") {
  const sim::Profile& profile = sim::datasheet_profile();
  auto cluster_spec = sim::cluster_preset(preset);
  REQUIRE(cluster_spec.has_value());
  cluster_spec->nodes = 1;
  const sim::Cluster cluster = sim::build_cluster(*cluster_spec, profile);
  REQUIRE(cluster.device_count() == 8);

  strategies::TrainingSpec training;
  training.global_batch = 8;
  training.micro_batch = 1;
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  models::ModelOptions options;
  options.batch = training.micro_batch * spec.dp;
  options.seq_len = 128;
  const models::Graph graph = models::build_named_model("gpt2", options);
  const auto problem = strategies::check_plan(graph, training, spec, cluster.device_count());
  INFO((problem ? problem->message : std::string("plan ok")));
  REQUIRE_FALSE(problem);
  const strategies::Plan plan = strategies::make_plan(graph, training, spec, cluster.device_count());
  sim::Simulation s = sim::simulate(graph, plan, cluster, profile);
  s.result.scenario = scenario;
  s.result.variant = variant;
  return s;
}

}  // namespace parasim::testing
