#include "sim/lower/unit_emitter.hpp"

#include <algorithm>
#include <array>

#include "sim/lower.hpp"
#include "sim/lower/unit_order.hpp"

namespace parasim::sim {

namespace {

constexpr TaskId kNoTask = UINT32_MAX;
constexpr std::uint32_t kNoCollective = UINT32_MAX;

}  // namespace


UnitEmitter::UnitEmitter(const StepWork& work, const strategies::Plan& plan, const WorkDurations& durations, StageLayout& layout,
                         TaskGraphBuilder& builder, const LoaderCosts* loader, std::int64_t prefetch)
    : loader_(loader),
      prefetch_(prefetch),
      work_(work), plan_(plan), durations_(durations), layout_(layout), b_(builder), chunks_(static_cast<std::int64_t>(work.chunks.size())) {
  // Labels are interned program by program, item by item, so their ids follow the programs; a
  // compute item's label carries its work (TaskGraph::label_work).
  for (const ChunkWork& chunk : work.chunks) {
    for (const Program* program : {&chunk.forward, &chunk.backward}) {
      auto& ids = labels_.emplace_back();
      for (const WorkItem& it : program->items) ids.push_back(b_.label(it.label, it.kind == ItemKind::Compute ? it.compute : kNoWork));
      item_groups_.emplace_back(program->items.size());
    }
  }
  const auto devices = static_cast<std::size_t>(plan.mesh.device_count());
  pending_recv_.resize(devices);
  last_task_.assign(devices, kNoTask);
  grad_tasks_.resize(devices);
  prev_.assign(devices, kNoTask);
  last_compute_.assign(devices, kNoTask);
  held_buckets_.resize(static_cast<std::size_t>(plan.pp));
  if (loader_) load_tasks_.resize(devices);
}

void UnitEmitter::emit_unit(bool forward, std::int64_t j, std::int64_t c) {
  Unit u;
  const auto program_index = static_cast<std::size_t>(2 * c + (forward ? 0 : 1));
  u.program = &work_.chunks[static_cast<std::size_t>(c)].pass(forward);
  u.cache = &item_groups_[program_index];
  u.labels = &labels_[program_index];
  u.stage = c % plan_.pp;
  u.stage_size = layout_.stage_devices(u.stage).size();
  u.key = unit_index(forward, j, c, plan_.micro_batches, chunks_);
  u.micro_batch = static_cast<std::int32_t>(j);
  u.forward = forward;
  u.chunk = c;
  const auto& items = u.program->items;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].chained) {
      u.takes_recv = i;
      break;
    }
  for (std::int64_t d : layout_.stage_devices(u.stage)) prev_[static_cast<std::size_t>(d)] = kNoTask;
  item_tasks_.assign(items.size() * u.stage_size, kNoTask);
  if (forward && j == 0 && plan_.overlap_param_gather && gathers_parameters()) emit_parameter_gathers_ahead(c);
  // A stage takes its input as its first chunk's forward starts (Megatron-LM's get_batch).
  if (forward && loader_ && c < plan_.pp) emit_inputs(u.stage, j, u.key);

  const bool last_micro_batch = j == plan_.micro_batches - 1;
  const bool sync_grads = !forward && syncs_gradients(plan_, j);
  // Gradient buckets leave once enough gradient has accumulated; which item each follows depends
  // on the program alone.
  GradientBuckets buckets;
  if (sync_grads) buckets = gradient_buckets(*u.program, plan_);
  else buckets.after.resize(items.size());
  emit_items_block_by_block(u, buckets.after);
  if (!sync_grads) return;
  if (plan_.overlap_grad_reduce || !last_micro_batch) {
    for (const auto& [axes, bytes] : buckets.rest)
      if (bytes > 0) emit_bucket(u, axes, bytes, SIZE_MAX);
    return;
  }
  // Without overlap the reduction starts once the stage's whole backward is done: keep the gradients
  // until the stage's last backward unit (the last micro-batch of its first chunk: last in every
  // schedule, so made last too).
  auto& held = held_buckets_[static_cast<std::size_t>(u.stage)];
  for (const auto& [axes, bytes] : buckets.rest) held[axes] += bytes;
  if (c == u.stage)
    for (const auto& [axes, bytes] : held)
      if (bytes > 0) emit_bucket(u, axes, bytes, SIZE_MAX);
}

