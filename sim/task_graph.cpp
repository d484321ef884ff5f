#include "sim/task_graph.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/huge_pages.hpp"

namespace parasim::sim {

std::string_view to_string(Category c) {
  switch (c) {
    case Category::Forward: return "forward";
    case Category::Backward: return "backward";
    case Category::Recompute: return "recompute";
    case Category::Optimizer: return "optimizer";
    case Category::TensorComm: return "tensor-parallel comm";
    case Category::PipelineComm: return "pipeline comm";
    case Category::GradientComm: return "gradient comm";
    case Category::ExpertComm: return "expert comm";
    case Category::DataLoad: return "data loading";
  }
  return "forward";
}

std::string_view to_string(Stream s) {
  switch (s) {
    case Stream::Compute: return "compute";
    case Stream::TensorComm: return "comm.tp";
    case Stream::DataComm: return "comm.dp";
    case Stream::ExpertComm: return "comm.ep";
    case Stream::Pipeline: return "p2p";
    case Stream::Loader: return "loader";
    case Stream::HostToDevice: return "h2d";
    case Stream::Wan: return "wan";
  }
  return "compute";
}

std::span<const std::int64_t> TaskGraph::devices_of(TaskId t, std::int64_t& scratch) const {
  if (kind[t] == TaskKind::Collective) {
    const CollectiveSpec& c = collectives[owner[t]];
    if (c.kind == CollectiveKind::SendRecv) {
      scratch = c.root;
      return {&scratch, 1};
    }
    return group(c.occupies == CollectiveSpec::kWholeGroup ? c.group : c.occupies);
  }
  scratch = owner[t];
  return {&scratch, 1};
}

std::size_t TaskGraph::memory_bytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  return bytes(kind) + bytes(stream) + bytes(owner) + bytes(duration_ps) + bytes(category) + bytes(micro_batch) + bytes(label) +
         bytes(dep_begin) + bytes(deps) + bytes(queue_begin) + bytes(queue) + bytes(collectives) + bytes(group_begin) +
         bytes(group_members);
}

TaskGraphBuilder::TaskGraphBuilder(std::int64_t devices, std::vector<Stream> streams) {
  PARASIM_CHECK(devices >= 1, "a task graph needs at least one device");
  PARASIM_CHECK(!streams.empty() && streams.size() < 256, "1..255 streams per device");
  g_.devices = devices;
  g_.streams = std::move(streams);
  queues_.resize(g_.resource_count());
}

std::uint32_t TaskGraphBuilder::group(std::span<const std::int64_t> members) {
  std::vector<std::int64_t> key(members.begin(), members.end());
  PARASIM_CHECK(std::is_sorted(key.begin(), key.end()) && std::adjacent_find(key.begin(), key.end()) == key.end(),
                "group members must be ascending and distinct");
  auto [it, inserted] = group_index_.try_emplace(key, static_cast<std::uint32_t>(g_.group_begin.size() - 1));
  if (inserted) {
    g_.group_members.insert(g_.group_members.end(), key.begin(), key.end());
    g_.group_begin.push_back(static_cast<std::uint32_t>(g_.group_members.size()));
  }
  return it->second;
}

std::uint32_t TaskGraphBuilder::collective(const CollectiveSpec& spec) {
  const auto key =
      std::make_tuple(static_cast<int>(spec.kind), static_cast<int>(spec.algorithm), spec.group, spec.bytes, spec.root, spec.occupies,
                      static_cast<int>(spec.kernel), spec.host_s_per_rank);
  auto [it, inserted] = collective_index_.try_emplace(key, static_cast<std::uint32_t>(g_.collectives.size()));
  if (inserted) g_.collectives.push_back(spec);
  return it->second;
}

std::uint32_t TaskGraphBuilder::label(const std::string& text, WorkId work) {
  auto [it, inserted] = label_index_.try_emplace(std::make_pair(text, work), static_cast<std::uint32_t>(g_.labels.size()));
  if (inserted) {
    g_.labels.push_back(text);
    g_.label_work.push_back(work);
  }
  return it->second;
}

