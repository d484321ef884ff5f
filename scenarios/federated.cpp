#include "scenarios/federated.hpp"

#include "common/error.hpp"
#include "scenarios/loader.hpp"
#include "sim/cost_model.hpp"
#include "sim/federated.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {

sim::FederatedInputs federated_inputs(const Scenario& s, const sim::Profile& profile, const sim::Result& client_step, const models::Graph& graph,
                                     const strategies::Plan& plan) {
  PARASIM_CHECK(s.federated.has_value(), "a federated scenario");
  const strategies::FederatedSpec& spec = *s.federated;
  // The model goes to a client and its update comes back in the gradient reduction's dtype (the
  // weights' in a client's training precision, fp32 where it trains in fp32).
  const double params = static_cast<double>(graph.param_count());
  const double element = static_cast<double>(models::bytes_of(plan.grad_dtype));
  sim::FederatedInputs in;
  in.spec = spec;
  in.client_step_s = client_step.step_time_s;
  in.model_bytes = params * element;
  in.samples_per_step = static_cast<double>(s.training.global_batch);
  // The server: a device of the scenario's kind. Adding an update reads it and reads and writes the
  // fp32 sum (element + 8 bytes a parameter); the server optimizer reads and writes its state and
  // the parameters (Reddi et al. 2021, Algorithm 2: the mean 2 × 4 bytes; with momentum 5 × 4;
  // Adam and Yogi, two moments, 7 × 4), each a memory-bound pass of about a FLOP per element a state.
  const sim::DeviceProfile& server = profile.device(s.cluster.device);
  in.aggregate_s_per_update = sim::kernel_seconds(server, models::OpClass::MemoryBound, models::DType::F32, params, (element + 8) * params, 0, 1);
  const double passes = server_state_passes(spec.server_optimizer);
  in.server_update_s = sim::kernel_seconds(server, models::OpClass::MemoryBound, models::DType::F32, passes * params, passes * 4 * params, 0, 1);
  return in;
}

sim::Simulation simulate_federated_scenario(const Scenario& s, const sim::Profile& profile, sim::Backend backend, const sim::LowerOptions& options,
                                            ProgressSink* progress) {
  PARASIM_CHECK(s.federated.has_value(), "a federated scenario");
  const strategies::FederatedSpec& spec = *s.federated;
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  sim::Simulation out = sim::simulate(graph, plan, cluster, profile, backend, options, progress);

  const sim::FederatedInputs in = federated_inputs(s, profile, out.result, graph, plan);
  const sim::FederatedRun run = sim::simulate_federated(in);

  sim::FederatedFigures f;
  f.algorithm = std::string(strategies::to_string(spec.algorithm));
  f.server_optimizer = std::string(strategies::to_string(spec.server_optimizer));
  f.population = spec.population;
  f.per_round = spec.per_round;
  f.local_steps = spec.local_steps;
  f.rounds = spec.rounds;
  f.seed = spec.seed;
  f.speed = strategies::describe(spec.speed);
  f.upload_mbps = strategies::describe(spec.upload_mbps);
  f.download_mbps = strategies::describe(spec.download_mbps);
  f.availability = strategies::describe(spec.availability);
  f.server_gbps = spec.server_gbps;
  f.deadline_s = spec.deadline_s;
  f.client_step_s = in.client_step_s;
  f.model_bytes = in.model_bytes;
  f.round_mean_s = run.mean_s;
  f.round_p50_s = run.p50_s;
  f.round_p90_s = run.p90_s;
  f.round_p99_s = run.p99_s;
  f.unavailable_fraction = run.unavailable_fraction;
  f.late_fraction = run.late_fraction;
  f.samples_per_round = run.samples_per_round;
  f.samples_per_s = run.mean_s > 0 ? run.samples_per_round / run.mean_s : 0;
  f.server_bytes_per_round = run.server_bytes_per_round;
  f.server_link_utilisation = run.server_link_utilisation;
  f.target_samples = spec.target_samples;
  if (spec.target_samples > 0 && f.samples_per_s > 0) f.time_to_target_s = spec.target_samples / f.samples_per_s;
  out.result.federated = f;
  return out;
}

}  // namespace parasim::scenarios
