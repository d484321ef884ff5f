// The end of a lowered step (UnitEmitter::emit_step_end): tied-weight gradient reductions, the
// optimizer step, ZeRO's parameter all-gather.
#include <algorithm>

#include "sim/lower.hpp"
#include "sim/lower/unit_emitter.hpp"
#include "sim/lower/unit_order.hpp"

namespace parasim::sim {
namespace {

constexpr TaskId kNoTask = UINT32_MAX;
constexpr std::uint8_t kDataStream = stream_index(Stream::DataComm);
constexpr std::uint8_t kComputeStream = stream_index(Stream::Compute);

}  // namespace

void UnitEmitter::emit_step_end() {
  // One optimizer label per stage, each carrying that stage's optimizer work.
  std::vector<std::uint32_t> optimizer_labels;
  for (std::int64_t stage = 0; stage < plan_.pp; ++stage) optimizer_labels.push_back(b_.label("optimizer step", work_.optimizer_work(stage)));
  emit_tied_gradients();
  const std::vector<TaskId> optimizer_task = emit_optimizer_steps(optimizer_labels);
  if (!plan_.overlap_param_gather) emit_parameter_gathers(optimizer_task);
}

// A weight held by several stages (a tied embedding) has its gradient summed over them, between the
// devices at the same place of every other mesh axis, before the optimizer step.
void UnitEmitter::emit_tied_gradients() {
  for (const TiedGradient& tied : work_.tied) {
    const auto label = b_.label("tied-weight gradient all-reduce " + tied.weight);
    for (std::int64_t d : layout_.stage_devices(tied.stages.front())) {
      std::vector<std::int64_t> members;
      for (std::int64_t st : tied.stages) members.push_back(layout_.peer_device(d, st));
      std::sort(members.begin(), members.end());
      deps_.clear();
      for (std::int64_t mdev : members)
        if (last_task_[static_cast<std::size_t>(mdev)] != kNoTask) deps_.push_back(last_task_[static_cast<std::size_t>(mdev)]);
      std::sort(deps_.begin(), deps_.end());
      deps_.erase(std::unique(deps_.begin(), deps_.end()), deps_.end());
      const auto cid = b_.collective(
          CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, b_.group(members), tied.bytes, -1, CollectiveSpec::kWholeGroup});
      const TaskId t = b_.add_collective(cid, kDataStream, Category::GradientComm, -1, label, deps_);
      for (std::int64_t mdev : members) {
        last_task_[static_cast<std::size_t>(mdev)] = t;
        grad_tasks_[static_cast<std::size_t>(mdev)].push_back(t);
      }
    }
  }
}

std::vector<TaskId> UnitEmitter::emit_optimizer_steps(const std::vector<std::uint32_t>& labels) {
  std::vector<TaskId> optimizer_task(last_task_.size(), kNoTask);
  for (std::int64_t d : layout_.simulated_devices()) {
    const auto ud = static_cast<std::size_t>(d);
    const std::int64_t stage = layout_.stage_of(d);
    const Picoseconds duration = durations_.of(d, work_.optimizer_work(stage));
    const TaskId t =
        b_.add(TaskKind::Compute, d, kComputeStream, duration, Category::Optimizer, -1, labels[static_cast<std::size_t>(stage)], grad_tasks_[ud]);
    optimizer_task[ud] = t;
    last_task_[ud] = t;
  }
  return optimizer_task;
}

// ZeRO 1–2: every device updated its shard; the data-parallel group gathers the updated weights.
void UnitEmitter::emit_parameter_gathers(const std::vector<TaskId>& optimizer_task) {
  if (!gathers_parameters()) return;
  const double weight_bytes = static_cast<double>(models::bytes_of(models::weight_dtype(plan_.precision)));
  for (std::int64_t stage = 0; stage < plan_.pp; ++stage) {
    for (const Group& grp : layout_.groups(work_.data_axes, stage)) {
      deps_.clear();
      for (std::int64_t mdev : grp.members) deps_.push_back(optimizer_task[static_cast<std::size_t>(mdev)]);
      const auto cid = b_.collective(CollectiveSpec{CollectiveKind::AllGather, CollectiveAlgorithm::Auto, grp.id,
                                                    work_.stage_gathered[static_cast<std::size_t>(stage)] * weight_bytes, -1, grp.occupies});
      const TaskId t = b_.add_collective(cid, stream_index(stream_of_axes(plan_.mesh, work_.data_axes)), Category::GradientComm, -1,
                                         b_.label("parameter all-gather"), deps_);
      for (std::int64_t mdev : grp.members) last_task_[static_cast<std::size_t>(mdev)] = t;
    }
  }
}

// Megatron-LM's --overlap-param-gather: the optimizer step of step N − 1 leaves the all-gathers of
// the updated shards in flight, and each layer's forward pass in step N waits for its own bucket. In
// the steady state one step shows: the gather of chunk c starts with the step; a mean layer's
// share (the chunk's bytes over its layers with weights) must arrive before the chunk's first
// forward unit runs, the rest before the chunk's next unit (the forward of micro-batch 1, or the
// backward of micro-batch 0 when there is one micro-batch). So the first bucket is exposed and the
// rest hides under the first micro-batch's forward as far as that forward lasts; a device whose
// gather outlasts that forward waits, at the next unit rather than between layers.
void UnitEmitter::emit_parameter_gathers_ahead(std::int64_t c) {
  const auto uc = static_cast<std::size_t>(c);
  const double bytes = work_.chunk_gathered[uc] * static_cast<double>(models::bytes_of(models::weight_dtype(plan_.precision)));
  if (bytes <= 0) return;
  const double first_bytes = bytes / static_cast<double>(std::max<std::int64_t>(work_.chunk_weight_layers[uc], 1));
  const std::int64_t stage = c % plan_.pp;
  const std::uint8_t stream = stream_index(stream_of_axes(plan_.mesh, work_.data_axes));
  const std::uint32_t first_key = unit_index(true, 0, c, plan_.micro_batches, chunks_);
  const std::uint32_t rest_key =
      plan_.micro_batches > 1 ? unit_index(true, 1, c, plan_.micro_batches, chunks_) : unit_index(false, 0, c, plan_.micro_batches, chunks_);
  const auto first_label = b_.label("parameter all-gather (a layer's share, ahead of the forward)");
  const auto rest_label = b_.label("parameter all-gather (under the first forward)");
  for (const Group& grp : layout_.groups(work_.data_axes, stage)) {
    deps_.clear();
    const auto first_cid = b_.collective(CollectiveSpec{CollectiveKind::AllGather, CollectiveAlgorithm::Auto, grp.id, first_bytes, -1, grp.occupies});
    const TaskId first = b_.add_collective(first_cid, stream, Category::GradientComm, -1, first_label, deps_);
    TaskId rest = kNoTask;
    if (bytes > first_bytes) {
      deps_.assign(1, first);
      const auto rest_cid =
          b_.collective(CollectiveSpec{CollectiveKind::AllGather, CollectiveAlgorithm::Auto, grp.id, bytes - first_bytes, -1, grp.occupies});
      rest = b_.add_collective(rest_cid, stream, Category::GradientComm, -1, rest_label, deps_);
    }
    for (std::int64_t mdev : grp.members) {
      auto& inbox = pending_recv_[static_cast<std::size_t>(mdev)];
      inbox.emplace_back(first_key, first);
      if (rest != kNoTask) inbox.emplace_back(rest_key, rest);
    }
  }
}

}  // namespace parasim::sim
