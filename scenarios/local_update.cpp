#include "scenarios/local_update.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "scenarios/loader.hpp"
#include "sim/cost_model.hpp"
#include "sim/local_update.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {

std::int64_t replica_count(const Scenario& s) {
  PARASIM_CHECK(s.local_update.has_value(), "a local-update scenario");
  if (s.local_update->replicas > 0) return s.local_update->replicas;
  return s.cluster.wan ? s.cluster.wan->sites : 1;
}

std::optional<LocalUpdateProblem> local_update_problem(const Scenario& s) {
  const auto& lu = *s.local_update;
  const std::int64_t k = replica_count(s);
  const std::int64_t sites = s.cluster.wan ? s.cluster.wan->sites : 1;
  const std::string where = lu.replicas > 0 ? "/local_update/replicas" : "/local_update";
  const std::string count = std::to_string(k) + (lu.replicas > 0 ? " replicas" : " replicas (one per site)");
  if (k < 2)
    return LocalUpdateProblem{where, "found " + count + ", expected at least 2: local-update training synchronises replicas (give "
                                                        "local_update.replicas, or cluster.wan.sites for one replica per site)"};
  // Replicas take whole nodes, or several share each node in equal parts of its devices.
  const bool whole_nodes = s.cluster.nodes % k == 0;
  const bool shared_nodes = k % s.cluster.nodes == 0 && s.cluster.devices_per_node % (k / s.cluster.nodes) == 0;
  if (!whole_nodes && !shared_nodes)
    return LocalUpdateProblem{where, "found " + count + ", expected a count that splits the cluster's " + std::to_string(s.cluster.nodes) +
                                         " nodes into whole replicas, or each node's " + std::to_string(s.cluster.devices_per_node) +
                                         " devices into equal replicas"};
  if (k % sites != 0)
    return LocalUpdateProblem{where, "found " + count + " on " + std::to_string(sites) +
                                         " sites, expected a multiple of the sites: a replica runs inside one site"};
  if (s.training.global_batch % k != 0)
    return LocalUpdateProblem{"/training/global_batch", "found " + std::to_string(s.training.global_batch) + " samples, expected a multiple of the " +
                                                           count + ": each inner step every replica trains on its share"};
  if (lu.streaming() && lu.fragments > 0 && lu.fragments > lu.inner_steps)
    return LocalUpdateProblem{"/local_update/fragments", "found " + std::to_string(lu.fragments) + " fragments, expected at most the " +
                                                            std::to_string(lu.inner_steps) + " inner steps: each fragment synchronises on its own inner step"};
  if (!lu.streaming() && (lu.fragments != 1 || lu.overlap_steps != 0))
    return LocalUpdateProblem{lu.fragments != 1 ? "/local_update/fragments" : "/local_update/overlap_steps",
                              "\"" + std::string(strategies::to_string(lu.algorithm)) + "\"" +
                                  " synchronises the whole model at once and waits for it; expected \"algorithm\": \"streaming-diloco\" for "
                              "fragments or overlap"};
  if (lu.overlap_steps > lu.inner_steps)
    return LocalUpdateProblem{"/local_update/overlap_steps", "found " + std::to_string(lu.overlap_steps) + ", expected at most the " +
                                                                std::to_string(lu.inner_steps) + " inner steps of an outer step"};
  return std::nullopt;
}

Scenario replica_scenario(const Scenario& s, std::int64_t r) {
  const std::int64_t k = replica_count(s);
  PARASIM_CHECK(r >= 0 && r < k && s.training.global_batch % k == 0, "a replica of a checked local update");
  Scenario v = s;
  v.local_update.reset();
  v.what_ifs.clear();
  v.training.global_batch = s.training.global_batch / k;
  sim::ClusterSpec& c = v.cluster;
  // Whole nodes a replica, or (fewer nodes than replicas) a replica in each equal part of a node.
  const bool whole_nodes = s.cluster.nodes % k == 0;
  const std::int64_t per_node = whole_nodes ? 1 : k / s.cluster.nodes;
  PARASIM_CHECK(whole_nodes || s.cluster.devices_per_node % per_node == 0, "replicas that split the nodes");
  const std::int64_t nodes = whole_nodes ? s.cluster.nodes / k : 1, first_node = whole_nodes ? r * nodes : r / per_node;
  c.nodes = nodes;
  c.devices_per_node = s.cluster.devices_per_node / per_node;
  c.wan.reset();
  // The node groups over [first_node, first_node + nodes), cut to it.
  if (!s.cluster.node_groups.empty()) {
    c.node_groups.clear();
    std::int64_t begin = 0;
    for (const auto& g : s.cluster.node_groups) {
      const std::int64_t lo = std::max(begin, first_node), hi = std::min(begin + g.nodes, first_node + nodes);
      if (lo < hi) {
        sim::NodeGroupSpec part = g;
        part.nodes = hi - lo;
        c.node_groups.push_back(part);
      }
      begin += g.nodes;
    }
  }
  const std::int64_t per_replica = nodes * c.devices_per_node, first_device = r * per_replica;
  c.stragglers.clear();
  for (const auto& st : s.cluster.stragglers)
    if (st.device >= first_device && st.device < first_device + per_replica) c.stragglers.push_back({st.device - first_device, st.speed_factor});
  return v;
}