// Task ids are laid out block by block: a run of items whose collectives stay inside one block (the
// devices sharing every mesh coordinate but tensor/sequence ones: a tensor-parallel group) is made
// for one block after another, so a device's consecutive tasks lie a block's width apart rather
// than a stage's, and the engine and the summary, which follow one device or one block at a time,
// find them in cache. Items whose collectives span blocks (data-parallel and expert groups, ZeRO-3
// gathers) and the gradient buckets are made for the whole stage where they stand. Each device's
// tasks keep the program's order either way, so the timeline is the same.
void UnitEmitter::emit_items_block_by_block(const Unit& u, const std::vector<std::vector<std::pair<AxisSet, double>>>& buckets_after) {
  const auto& items = u.program->items;
  const std::size_t n = items.size();
  const StageBlocks& blocks = layout_.blocks(u.stage);
  const auto& devs = layout_.stage_devices(u.stage);
  auto emit_buckets_after = [&](std::size_t i) {
    for (const auto& [axes, bytes] : buckets_after[i]) emit_bucket(u, axes, bytes, i);
  };
  for (std::size_t i = 0; i < n;) {
    prepare_groups(u, i);
    if (!block_local(items[i])) {
      emit_item(u, i, devs, (*u.cache)[i].group_order);
      emit_buckets_after(i);
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (buckets_after[end - 1].empty() && end < n && block_local(items[end])) prepare_groups(u, end++);
    for (std::size_t blk = 0; blk < blocks.count; ++blk) {
      const std::span<const std::int64_t> block_devs(blocks.devices.data() + blocks.begin[blk], blocks.begin[blk + 1] - blocks.begin[blk]);
      for (std::size_t k = i; k < end; ++k) {
        const ItemGroups& ig = (*u.cache)[k];
        std::span<const std::uint32_t> gis;
        if (items[k].kind == ItemKind::Collective)
          gis = {ig.group_order.data() + ig.group_block_begin[blk], ig.group_block_begin[blk + 1] - ig.group_block_begin[blk]};
        emit_item(u, k, block_devs, gis);
      }
    }
    emit_buckets_after(end - 1);
    i = end;
  }
}

void UnitEmitter::prepare_groups(const Unit& u, std::size_t i) {
  const WorkItem& it = u.program->items[i];
  ItemGroups& ig = (*u.cache)[i];
  if (it.kind != ItemKind::Collective || ig.groups) return;
  const StageBlocks& blocks = layout_.blocks(u.stage);
  ig.groups = &layout_.groups(it.axes, u.stage);
  ig.group_block_begin.assign(blocks.count + 1, 0);
  std::vector<std::pair<std::size_t, std::uint32_t>> by_block;
  for (std::uint32_t gi = 0; gi < ig.groups->size(); ++gi) {
    const Group& grp = (*ig.groups)[gi];
    ig.collective_ids.push_back(b_.collective(CollectiveSpec{it.collective, it.algorithm, grp.id, it.bytes, -1, grp.occupies, it.kernel,
                                                                 it.copies_per_rank * durations_.launch_of(grp.members.front())}));
    by_block.emplace_back(block_local(it) ? blocks.of[layout_.pos_in_stage(grp.members.front())] : 0, gi);
  }
  std::stable_sort(by_block.begin(), by_block.end());
  for (const auto& [blk, gi] : by_block) {
    ++ig.group_block_begin[blk + 1];
    ig.group_order.push_back(gi);
  }
  for (std::size_t k = 0; k < blocks.count; ++k) ig.group_block_begin[k + 1] += ig.group_block_begin[k];
}

void UnitEmitter::member_deps(const Unit& u, std::int64_t d, std::size_t i, bool first) {
  const WorkItem& it = u.program->items[i];
  const auto ud = static_cast<std::size_t>(d);
  if (it.chained && prev_[ud] != kNoTask) deps_.push_back(prev_[ud]);
  // A unit that opens with a collective (the all-gather of a received activation) issues it after
  // the compute of the units before it: PyTorch's NCCL stream waits on the compute stream when a
  // collective is issued, so it starts once the device's last compute kernel ends.
  if (it.chained && prev_[ud] == kNoTask && it.kind == ItemKind::Collective && last_compute_[ud] != kNoTask)
    deps_.push_back(last_compute_[ud]);
  if (first) {
    auto& inbox = pending_recv_[ud];
    for (const auto& [to, send] : inbox)
      if (to == u.key) deps_.push_back(send);
    std::erase_if(inbox, [&](const auto& entry) { return entry.first == u.key; });
  }
  for (std::uint32_t e : it.extra_deps) {
    const TaskId t = item_tasks_[e * u.stage_size + layout_.pos_in_stage(d)];
    if (t != kNoTask) deps_.push_back(t);
  }
}

// The item emitters run once per task of the step (millions): flattened, since GCC otherwise leaves
// every vector append in them as a call.
void UnitEmitter::emit_item(const Unit& u, std::size_t i, std::span<const std::int64_t> devs, std::span<const std::uint32_t> gis) {
  switch (u.program->items[i].kind) {
    case ItemKind::Compute: emit_compute(u, i, devs); break;
    case ItemKind::Collective: emit_collective(u, i, gis); break;
    case ItemKind::Send: emit_send(u, i, devs); break;
  }
}

[[gnu::flatten]] void UnitEmitter::emit_compute(const Unit& u, std::size_t i, std::span<const std::int64_t> devs) {
  const WorkItem& it = u.program->items[i];
  const bool first = i == u.takes_recv;
  const std::uint32_t label = (*u.labels)[i];
  for (std::int64_t d : devs) {
    const auto ud = static_cast<std::size_t>(d);
    deps_.clear();
    member_deps(u, d, i, first);
    const Picoseconds duration = durations_.of(d, it.compute);
    const TaskId t = b_.add(TaskKind::Compute, d, stream_index(Stream::Compute), duration, it.category, u.micro_batch, label, deps_);
    prev_[ud] = t;
    item_tasks_[i * u.stage_size + layout_.pos_in_stage(d)] = t;
    last_task_[ud] = t;
    last_compute_[ud] = t;
  }
}

[[gnu::flatten]] void UnitEmitter::emit_collective(const Unit& u, std::size_t i, std::span<const std::uint32_t> gis) {
  const WorkItem& it = u.program->items[i];
  const ItemGroups& ig = (*u.cache)[i];
  const bool first = i == u.takes_recv;
  // An activation's collective runs on the tensor-parallel stream whatever its axes
  // (work.hpp, category_of_axis); gradient reductions and ZeRO gathers on their axes' stream.
  const std::uint8_t stream =
      stream_index(it.category == Category::TensorComm ? Stream::TensorComm : stream_of_axes(plan_.mesh, it.axes));
  for (const std::uint32_t gi : gis) {
    const auto& members = (*ig.groups)[gi].members;
    deps_.clear();
    for (std::int64_t mdev : members) member_deps(u, mdev, i, first);
    std::sort(deps_.begin(), deps_.end());
    deps_.erase(std::unique(deps_.begin(), deps_.end()), deps_.end());
    const TaskId t = b_.add_collective(ig.collective_ids[gi], stream, it.category, u.micro_batch, (*u.labels)[i], deps_);
    for (std::int64_t mdev : members) {
      const auto ud = static_cast<std::size_t>(mdev);
      if (it.chained) prev_[ud] = t;
      item_tasks_[i * u.stage_size + layout_.pos_in_stage(mdev)] = t;
      last_task_[ud] = t;
    }
  }
}

[[gnu::flatten]] void UnitEmitter::emit_send(const Unit& u, std::size_t i, std::span<const std::int64_t> devs) {
  const WorkItem& it = u.program->items[i];
  ItemGroups& ig = (*u.cache)[i];
  const bool first = i == u.takes_recv;
  const std::int64_t peer_stage = it.peer_chunk % plan_.pp;
  // A blocking send occupies the sender's compute stream: the stage computes nothing until the
  // transfer completes, in its schedule order.
  const std::uint8_t stream = stream_index(plan_.blocking_p2p ? Stream::Compute : Stream::Pipeline);
  for (std::int64_t d : devs) {
    const auto ud = static_cast<std::size_t>(d);
    deps_.clear();
    member_deps(u, d, i, first);
    if (prev_[ud] != kNoTask && std::find(deps_.begin(), deps_.end(), prev_[ud]) == deps_.end()) deps_.push_back(prev_[ud]);
    const std::int64_t peer = layout_.peer_device(d, peer_stage);
    // The send's collective is the same for every micro-batch: interned once per device.
    if (ig.send_collective_ids.empty()) ig.send_collective_ids.assign(u.stage_size, kNoCollective);
    std::uint32_t& cid = ig.send_collective_ids[layout_.pos_in_stage(d)];
    if (cid == kNoCollective) {
      const std::array<std::int64_t, 2> pair{std::min(d, peer), std::max(d, peer)};
      cid = b_.collective(CollectiveSpec{CollectiveKind::SendRecv, it.algorithm, b_.group(pair), it.bytes, d, CollectiveSpec::kWholeGroup});
    }
    const TaskId t = b_.add_collective(cid, stream, Category::PipelineComm, u.micro_batch, (*u.labels)[i], deps_);
    pending_recv_[static_cast<std::size_t>(peer)].emplace_back(unit_index(u.forward, u.micro_batch, it.peer_chunk, plan_.micro_batches, chunks_),
                                                               t);
    item_tasks_[i * u.stage_size + layout_.pos_in_stage(d)] = t;
    last_task_[ud] = t;
  }
}

void UnitEmitter::emit_bucket(const Unit& u, const AxisSet& axes, double bytes, std::size_t after_item) {
  const CollectiveKind kind = gradient_bucket_kind(plan_);  // a bucket's axes are never empty (GradReady)
  for (const Group& grp : layout_.groups(axes, u.stage)) {
    deps_.clear();
    for (std::int64_t mdev : grp.members) {
      const auto ud = static_cast<std::size_t>(mdev);
      const TaskId t = after_item == SIZE_MAX ? prev_[ud] : item_tasks_[after_item * u.stage_size + layout_.pos_in_stage(mdev)];
      if (t != kNoTask) deps_.push_back(t);
    }
    const auto cid = b_.collective(CollectiveSpec{kind, CollectiveAlgorithm::Auto, grp.id, bytes, -1, grp.occupies, CommKernel::Nccl,
                                                  plan_.implementation.copies_per_rank * durations_.launch_of(grp.members.front())});
    const TaskId t = b_.add_collective(cid, stream_index(stream_of_axes(plan_.mesh, axes)), Category::GradientComm, u.micro_batch,
                                       b_.label("gradient bucket"), deps_);
    for (std::int64_t mdev : grp.members) {
      last_task_[static_cast<std::size_t>(mdev)] = t;
      grad_tasks_[static_cast<std::size_t>(mdev)].push_back(t);
    }
  }
}

}  // namespace parasim::sim