[[gnu::flatten]] TaskId TaskGraphBuilder::push(TaskKind kind, std::uint8_t stream, std::uint32_t owner, std::int64_t duration, Category category,
                                               std::int32_t micro_batch, std::uint32_t label, std::span<const TaskId> deps) {
  const auto id = static_cast<TaskId>(g_.kind.size());
  for (TaskId d : deps) PARASIM_CHECK(d < id, "a task's dependencies must be added before it");
  g_.kind.push_back(kind);
  g_.stream.push_back(stream);
  g_.owner.push_back(owner);
  g_.duration_ps.push_back(duration);
  g_.category.push_back(category);
  g_.micro_batch.push_back(micro_batch);
  g_.label.push_back(label);
  g_.deps.insert(g_.deps.end(), deps.begin(), deps.end());
  g_.dep_begin.push_back(static_cast<std::uint32_t>(g_.deps.size()));
  return id;
}

void TaskGraphBuilder::reserve(std::size_t tasks) {
  reserve_huge(g_.kind, tasks);
  reserve_huge(g_.stream, tasks);
  reserve_huge(g_.owner, tasks);
  reserve_huge(g_.duration_ps, tasks);
  reserve_huge(g_.category, tasks);
  reserve_huge(g_.micro_batch, tasks);
  reserve_huge(g_.label, tasks);
  reserve_huge(g_.dep_begin, tasks + 1);
  reserve_huge(g_.deps, tasks * 2);
}

[[gnu::flatten]] void TaskGraphBuilder::enqueue_on(TaskId t, std::int64_t device) {
  queues_[static_cast<std::size_t>(device) * g_.streams.size() + g_.stream[t]].push_back(t);
}

void TaskGraphBuilder::enqueue(TaskId t) {
  std::int64_t scratch = 0;
  for (std::int64_t d : g_.devices_of(t, scratch)) enqueue_on(t, d);
}

TaskGraph TaskGraphBuilder::finish() && {
  std::vector<std::uint32_t> seen;
  reserve_huge(seen, g_.kind.size());
  seen.assign(g_.kind.size(), 0);
  g_.queue_begin.assign(1, 0);
  std::size_t total = 0;
  for (const auto& q : queues_) total += q.size();
  reserve_huge(g_.queue, total);
  for (auto& q : queues_) {
    for (TaskId t : q) ++seen[t];
    g_.queue.insert(g_.queue.end(), q.begin(), q.end());
    g_.queue_begin.push_back(static_cast<std::uint32_t>(g_.queue.size()));
    std::vector<TaskId>().swap(q);
  }
  for (TaskId t = 0; t < seen.size(); ++t) {
    std::int64_t scratch = 0;
    const auto expected = static_cast<std::uint32_t>(g_.devices_of(t, scratch).size());
    PARASIM_CHECK(seen[t] == expected, "task " + std::to_string(t) + " is enqueued " + std::to_string(seen[t]) +
                                           " times on its resources, expected " + std::to_string(expected));
  }
  g_.queues_follow_ids = true;
  for (std::size_t r = 0; r + 1 < g_.queue_begin.size() && g_.queues_follow_ids; ++r)
    for (std::uint32_t k = g_.queue_begin[r] + 1; k < g_.queue_begin[r + 1]; ++k)
      if (g_.queue[k] <= g_.queue[k - 1]) {
        g_.queues_follow_ids = false;
        break;
      }
  return std::move(g_);
}

TaskGraph TaskGraphBuilder::finish_in_id_order() && {
  for (const auto& q : queues_) PARASIM_CHECK(q.empty(), "finish_in_id_order: a task was enqueued explicitly");
  queues_.clear();
  const std::size_t n = g_.kind.size();
  const std::size_t streams = g_.streams.size();
  // Counting sort of (resource, task) by resource; tasks visited by id, so each queue is increasing.
  auto for_each_resource = [&](auto&& visit) {
    for (TaskId t = 0; t < n; ++t) {
      std::int64_t scratch = 0;
      for (const std::int64_t d : g_.devices_of(t, scratch)) visit(static_cast<std::size_t>(d) * streams + g_.stream[t], t);
    }
  };
  g_.queue_begin.assign(g_.resource_count() + 1, 0);
  for_each_resource([&](std::size_t r, TaskId) { ++g_.queue_begin[r + 1]; });
  for (std::size_t r = 0; r + 1 < g_.queue_begin.size(); ++r) g_.queue_begin[r + 1] += g_.queue_begin[r];
  reserve_huge(g_.queue, g_.queue_begin.back());
  g_.queue.resize(g_.queue_begin.back());
  std::vector<std::uint32_t> fill(g_.queue_begin.begin(), g_.queue_begin.end() - 1);
  for_each_resource([&](std::size_t r, TaskId t) { g_.queue[fill[r]++] = t; });
  g_.queues_follow_ids = true;
  return std::move(g_);
}

}  // namespace parasim::sim
