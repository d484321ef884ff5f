#include "sim/search_estimate.hpp"

#include <algorithm>
#include <numeric>

#include "common/error.hpp"
#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "sim/simulate.hpp"
#include "sim/work/work.hpp"
#include "strategies/memory.hpp"
#include "strategies/pipeline_cut.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::sim {
namespace {

using strategies::InnerAxisUse;
using strategies::search::Candidate;
using strategies::search::Evaluation;

std::size_t category(sim::Category c) { return static_cast<std::size_t>(c); }

/// The first device of pipeline stage `stage` (coordinate 0 on every other axis).
std::int64_t stage_device(const strategies::Plan& plan, std::int64_t stage) {
  std::vector<std::int64_t> coords(plan.mesh.axes.size(), 0);
  if (plan.pp_axis >= 0) coords[static_cast<std::size_t>(plan.pp_axis)] = stage;
  return plan.mesh.device_at(coords);
}

std::int64_t stage_of(const strategies::Plan& plan, std::int64_t device) {
  return plan.pp_axis >= 0 ? plan.mesh.coords_of(device)[static_cast<std::size_t>(plan.pp_axis)] : 0;
}

/// The devices over which stage `stage`'s gradients are reduced: its data axes (dp, ep), and the
/// tensor axis where the stage uses it for data.
std::vector<std::int64_t> data_group(const strategies::Plan& plan, std::int64_t stage, bool tensor_axis_is_data) {
  std::vector<int> axes;
  for (const int a : {plan.dp_axis, plan.ep_axis, plan.cp_axis, tensor_axis_is_data ? plan.tp_axis : -1})
    if (a >= 0 && plan.mesh.axes[static_cast<std::size_t>(a)].size > 1) axes.push_back(a);
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return {};
  return plan.mesh.group_of(stage_device(plan, stage), axes);
}

double seconds_of(const sim::Cluster& cluster, sim::CollectiveKind kind, const std::vector<std::int64_t>& group, double bytes) {
  if (group.size() <= 1 || bytes <= 0) return 0;
  return sim::collective_time(cluster, kind, group, bytes).time.seconds();
}

Evaluation from_result(const sim::Result& r) {
  Evaluation e;
  e.step_time_s = r.step_time_s;
  e.samples_per_s = r.samples_per_s;
  e.tokens_per_s = r.tokens_per_s;
  e.mfu = r.mfu;
  e.data_load_s = r.breakdown.seconds[category(sim::Category::DataLoad)];
  e.compute_s = r.breakdown.compute_s() - e.data_load_s;
  e.exposed_comm_s = r.breakdown.exposed_comm_s();
  e.bubble_s = r.breakdown.idle_s;
  e.tasks = r.tasks;
  e.replica_shortcut = r.replica_shortcut;
  return e;
}

std::int64_t gcd(std::int64_t a, std::int64_t b) { return b == 0 ? a : gcd(b, a % b); }

}  // namespace

SearchEvaluator::SearchEvaluator(ClusterSpec cluster, Profile profile, GraphBuilder build_graph, std::string file, std::optional<InputPipeline> input)
    : cluster_spec_(std::move(cluster)),
      profile_(std::move(profile)),
      build_graph_(std::move(build_graph)),
      file_(std::move(file)),
      input_(std::move(input)) {}

strategies::search::Evaluator SearchEvaluator::evaluator() const {
  strategies::search::Evaluator e;
  e.estimate = [this](const Candidate& c, const models::Graph& g, const strategies::Plan& p) { return estimate(c, g, p); };
  e.simulate = [this](const Candidate& c, const models::Graph& g, const strategies::Plan& p) { return simulate(c, g, p, false); };
  e.refine = [this](const Candidate& c, const models::Graph& g, const strategies::Plan& p) { return simulate(c, g, p, true); };
  e.refine_name = "simgrid";
  e.layer_costs = [this](const Candidate& c, InnerAxisUse use) {
    strategies::search::LayerCosts out;
    for (const ProbeLayer& l : probe(c, use)) {
      out.seconds.push_back(l.forward_s + l.backward_s + l.comm_s);
      out.boundary_s.push_back(l.boundary_s);
    }
    return out;
  };
  return e;
}

