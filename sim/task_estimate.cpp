#include "sim/task_estimate.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "sim/work/work.hpp"

namespace parasim::sim {
namespace {

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

// Saturating arithmetic: a plan may ask for more than 2^64 tasks (a huge batch on a huge mesh); the
// estimate then says "at least UINT64_MAX" instead of wrapping to a small number.
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
void accumulate(std::uint64_t& total, std::uint64_t a, std::uint64_t times) { total = add(total, mul(a, times)); }

}  // namespace

// Memory, array by array, of the two phases that hold the whole graph (each a resident peak: arrays
// are filled, so their pages are touched; a reserve beyond that is not):
//  - the lowering, when TaskGraphBuilder::finish lays out the queues — per task: the TaskGraph's kind 1
//    + stream 1 + owner 4 + duration 8 + category 1 + micro-batch 4 + label 4 + dep_begin 4 = 27 B and
//    finish's count of each task's enqueues 4 B: 31 B; per queue entry: the builder's per-resource
//    queue 4 B (8 B once a vector has doubled), the CSR queue 4 B and the lowering's per-device task
//    list 4 B (8 B): 20 B; per dependency: TaskGraph deps 4 B;
//  - the engine (simulate_fifo) — per task: the TaskGraph's 27 B, the pending count 4, successor
//    offsets 4, ready time 8 and the Timeline's start time 8: 51 B; per queue entry: the CSR queue
//    4 B; per dependency: TaskGraph deps 4 B and the successor list 4 B: 8 B.
// Measured against this: GPT-3 175B on 1024 A100 (scenarios/examples/gpt3-175b-1024-a100.json with
// its interleaved schedule, --no-replica-shortcut) estimates 11.6 million tasks, 18.5 million queue
// entries and 19.3 million dependencies: an engine phase of 821 MB, 1,027 MB with the slack; the run
// peaks at 848 MB resident.
TaskEstimate estimate_task_graph(const models::Graph& g, const strategies::Plan& plan, const TaskEstimateOptions& options) {
  const auto& mesh = plan.mesh;
  const StepWork work = describe_step(g, plan);
  const std::int64_t pp = std::max<std::int64_t>(plan.pp, 1);
  const bool one_replica = options.one_data_parallel_replica && plan.dp_axis >= 0 && mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size > 1;
  // Devices of one stage that get tasks, and the groups a collective over `axes` forms among them
  // (with one replica simulated, the dp axis contributes no members).
  const std::uint64_t replicas = one_replica ? u64(mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size) : 1;
  const std::uint64_t stage_devices = u64(mesh.device_count()) / u64(pp) / replicas;
  auto groups = [&](const AxisSet& axes) {
    std::uint64_t members = 1;
    for (int a : axes)
      if (!(one_replica && a == plan.dp_axis)) members *= u64(mesh.axes[static_cast<std::size_t>(a)].size);
    return stage_devices / std::max<std::uint64_t>(members, 1);
  };

  TaskEstimate e;
  std::uint64_t sends = 0;
  const std::uint64_t m = u64(plan.micro_batches);
  auto add_collective = [&](const AxisSet& axes, std::uint64_t times) {
    accumulate(e.tasks, groups(axes), times);
    accumulate(e.queue_entries, stage_devices, times);  // the groups of one stage cover its devices once
  };
  // Every unit instantiates its program's items: compute items and sends on each device of the
  // stage, collectives once per group.
  for (const ChunkWork& chunk : work.chunks) {
    for (const Program* prog : {&chunk.forward, &chunk.backward}) {
      for (const WorkItem& it : prog->items) {
        if (it.kind == ItemKind::Collective) {
          add_collective(it.axes, m);
        } else {
          accumulate(e.tasks, stage_devices, m);
          accumulate(e.queue_entries, stage_devices, m);
          if (it.kind == ItemKind::Send) accumulate(sends, stage_devices, m);
        }
      }
    }
  }
  // Gradient buckets, as sim/lower/unit_emitter.cpp makes them: by the backward units that sync
  // gradients (the last micro-batch's, or every one under ZeRO-2/3); with overlap each leaves as it
  // fills, else the last micro-batch's wait for the stage's whole backward, one bucket per axis set.
  std::vector<std::map<AxisSet, double>> held(static_cast<std::size_t>(pp));
  for (std::int64_t c = 0; c < plan.chunks(); ++c) {
    const GradientBuckets buckets = gradient_buckets(work.chunks[static_cast<std::size_t>(c)].backward, plan);
    const std::uint64_t syncing = syncing_micro_batches(plan);
    for (const auto& after : buckets.after)
      for (const auto& [axes, bytes] : after) add_collective(axes, syncing);
    const std::uint64_t at_end = plan.overlap_grad_reduce ? syncing : syncing - 1;
    for (const auto& [axes, bytes] : buckets.rest)
      if (bytes > 0) add_collective(axes, at_end);
    if (plan.overlap_grad_reduce) continue;
    auto& stage_held = held[static_cast<std::size_t>(c % pp)];
    for (const auto& [axes, bytes] : buckets.rest) stage_held[axes] += bytes;
    if (c == c % pp)  // the stage's first chunk: its backward is the stage's last
      for (const auto& [axes, bytes] : stage_held)
        if (bytes > 0) add_collective(axes, 1);
  }

  // A tied weight's gradient: one all-reduce per device of the first stage holding it, over the
  // stages holding it.
  for (const TiedGradient& tied : work.tied) {
    accumulate(e.tasks, stage_devices, 1);
    accumulate(e.queue_entries, stage_devices, tied.stages.size());
  }
  // The optimizer step on every device, then (ZeRO 1–2) the parameter all-gather over the data axes.
  accumulate(e.tasks, stage_devices, u64(pp));
  accumulate(e.queue_entries, stage_devices, u64(pp));
  if (plan.zero >= 1 && plan.zero < 3 && !work.data_axes.empty()) {
    if (!plan.overlap_param_gather) {
      add_collective(work.data_axes, u64(pp));
    } else {
      // Issued ahead of each chunk's forward (sim/lower/step_end.cpp): a mean layer's share, then
      // the rest where the chunk has more than one layer with weights; a unit of the chunk waits on each.
      for (std::size_t c = 0; c < work.chunk_gathered.size(); ++c) {
        if (work.chunk_gathered[c] <= 0) continue;
        const std::uint64_t pieces = work.chunk_weight_layers[c] > 1 ? 2 : 1;
        accumulate(e.tasks, groups(work.data_axes), pieces);
        accumulate(e.queue_entries, stage_devices, pieces);
        accumulate(sends, stage_devices, pieces);
      }
    }
  }

  // Each queue entry waits on the previous task of its device stream (a collective on each member's);
  // each receive on its send.
  e.dependencies = add(e.queue_entries, sends);
  auto phase = [&](const PhaseBytes& p) {
    std::uint64_t bytes = 0;
    accumulate(bytes, e.tasks, p.per_task);
    accumulate(bytes, e.queue_entries, p.per_queue_entry);
    accumulate(bytes, e.dependencies, p.per_dependency);
    return bytes;
  };
  const std::uint64_t peak = std::max(phase(kLoweringBytes), phase(kEngineBytes));
  e.memory_bytes = add(mul(peak / kMemorySlackDenominator, kMemorySlackNumerator),
                       peak % kMemorySlackDenominator * kMemorySlackNumerator / kMemorySlackDenominator);
  return e;
}

}  // namespace parasim::sim
