// The input pipeline's tasks in a lowered step (UnitEmitter::emit_inputs; the model is in
// sim/input_pipeline.hpp).
#include <algorithm>

#include "sim/lower.hpp"
#include "sim/lower/unit_emitter.hpp"

namespace parasim::sim {
namespace {

constexpr TaskId kNoTask = UINT32_MAX;

}  // namespace

void UnitEmitter::emit_inputs(std::int64_t stage, std::int64_t j, std::uint32_t key) {
  const LoaderCosts& lc = *loader_;
  const auto m = plan_.micro_batches;
  const auto& devs = layout_.stage_devices(stage);
  const auto copy_label = b_.label("input copy to the device");
  const auto load_label = b_.label("input load (read, decode, augment)");
  std::vector<TaskId> copy_of(devs.size(), kNoTask);
  for (std::size_t k = 0; k < devs.size(); ++k) {
    const std::int64_t d = devs[k];
    const auto ud = static_cast<std::size_t>(d);
    if (lc.copy_ps[ud].count == 0 && lc.load_ps[ud].count == 0) continue;
    auto& loads = load_tasks_[ud];
    if (loads.empty()) loads.assign(static_cast<std::size_t>(m), kNoTask);
    // The copy of micro-batch j: once it is loaded (the first `prefetch` were loaded in the step
    // before) and the device's previous kernel is done (it is issued as the forward starts).
    deps_.clear();
    if (loads[static_cast<std::size_t>(j)] != kNoTask) deps_.push_back(loads[static_cast<std::size_t>(j)]);
    if (last_compute_[ud] != kNoTask) deps_.push_back(last_compute_[ud]);
    const TaskId copy =
        b_.add(TaskKind::Copy, d, stream_index(Stream::HostToDevice), lc.copy_ps[ud], Category::DataLoad, static_cast<std::int32_t>(j), copy_label, deps_);
    copy_of[k] = copy;
    pending_recv_[ud].emplace_back(key, copy);
    // Micro-batch j left the queue: its slot takes micro-batch j + prefetch (the next step's when
    // that is m or more: made now, so the step lasts until its loaders have refilled the queue).
    deps_.assign(1, copy);
    const std::int64_t refill = j + prefetch_;
    const TaskId load = b_.add(TaskKind::Load, d, stream_index(Stream::Loader), lc.load_ps[ud], Category::DataLoad,
                               static_cast<std::int32_t>(refill < m ? refill : refill - m), load_label, deps_);
    if (refill < m) loads[static_cast<std::size_t>(refill)] = load;
  }
  // Sharded: a tensor-parallel group's first device broadcasts what it copied to the others
  // (Megatron-LM's get_batch, tensor_parallel.broadcast_data).
  if (plan_.tp_axis < 0) return;
  for (const Group& grp : layout_.groups(AxisSet{plan_.tp_axis}, stage)) {
    double bytes = 0;
    TaskId root_copy = kNoTask;
    for (const std::int64_t mdev : grp.members) {
      const auto ud = static_cast<std::size_t>(mdev);
      bytes = std::max(bytes, lc.broadcast_bytes[ud]);
      if (lc.broadcast_bytes[ud] == 0 && copy_of[layout_.pos_in_stage(mdev)] != kNoTask) root_copy = copy_of[layout_.pos_in_stage(mdev)];
    }
    if (bytes <= 0) continue;
    deps_.clear();
    if (root_copy != kNoTask) deps_.push_back(root_copy);
    for (const std::int64_t mdev : grp.members)
      if (last_compute_[static_cast<std::size_t>(mdev)] != kNoTask) deps_.push_back(last_compute_[static_cast<std::size_t>(mdev)]);
    std::sort(deps_.begin(), deps_.end());
    deps_.erase(std::unique(deps_.begin(), deps_.end()), deps_.end());
    const auto cid = b_.collective(CollectiveSpec{CollectiveKind::Broadcast, CollectiveAlgorithm::Auto, grp.id, bytes, -1, grp.occupies});
    const TaskId t = b_.add_collective(cid, stream_index(Stream::TensorComm), Category::DataLoad, static_cast<std::int32_t>(j),
                                       b_.label("input broadcast to the tensor-parallel group"), deps_);
    for (const std::int64_t mdev : grp.members) {
      pending_recv_[static_cast<std::size_t>(mdev)].emplace_back(key, t);
      last_task_[static_cast<std::size_t>(mdev)] = t;
    }
  }
}

}  // namespace parasim::sim
