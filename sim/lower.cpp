#include "sim/lower.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "sim/lower/stage_layout.hpp"
#include "sim/lower/unit_emitter.hpp"
#include "sim/lower/unit_order.hpp"
#include "sim/replicas.hpp"
#include "sim/weight_reuse.hpp"
#include "sim/work/work_cost.hpp"

namespace parasim::sim {
namespace {

/// An upper estimate of the task count, to reserve the task arrays once: every unit of chunk c
/// instantiates its items on the stage's devices.
std::size_t reserve_estimate(const StepWork& work, const strategies::Plan& plan, const StageLayout& layout) {
  std::size_t estimate = static_cast<std::size_t>(plan.mesh.device_count()) * 2;
  for (std::size_t c = 0; c < work.chunks.size(); ++c)
    for (const Program* prog : {&work.chunks[c].forward, &work.chunks[c].backward})
      estimate += prog->items.size() * layout.stage_devices(static_cast<std::int64_t>(c) % plan.pp).size() *
                  static_cast<std::size_t>(plan.micro_batches);
  return estimate;
}

}  // namespace

LoweredStep lower(const models::Graph& g, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                  const LowerOptions& options) {
  const std::int64_t devices = plan.mesh.device_count();
  PARASIM_CHECK(devices == cluster.device_count(), "the plan's mesh must cover the cluster's devices");

  LoweredStep out;
  out.work = describe_step(g, plan);
  const WorkDurations durations = work_durations(out.work, plan, cluster, profile);

  if (options.input) out.loader = loader_costs(*options.input, plan, cluster);
  TaskGraphBuilder b(devices, options.input ? kTrainingStreamsWithInput : kTrainingStreams);
  // The data-parallel replica shortcut: simulate the devices of replica 0 only, when every replica
  // would simulate as it does (same devices and same links at the same place of the other axes).
  const bool shortcut = options.replicate_data_parallel && data_parallel_replicas_alike(plan, cluster);
  StageLayout layout(plan, shortcut, b);
  UnitEmitter emitter(out.work, plan, durations, layout, b, out.loader ? &*out.loader : nullptr, options.input ? options.input->prefetch : 0);
  // An input pipeline adds a load, a copy and a broadcast per micro-batch on a device at most.
  b.reserve(reserve_estimate(out.work, plan, layout) + (out.loader ? 3 * layout.simulated_devices().size() * static_cast<std::size_t>(plan.micro_batches) : 0));
  // Units are made in an order every stage's schedule follows and in which each unit comes after
  // the units that send to it, so every resource's issue order follows the task ids
  // (TaskGraph::queues_follow_ids) and the engine simulates the step in one pass over them.
  for (const strategies::PipelineStep& u : unit_order(out.work.chunks, plan.schedule, plan.pp, plan.virtual_stages, plan.micro_batches))
    emitter.emit_unit(u.forward, u.micro_batch, u.chunk);
  emitter.emit_step_end();

  out.tasks = std::move(b).finish_in_id_order();
  // Once each device's issue order is known: what its passes pay for weights out of cache.
  price_weight_reuse(out.tasks, out.work, plan, cluster, profile);
  out.replica_shortcut = shortcut;
  out.simulated_devices = layout.simulated_devices();
  const auto m = static_cast<double>(plan.micro_batches);
  out.model_flops = g.model_flops() * m;
  out.hardware_flops = (g.fwd_flops() + g.bwd_flops() + recompute_flops(g, plan)) * m;
  out.samples = plan.global_batch;
  out.tokens = plan.global_batch * (g.transformer() ? g.transformer()->seq_len : 1);
  return out;
}

}  // namespace parasim::sim