const sim::Cluster& SearchEvaluator::cluster(std::int64_t nodes) const {
  const std::lock_guard lock(mutex_);
  auto& slot = clusters_[nodes];
  if (!slot) {
    sim::ClusterSpec spec = cluster_spec_;
    if (nodes != spec.nodes && !spec.inter_node.torus_dims.empty()) {
      // Explicit torus dims fit one device count; another node count takes the most balanced torus
      // of as many dimensions.
      spec.inter_node.torus_ndims = static_cast<std::int64_t>(spec.inter_node.torus_dims.size());
      spec.inter_node.torus_dims.clear();
    }
    spec.nodes = nodes;
    if (auto problem = sim::check_cluster_spec(spec, profile_))
      throw InputError(file_, 0, 0, "/cluster" + problem->pointer,
                       "the cluster with " + std::to_string(nodes) + " nodes: " + problem->message);
    slot = std::make_unique<sim::Cluster>(sim::build_cluster(spec, profile_));
  }
  return *slot;
}

const std::vector<ProbeLayer>& SearchEvaluator::probe(const Candidate& c, InnerAxisUse use) const {
  const ProbeKey key{c.plan.tp, c.plan.cp, c.training.micro_batch, c.plan.ep, static_cast<int>(c.plan.recompute), c.plan.sequence_parallel,
                     static_cast<int>(use)};
  ProbeSlot* slot = nullptr;
  {
    const std::lock_guard lock(mutex_);
    auto& p = probes_[key];
    if (!p) p = std::make_unique<ProbeSlot>();
    slot = p.get();
  }
  std::call_once(slot->once, [&] { slot->layers = run_probe(c, use); });
  return slot->layers;
}