Scenario synchronous_scenario(const Scenario& s) {
  Scenario v = s;
  v.local_update.reset();
  v.what_ifs.clear();
  if (v.plan.dp > 0) v.plan.dp *= replica_count(s);
  return v;
}

double outer_parameters_per_device(const sim::Result& r, const strategies::Plan& plan) {
  double most = 0;
  for (const auto& st : r.memory) most = std::max(most, st.parameters);
  return plan.zero >= 1 ? most / static_cast<double>(plan.dp()) : most;
}

sim::Simulation simulate_local_update(const Scenario& s, const sim::Profile& profile, sim::Backend backend, const sim::LowerOptions& options,
                                      ProgressSink* progress) {
  PARASIM_CHECK(s.local_update.has_value() && !local_update_problem(s), "a checked local-update scenario");
  strategies::LocalUpdateSpec spec = *s.local_update;
  const std::int64_t k = replica_count(s);
  spec.replicas = k;

  // Each distinct replica's inner step, simulated once (replicas on like nodes share one).
  std::map<std::int64_t, std::size_t> sim_of;  // replica -> index into inner
  std::vector<sim::Simulation> inner;
  std::vector<Scenario> distinct;
  for (std::int64_t r = 0; r < k; ++r) {
    Scenario rs = replica_scenario(s, r);
    const auto same = std::find_if(distinct.begin(), distinct.end(), [&](const Scenario& d) { return d.cluster == rs.cluster; });
    if (same != distinct.end()) {
      sim_of[r] = static_cast<std::size_t>(same - distinct.begin());
      continue;
    }
    const models::Graph graph = build_model(rs);
    const strategies::Plan plan = strategies::make_plan(graph, rs.training, rs.plan, rs.cluster.device_count());
    inner.push_back(sim::simulate(graph, plan, sim::build_cluster(rs.cluster, profile), profile, backend, options, progress));
    sim_of[r] = distinct.size();
    distinct.push_back(std::move(rs));
  }
  std::size_t slowest = 0;
  for (std::size_t i = 1; i < inner.size(); ++i)
    if (inner[i].result.step_time_s > inner[slowest].result.step_time_s) slowest = i;

  // The plan and model every replica runs (their devices differ, not their work).
  const models::Graph graph = build_model(distinct.front());
  const strategies::Plan plan = strategies::make_plan(graph, distinct.front().training, distinct.front().plan, distinct.front().cluster.device_count());
  if (spec.streaming() && spec.fragments == 0)
    spec.fragments = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::lround(static_cast<double>(graph.layers().size()) / 3.0)), 1, spec.inner_steps);
  const double reduce_bytes = static_cast<double>(models::bytes_of(plan.grad_dtype));
  const strategies::OuterStepBytes passes = strategies::outer_step_bytes_per_parameter(spec, reduce_bytes);

  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const std::int64_t per_replica = cluster.device_count() / k;
  sim::OuterProblem problem;
  problem.spec = spec;
  problem.wire_bytes = static_cast<double>(graph.param_count()) * strategies::wire_bytes_per_element(spec, reduce_bytes);
  for (std::int64_t r = 0; r < k; ++r) {
    const sim::Simulation& is = inner[sim_of[r]];
    const double params = outer_parameters_per_device(is.result, plan);
    // The outer step's passes run on the replica's slowest device kind and speed: its first device
    // stands for it (node groups and stragglers are checked per replica by the inner step).
    const sim::Device& d = cluster.devices[static_cast<std::size_t>(r * per_replica)];
    const sim::DeviceProfile& dp = profile.device(d.kind);
    auto pass_s = [&](double bytes_per_param) {
      // About one FLOP per parameter per pass (a multiply-add per element), memory-bound.
      return sim::kernel_seconds(dp, models::OpClass::MemoryBound, models::DType::F32, params, bytes_per_param * params, 0, 1) / d.speed_factor;
    };
    problem.replicas.push_back({r * per_replica, is.result.step_time_s, pass_s(passes.before), pass_s(passes.after)});
  }
  const sim::OuterRun run = sim::simulate_outer(problem, cluster, backend);
  const sim::BandwidthNeed need = sim::wan_bandwidth_for(problem, cluster, backend, 0.95);

  // Synchronous data parallelism on the same devices.
  const Scenario sync = synchronous_scenario(s);
  const models::Graph sync_graph = build_model(sync);
  const strategies::Plan sync_plan = strategies::make_plan(sync_graph, sync.training, sync.plan, sync.cluster.device_count());
  const sim::Simulation sync_sim = sim::simulate(sync_graph, sync_plan, cluster, profile, backend, options, progress);

  sim::Simulation out = std::move(inner[slowest]);
  sim::Result& r = out.result;
  sim::LocalUpdateFigures f;
  f.algorithm = std::string(strategies::to_string(spec.algorithm));
  f.replicas = k;
  f.inner_steps = spec.inner_steps;
  f.fragments = spec.streaming() ? spec.fragments : 1;
  f.overlap_steps = spec.streaming() ? spec.overlap_steps : 0;
  f.compression = std::string(strategies::to_string(spec.compression));
  f.outer_optimizer = std::string(strategies::to_string(spec.outer_optimizer));
  f.inner_step_s = r.step_time_s;
  f.outer_step_s = run.outer_step_s;
  f.time_per_inner_step_s = run.outer_step_s / static_cast<double>(spec.inner_steps);
  // Every replica trains on its share of the global batch each inner step.
  f.samples_per_s = static_cast<double>(s.training.global_batch) / f.time_per_inner_step_s;
  const double tokens_per_sample = r.samples_per_s > 0 ? r.tokens_per_s / r.samples_per_s : 0;
  f.tokens_per_s = f.samples_per_s * tokens_per_sample;
  f.compute_utilisation = run.compute_utilisation;
  f.wan_utilisation = run.wan_utilisation;
  f.wan_bytes_per_inner_step = run.wan_bytes / static_cast<double>(spec.inner_steps);
  f.pseudo_gradient_bytes = problem.wire_bytes;
  f.wan_bandwidth_for_95_bytes_per_s = need.reachable ? need.bytes_per_s : 0;
  f.target_tokens = spec.target_tokens;
  if (spec.target_tokens > 0) f.time_to_target_s = spec.target_tokens / (tokens_per_sample > 0 ? f.tokens_per_s : f.samples_per_s);
  f.sync_step_s = sync_sim.result.step_time_s;
  f.sync_wan_bytes_per_step = sim::wan_bytes(sync_sim.result);
  f.outer_tasks = run.tasks;
  // The outer optimizer's state on every device: the fp32 anchor and (Nesterov) momentum of the
  // parameters it holds, sharded as ZeRO shards the inner optimizer's.
  for (auto& st : r.memory) {
    const double held = plan.zero >= 1 ? st.parameters / static_cast<double>(plan.dp()) : st.parameters;
    st.memory.optimizer_bytes += held * strategies::outer_state_bytes_per_parameter(spec);
    f.outer_state_bytes = std::max(f.outer_state_bytes, held * strategies::outer_state_bytes_per_parameter(spec));
  }
  r.fits = true;
  for (const auto& st : r.memory)
    if (st.memory.total_bytes() > r.memory_capacity_bytes) r.fits = false;
  if (cluster.inter_bandwidth_per_device() < cluster.wan.bandwidth_bytes_per_s)
    r.notes.push_back("The outer synchronisation is simulated through one device per replica, whose network port is narrower than the WAN: "
                      "the replica's devices together would fill the WAN, so the outer step is pessimistic.");
  r.local_update = f;
  return out;
}

}  // namespace parasim::scenarios