std::vector<ProbeLayer> SearchEvaluator::run_probe(const Candidate& c, InnerAxisUse use) const {
  const std::int64_t dp = c.plan.ep;  // an MoE model needs its expert axis, a sub-axis of dp
  const models::Graph graph = build_graph_(c.training.micro_batch * dp);
  const auto layer_count = static_cast<std::int64_t>(graph.layers().size());
  // One stage per graph layer; a transformer's embeddings and head ride with the first and last
  // block, as Megatron places them (and as check_plan allows at most one stage per block).
  std::vector<std::int64_t> stage_layers(static_cast<std::size_t>(layer_count), 1);
  if (const auto& t = graph.transformer()) {
    stage_layers.assign(static_cast<std::size_t>(t->layers), 1);
    const std::int64_t extra = layer_count - t->layers;
    stage_layers.front() += extra > 0 ? 1 : 0;
    stage_layers.back() += extra > 1 ? extra - 1 : 0;
  }
  strategies::PlanSpec spec = c.plan;
  spec.pp = static_cast<std::int64_t>(stage_layers.size());
  spec.dp = dp;
  spec.schedule = strategies::Schedule::OneFOneB;
  spec.virtual_stages = 1;
  spec.zero = 0;
  spec.fsdp = false;
  spec.stage_layers = stage_layers;
  strategies::TrainingSpec training = c.training;
  training.global_batch = c.training.micro_batch * dp;
  const std::int64_t devices = spec.tp * spec.cp * spec.pp * dp;
  if (auto problem = strategies::check_plan(graph, training, spec, devices))
    throw PlanError("cannot probe the layer costs of " + strategies::search::describe(c) + ": " + problem->message);
  strategies::Plan plan = strategies::make_plan(graph, training, spec, devices);
  if (use == InnerAxisUse::Data) plan = strategies::apply_stage_uses(graph, std::move(plan), std::vector<InnerAxisUse>(static_cast<std::size_t>(spec.pp), use));

  // The probe's cluster: the cluster spec's node kind, as many nodes as the probe needs; a node holds
  // the largest divisor of its device count that divides the probe (so tensor-parallel groups stay
  // inside a node as they do in the candidate).
  sim::ClusterSpec cs = cluster_spec_;
  const std::int64_t per_node = gcd(cs.devices_per_node, devices);
  if (cs.inter_node.nics_per_node > 0)
    cs.inter_node.nics_per_node = std::max<std::int64_t>(1, cs.inter_node.nics_per_node * per_node / cs.devices_per_node);
  cs.devices_per_node = per_node;
  cs.nodes = devices / per_node;
  if (!cs.inter_node.torus_dims.empty()) {
    cs.inter_node.torus_ndims = static_cast<std::int64_t>(cs.inter_node.torus_dims.size());
    cs.inter_node.torus_dims.clear();
  }
  if (cs.nodes > 1 && cs.inter_node.kind == sim::InterNodeKind::None) cs.inter_node.kind = sim::InterNodeKind::FatTree;
  if (auto problem = sim::check_cluster_spec(cs, profile_))
    throw PlanError("cannot probe the layer costs of " + strategies::search::describe(c) + " on a cluster of " + std::to_string(devices) +
                    " devices: " + problem->message);
  const sim::Cluster probe_cluster = sim::build_cluster(cs, profile_);
  const sim::Simulation s = sim::simulate(graph, plan, probe_cluster, profile_);

  // Per probe stage: the first device's time by category, and the sends across each boundary (the
  // slowest tensor-parallel rank's, forward and backward).
  std::vector<ProbeLayer> stages(static_cast<std::size_t>(spec.pp));
  std::vector<const sim::DeviceTimes*> times(static_cast<std::size_t>(devices), nullptr);
  for (const auto& dt : s.result.per_device) times[static_cast<std::size_t>(dt.device)] = &dt;
  for (std::int64_t st = 0; st < spec.pp; ++st) {
    const sim::DeviceTimes* dt = times[static_cast<std::size_t>(stage_device(plan, st))];
    PARASIM_CHECK(dt != nullptr, "probe: every device is simulated");
    const auto& sec = dt->breakdown.seconds;
    ProbeLayer& p = stages[static_cast<std::size_t>(st)];
    p.forward_s = sec[category(sim::Category::Forward)];
    p.backward_s = sec[category(sim::Category::Backward)] + sec[category(sim::Category::Recompute)];
    p.comm_s = sec[category(sim::Category::TensorComm)] + sec[category(sim::Category::ExpertComm)];
    p.optimizer_s = sec[category(sim::Category::Optimizer)];
  }
  std::vector<double> forward_send(stages.size(), 0), backward_send(stages.size(), 0);
  const sim::TaskGraph& g = s.step.tasks;
  for (std::size_t i = 0; i < g.collectives.size(); ++i) {
    const auto& spec_i = g.collectives[i];
    if (spec_i.kind != sim::CollectiveKind::SendRecv) continue;
    const auto members = g.group(spec_i.group);
    const std::int64_t from = stage_of(plan, spec_i.root);
    std::int64_t to = from;
    for (const std::int64_t d : members)
      if (d != spec_i.root) to = stage_of(plan, d);
    const double t = s.collectives[i].time.seconds();
    if (to == from + 1) forward_send[static_cast<std::size_t>(from)] = std::max(forward_send[static_cast<std::size_t>(from)], t);
    if (to + 1 == from) backward_send[static_cast<std::size_t>(to)] = std::max(backward_send[static_cast<std::size_t>(to)], t);
  }
  std::vector<double> stage_params(stages.size(), 0);
  // Per graph layer, its gather units (as sim/work/chunk_program.cpp forms them).
  std::vector<std::set<std::string>> units(static_cast<std::size_t>(layer_count));
  const strategies::Implementation& impl = plan.implementation;
  for (const auto& sw : strategies::stage_weights(graph, plan)) {
    stage_params[static_cast<std::size_t>(sw.stage)] += sw.local_elements;
    if (sw.local_elements < impl.persistence_elements) continue;
    const auto& op = graph.op(sw.op);
    units[static_cast<std::size_t>(op.layer)].insert(impl.gather_unit == strategies::GatherUnit::Layer    ? std::string()
                                                     : impl.gather_unit == strategies::GatherUnit::Module ? op.name
                                                                                                           : sw.weight->name);
  }
  const auto bpp = strategies::bytes_per_parameter(plan);

  // Spread each stage's figures over its graph layers: times by the layers' FLOPs, bytes by their
  // parameters (a transformer's first and last stage hold two or three graph layers).
  std::vector<ProbeLayer> layers(static_cast<std::size_t>(layer_count));
  std::int64_t first = 0;
  for (std::size_t st = 0; st < stages.size(); ++st) {
    const std::int64_t n = stage_layers[st];
    // Shares only where a stage holds several layers (the graph's per-layer totals walk every operator).
    std::vector<double> layer_flops(static_cast<std::size_t>(n), 1.0), layer_params(static_cast<std::size_t>(n), 1.0);
    if (n > 1) {
      for (std::int64_t k = 0; k < n; ++k) {
        const auto li = static_cast<std::int32_t>(first + k);
        layer_flops[static_cast<std::size_t>(k)] = graph.layer_fwd_flops(li) + graph.layer_bwd_flops(li);
        layer_params[static_cast<std::size_t>(k)] = static_cast<double>(graph.layer_param_count(li));
      }
    }
    const double flops = std::accumulate(layer_flops.begin(), layer_flops.end(), 0.0);
    const double params = std::accumulate(layer_params.begin(), layer_params.end(), 0.0);
    for (std::int64_t l = first; l < first + n; ++l) {
      const auto k = static_cast<std::size_t>(l - first);
      const double time_share = flops > 0 ? layer_flops[k] / flops : 1.0 / static_cast<double>(n);
      const double byte_share = params > 0 ? layer_params[k] / params : 1.0 / static_cast<double>(n);
      ProbeLayer& out = layers[static_cast<std::size_t>(l)];
      const ProbeLayer& in = stages[st];
      out.forward_s = in.forward_s * time_share;
      out.backward_s = in.backward_s * time_share;
      out.comm_s = in.comm_s * time_share;
      out.optimizer_s = in.optimizer_s * byte_share;
      out.weight_bytes = stage_params[st] * byte_share * bpp.weights;
      out.gather_units = static_cast<double>(std::max<std::size_t>(1, units[static_cast<std::size_t>(l)].size()));
      out.grad_bytes = stage_params[st] * byte_share * bpp.gradients;
      // The stage's sends leave from its last layer.
      out.boundary_s = l == first + n - 1 ? forward_send[st] + backward_send[st] : 0;
    }
    first += n;
  }
  return layers;
}

Evaluation SearchEvaluator::estimate(const Candidate& c, const models::Graph& graph, const strategies::Plan& plan) const {
  const sim::Cluster& cl = cluster(c.nodes);
  const std::vector<ProbeLayer>& model_layers = probe(c, InnerAxisUse::Model);
  const bool any_data = std::find(c.stage_uses.begin(), c.stage_uses.end(), InnerAxisUse::Data) != c.stage_uses.end();
  const std::vector<ProbeLayer>* data_layers = any_data ? &probe(c, InnerAxisUse::Data) : nullptr;
  const auto use_of = [&](std::int64_t stage) {
    return c.stage_uses.empty() ? InnerAxisUse::Model : c.stage_uses[static_cast<std::size_t>(stage)];
  };

  const std::int64_t pp = plan.pp, v = plan.virtual_stages, chunks = plan.chunks();
  const auto m = static_cast<double>(plan.micro_batches);
  const std::int64_t data_replicas = plan.dp();
  std::vector<double> work(static_cast<std::size_t>(pp), 0), backward(work), compute(work), comm(work), optimizer(work), grads(work),
      weights(work);
  std::vector<double> chunk_send(static_cast<std::size_t>(chunks), 0);
  std::vector<std::vector<std::int64_t>> groups(static_cast<std::size_t>(pp));
  for (std::int64_t s = 0; s < pp; ++s) groups[static_cast<std::size_t>(s)] = data_group(plan, s, use_of(s) == InnerAxisUse::Data);

  // ZeRO-3, per micro-batch: all the stage's gathers of one pass, the backward's again after a
  // recomputation (a layer beyond the implementation's reuse distance), its first layer's and its
  // last's; and its gradient reductions one weight tensor at a time where the implementation
  // reduces so (strategies/implementation.hpp).
  const strategies::Implementation& impl = plan.implementation;
  const double weight_elem_bytes = static_cast<double>(models::bytes_of(models::weight_dtype(plan.precision)));
  std::vector<double> gathers(static_cast<std::size_t>(pp), 0), regathers(gathers), forward(gathers), first_gather(gathers),
      last_gather(gathers), per_parameter_reduce(gathers);
  std::vector<bool> gathered(static_cast<std::size_t>(pp), false);
  // Per stage: one micro-batch's forward and the layers holding weights (for --overlap-param-gather).
  std::vector<double> stage_forward(static_cast<std::size_t>(pp), 0), weight_layers(stage_forward);
  for (std::size_t l = 0; l < plan.chunk_of_layer.size(); ++l) {
    const std::int32_t chunk = plan.chunk_of_layer[l];
    const std::int64_t s = plan.stage_of_chunk(chunk);
    const auto si = static_cast<std::size_t>(s);
    const ProbeLayer& p = (use_of(s) == InnerAxisUse::Data ? *data_layers : model_layers)[l];
    work[si] += p.forward_s + p.backward_s + p.comm_s;
    compute[si] += p.forward_s + p.backward_s;
    comm[si] += p.comm_s;
    backward[si] += p.backward_s;
    optimizer[si] += p.optimizer_s;
    grads[si] += p.grad_bytes;
    weights[si] += p.weight_bytes;
    stage_forward[si] += p.forward_s;
    if (p.weight_bytes > 0) weight_layers[si] += 1;
    // The sends of a chunk leave from its last layer (chunks are contiguous runs of layers).
    chunk_send[static_cast<std::size_t>(chunk)] = p.boundary_s;
    // ZeRO-3 gathers each layer's weights before its forward and again before its backward, every
    // micro-batch, on the data-parallel stream (Rajbhandari et al. 2020, §5.3; as
    // sim/work/weight_gathers.hpp).
    if (plan.zero >= 3 && groups[si].size() > 1) {
      // Its units split the layer's weights evenly, each a gather and the framework's host time.
      const double host = impl.copies_per_rank * profile_.device(cl.devices.front().figures()).kernel_launch_overhead_s *
                          static_cast<double>(groups[si].size());
      const double gather = p.weight_bytes > 0
                                ? p.gather_units * (seconds_of(cl, sim::CollectiveKind::AllGather, groups[si], p.weight_bytes / p.gather_units) + host)
                                : 0;
      gathers[si] += gather;
      if (plan.recompute == strategies::Recompute::Full && p.weight_bytes / weight_elem_bytes > impl.max_reuse_elements) regathers[si] += gather;
      if (impl.reduce_per_parameter && p.grad_bytes > 0)
        per_parameter_reduce[si] +=
            p.gather_units * (seconds_of(cl, gradient_bucket_kind(plan), groups[si], p.grad_bytes / p.gather_units) + host);
      forward[si] += p.forward_s;
      if (!gathered[si]) first_gather[si] = gather;
      gathered[si] = true;
      last_gather[si] = gather;
    }
  }
  // ZeRO-2 and -3 reduce-scatter every micro-batch's gradients (DeepSpeed), on the same stream.
  std::vector<double> reduce(static_cast<std::size_t>(pp), 0);
  for (std::int64_t s = 0; s < pp; ++s) {
    const auto si = static_cast<std::size_t>(s);
    if (groups[si].size() <= 1) continue;
    // The collective the lowering reduces a bucket with (sim/work/work.hpp).
    reduce[si] = per_parameter_reduce[si] > 0 ? per_parameter_reduce[si] : seconds_of(cl, gradient_bucket_kind(plan), groups[si], grads[si]);
    double exposed = 0;
    // ZeRO-2 and -3 reduce-scatter every micro-batch's gradients (DeepSpeed) during its backward.
    // ZeRO-3 also gathers each layer's weights one layer ahead of the compute
    // (sim/work/weight_gathers.hpp): each pass waits for its first gather (the forward's first layer, the
    // backward's last), and the rest are exposed only where they outlast the compute they overlap;
    // the backward's gathers share the data stream with its reduce-scatters.
    // A synchronous implementation overlaps none of it.
    if (plan.zero >= 3 && impl.synchronous)
      exposed += 2 * gathers[si] + regathers[si] + reduce[si];
    else if (plan.zero >= 3)
      exposed += first_gather[si] + last_gather[si] + std::max(0.0, gathers[si] - forward[si]) +
                 std::max(0.0, gathers[si] + regathers[si] + reduce[si] - backward[si]);
    else if (plan.zero >= 2)
      exposed += std::max(0.0, reduce[si] - backward[si]);
    work[si] += exposed;
    comm[si] += exposed;
  }
  double fill_sends = 0;
  for (std::int64_t k = 0; k + 1 < chunks; ++k) {
    const double send = chunk_send[static_cast<std::size_t>(k)];
    fill_sends += send;
    if (plan.blocking_p2p) {
      // A blocking send stalls its sender every micro-batch: forward on this stage, backward on the next.
      work[static_cast<std::size_t>(plan.stage_of_chunk(k))] += send / 2;
      work[static_cast<std::size_t>(plan.stage_of_chunk(k + 1))] += send / 2;
      comm[static_cast<std::size_t>(plan.stage_of_chunk(k))] += send / 2;
      comm[static_cast<std::size_t>(plan.stage_of_chunk(k + 1))] += send / 2;
    }
  }
  // The fill and drain cross pp − 1 stage boundaries each way, however many chunks there are.
  if (chunks > 1) fill_sends *= static_cast<double>(pp - 1) / static_cast<double>(chunks - 1);

  const double slowest = *std::max_element(work.begin(), work.end());
  const double total = std::accumulate(work.begin(), work.end(), 0.0);
  // 1F1B and GPipe: Σ_s W_s + (m − 1)·max W (the fill, then one slowest-stage pass per micro-batch);
  // interleaving divides the fill by v (Narayanan et al. 2021, §2.2: bubble (p − 1)/v).
  const double pipeline = (m - 1) * slowest + (total + static_cast<double>(v - 1) * slowest) / static_cast<double>(v);

  // After the last backward: what is left of the gradient reduction (overlapped with that backward
  // when the plan overlaps it), the optimizer step (on a 1/dp shard under ZeRO), and under ZeRO-1
  // and -2 the all-gather of the updated parameters (the order of sim/lower/step_end.cpp).
  // With overlap_param_gather the gather runs as the next step starts (sim/lower/step_end.cpp): the
  // first stage waits for a layer's share before its first forward and for what outlasts that
  // forward; later stages gather during the pipeline's fill. So it delays the step once, at stage 0.
  double lead = 0;
  const bool zero12 = plan.zero >= 1 && plan.zero < 3;
  if (zero12 && plan.overlap_param_gather) {
    const double gather = seconds_of(cl, sim::CollectiveKind::AllGather, groups[0], weights[0]);
    const double first = gather / std::max(weight_layers[0], 1.0);
    lead = gather > 0 ? first + std::max(0.0, gather - first - stage_forward[0]) : 0.0;
  }
  double tail = 0, tail_comm = 0, tail_opt = 0;
  for (std::int64_t s = 0; s < pp; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const double exposed = plan.overlap_grad_reduce ? std::max(0.0, reduce[si] - backward[si]) : reduce[si];
    const double gather =
        zero12 && !plan.overlap_param_gather ? seconds_of(cl, sim::CollectiveKind::AllGather, groups[si], weights[si]) : 0.0;
    const double opt = optimizer[si] / (plan.zero >= 1 ? static_cast<double>(std::max<std::int64_t>(data_replicas, 1)) : 1.0);
    if (exposed + gather + opt > tail) {
      tail = exposed + gather + opt;
      tail_comm = exposed + gather;
      tail_opt = opt;
    }
  }
  const double compute_step = lead + pipeline + fill_sends + tail;
  // The input pipeline (sim/input_pipeline.hpp): each forward of the first stage waits for its copy,
  // and the step lasts at least its busiest host's loaders' time for the step's samples (m loads
  // back to back) after the first copy.
  double input_wait = 0;
  if (input_) {
    const InputPipeline& in = *input_;
    const bool naive = in.placement == data::Placement::Naive;
    double loaders = 0;
    for (const std::int64_t n : data::samples_read_per_host(plan, cl.devices_per_node, in.placement))
      loaders = std::max(loaders, n > 0 ? host_load_s(in, static_cast<double>(n), naive ? 1 : in.threads_per_host) : 0.0);
    const double samples_per_copy = naive ? static_cast<double>(plan.global_batch) / m : static_cast<double>(plan.micro_batch);
    const double copy = samples_per_copy * (in.bytes.inputs + in.bytes.labels) / in.host_to_device_bytes_per_s;
    input_wait = std::max(m * copy, copy + loaders - compute_step);
  }
  const double step = compute_step + input_wait;

  Evaluation e;
  e.step_time_s = step;
  e.data_load_s = input_wait;
  e.samples_per_s = static_cast<double>(c.training.global_batch) / step;
  const double tokens_per_sample = graph.transformer() ? static_cast<double>(graph.transformer()->seq_len) : 1.0;
  e.tokens_per_s = e.samples_per_s * tokens_per_sample;
  const double model_flops = graph.model_flops() * static_cast<double>(c.training.global_batch) /
                             static_cast<double>(std::max<std::int64_t>(graph.batch(), 1));
  const double peak = sim::gemm_peak_flops(profile_.device(cl.devices.front().figures()), plan.precision);
  e.mfu = model_flops / (step * static_cast<double>(c.devices) * peak);
  const auto mean = [&](const std::vector<double>& x) { return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(pp); };
  e.compute_s = m * mean(compute) + tail_opt;
  e.exposed_comm_s = m * mean(comm) + fill_sends + tail_comm + lead;
  e.bubble_s = std::max(0.0, step - e.compute_s - e.exposed_comm_s - e.data_load_s);
  return e;
}

Evaluation SearchEvaluator::simulate(const Candidate& c, const models::Graph& graph, const strategies::Plan& plan, bool simgrid) const {
  sim::LowerOptions options;
  options.replicate_data_parallel = true;
  options.input = input_;
  const Backend backend = simgrid ? sim::Backend::SimGrid : sim::Backend::Analytical;
  const SteadyState steady = steady_state_counts(plan);
  if (steady.low == 0) return from_result(sim::simulate(graph, plan, cluster(c.nodes), profile_, backend, options).result);
  // A pipeline in its steady state repeats itself: each further micro-batch (each further group of
  // pp, for an interleaved schedule) adds the same work on every stage, while the warm-up, the
  // drain, the gradient reduction and the optimizer step come once a step. So the step is simulated
  // at two micro-batch counts past the warm-up and every figure taken along the line through the two;
  // a search's cost then follows the plans it ranks, not the micro-batches inside them. The
  // extrapolation is checked against whole simulations in tests/sim/search_extrapolation_test.cpp.
  auto at = [&](std::int64_t micro_batches) {
    strategies::Plan p = plan;
    p.micro_batches = micro_batches;
    p.global_batch = micro_batches * plan.micro_batch * plan.dp();
    return from_result(sim::simulate(graph, p, cluster(c.nodes), profile_, backend, options).result);
  };
  const Evaluation low = at(steady.low), high = at(steady.high);
  const double m = static_cast<double>(plan.micro_batches), m1 = static_cast<double>(steady.low), m2 = static_cast<double>(steady.high);
  auto line = [&](double a, double b) { return a + (b - a) * (m - m1) / (m2 - m1); };
  Evaluation e;
  e.step_time_s = line(low.step_time_s, high.step_time_s);
  e.compute_s = line(low.compute_s, high.compute_s);
  e.exposed_comm_s = line(low.exposed_comm_s, high.exposed_comm_s);
  e.bubble_s = line(low.bubble_s, high.bubble_s);
  e.data_load_s = line(low.data_load_s, high.data_load_s);
  // Samples, tokens and model FLOPs per step grow with the micro-batches; their rates are per second.
  const double work = m / m2 * high.step_time_s / e.step_time_s;
  e.samples_per_s = high.samples_per_s * work;
  e.tokens_per_s = high.tokens_per_s * work;
  e.mfu = high.mfu * work;
  e.tasks = low.tasks + high.tasks;  // the tasks simulated
  e.replica_shortcut = high.replica_shortcut;
  e.extrapolated_low = steady.low;
  e.extrapolated_high = steady.high;
  return e;
}

SteadyState steady_state_counts(const strategies::Plan& plan) {
  // Past eight micro-batches a stage (64 at the least) the warm-up's effect on the pipeline's idle
  // time has faded: on GPT-3 175B with tp 8 × pp 8, 1F1B, the step's increment per 8 micro-batches
  // taken from 16 to 24 micro-batches is 6.6e-4 above the one from 256 to 264, taken from 128 to 136
  // 1.1e-5 above it; the line through 64 and 96 gives the step of 512 within 2.9e-5
  // (tests/sim/search_extrapolation_test.cpp), and
  // tp 4 × pp 4 × dp 4's step of 384 within 1.9e-5 (through 32 and 48 it was 8.8e-5).
  const std::int64_t pp = std::max<std::int64_t>(plan.pp, 1);
  const auto round_up = [pp](std::int64_t n) { return (n + pp - 1) / pp * pp; };
  const std::int64_t low = round_up(std::max<std::int64_t>(8 * pp, 64));
  const std::int64_t high = low + round_up(low / 2);
  // Worth it only when the two together are smaller than the step.
  if (plan.micro_batches <= low + high || plan.micro_batches % pp != 0) return {};
  return {low, high};
}

}  // namespace parasim::sim
