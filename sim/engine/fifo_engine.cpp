#include "sim/engine/fifo_engine.hpp"

#include <algorithm>
#include <queue>

#include "common/error.hpp"
#include "common/huge_pages.hpp"

namespace parasim::sim {
namespace {

constexpr std::size_t kProgressEvery = std::size_t{1} << 18;  // tasks between progress updates

// Successors (CSR) from the dependency lists.
void successors(const TaskGraph& g, std::vector<std::uint32_t>& begin, std::vector<TaskId>& succ) {
  const std::size_t n = g.task_count();
  reserve_huge(begin, n + 1);
  begin.assign(n + 1, 0);
  for (TaskId d : g.deps) ++begin[d + 1];
  for (std::size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  reserve_huge(succ, g.deps.size());
  succ.resize(g.deps.size());
  std::vector<std::uint32_t> fill;
  reserve_huge(fill, n);
  fill.assign(begin.begin(), begin.end() - 1);
  for (TaskId t = 0; t < n; ++t)
    for (std::uint32_t k = g.dep_begin[t]; k < g.dep_begin[t + 1]; ++k) succ[fill[g.deps[k]]++] = t;
}

// A task waits for its dependencies and for reaching the head of each queue it is in.
std::vector<std::uint32_t> initial_pending(const TaskGraph& g) {
  const std::size_t n = g.task_count();
  std::vector<std::uint32_t> pending;
  reserve_huge(pending, n);
  pending.resize(n);
  for (TaskId t = 0; t < n; ++t) {
    std::int64_t scratch = 0;
    pending[t] = (g.dep_begin[t + 1] - g.dep_begin[t]) + static_cast<std::uint32_t>(g.devices_of(t, scratch).size());
  }
  return pending;
}

[[noreturn]] void report_deadlock(const TaskGraph& g, const std::vector<std::int64_t>& start_ps, std::size_t stuck) {
  for (TaskId t = 0; t < g.task_count(); ++t) {
    if (start_ps[t] >= 0) continue;
    PARASIM_CHECK(false, "the task graph deadlocks: task " + std::to_string(t) + " (" + g.labels[g.label[t]] + ", stream " +
                             std::string(g.stream_name(g.stream[t])) + ") never starts; " + std::to_string(stuck) + " tasks are stuck");
  }
  PARASIM_CHECK(false, "the task graph deadlocks");
}

}  // namespace

void check_time_range(const TaskGraph& g, std::span<const Picoseconds> collective_ps, double slowest_rate) {
  PARASIM_CHECK(slowest_rate > 0 && slowest_rate <= 1, "a slowest rate in (0, 1]");
  double total_ps = 0;
  for (TaskId t = 0; t < g.task_count(); ++t) total_ps += static_cast<double>(task_duration_ps(g, collective_ps, t));
  const double seconds = total_ps * 1e-12 / slowest_rate;
  if (!(seconds <= kMaxSimulatedSeconds)) simulated_time_out_of_range(seconds, "the step's tasks run one after another");
}

Timeline simulate_fifo_events(const TaskGraph& g, std::span<const Picoseconds> collective_ps) {
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();
  PARASIM_CHECK(collective_ps.size() == g.collectives.size(), "one duration per collective");
  check_time_range(g, collective_ps);

  std::vector<std::uint32_t> succ_begin;
  std::vector<TaskId> succ;
  successors(g, succ_begin, succ);
  std::vector<std::uint32_t> pending = initial_pending(g);

  Timeline out;
  out.start_ps.assign(n, -1);
  std::vector<std::uint32_t> head(g.queue_begin.begin(), g.queue_begin.end() - 1);

  using Event = std::pair<std::int64_t, TaskId>;  // (finish time, task): ties broken by task id
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::int64_t now = 0;
  std::size_t finished = 0;

  auto release = [&](TaskId t) {
    if (--pending[t] == 0) {
      out.start_ps[t] = now;
      events.emplace(now + task_duration_ps(g, collective_ps, t), t);
    }
  };
  for (std::size_t r = 0; r + 1 < g.queue_begin.size(); ++r)
    if (head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]]);
  for (TaskId t = 0; t < n; ++t)
    if (pending[t] == 0 && out.start_ps[t] < 0) PARASIM_CHECK(false, "task with no resource");

  while (!events.empty()) {
    const auto [time, t] = events.top();
    events.pop();
    now = time;
    ++finished;
    for (std::uint32_t k = succ_begin[t]; k < succ_begin[t + 1]; ++k) release(succ[k]);
    std::int64_t scratch = 0;
    for (std::int64_t device : g.devices_of(t, scratch)) {
      const std::size_t r = static_cast<std::size_t>(device) * streams + g.stream[t];
      if (++head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]]);
    }
  }
  if (finished != n) report_deadlock(g, out.start_ps, n - finished);
  out.makespan = Picoseconds(now);
  return out;
}

namespace {

// A graph whose queues follow the ids (TaskGraph::queues_follow_ids) has every predecessor of a task
// — its dependencies and the task before it on each of its resources — at a lower id. Visiting the
// tasks by id, a task's start is then max(finish of its dependencies, the time each of its
// resources frees), both already known: one pass, no successor lists, pending counts or worklist.
Timeline simulate_in_id_order(const TaskGraph& g, std::span<const Picoseconds> collective_ps, ProgressSink* progress) {
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();
  // The pass keeps each task's finish in the timeline's array and turns it into the start at the
  // end: one array of a step's size rather than two (a large step's arrays are most of its memory).
  Timeline out;
  std::vector<std::int64_t>& time = out.start_ps;
  reserve_huge(time, n);
  time.resize(n);
  std::vector<std::int64_t> free_at(g.resource_count(), 0);
  std::int64_t makespan = 0;
  for (TaskId t = 0; t < n; ++t) {
    std::int64_t scratch = 0;
    const auto devices = g.devices_of(t, scratch);
    const std::size_t stream = g.stream[t];
    const std::int64_t start = earliest_start(g, t, time.data(), free_at.data(), devices);
    const std::int64_t finish = start + task_duration_ps(g, collective_ps, t);
    for (const std::int64_t d : devices) free_at[static_cast<std::size_t>(d) * streams + stream] = finish;
    time[t] = finish;
    makespan = std::max(makespan, finish);
    if (progress && (t + 1) % kProgressEvery == 0) progress->update(t + 1);
  }
  for (TaskId t = 0; t < n; ++t) time[t] -= task_duration_ps(g, collective_ps, t);
  out.makespan = Picoseconds(makespan);
  return out;
}

}  // namespace

Timeline simulate_fifo(const TaskGraph& g, std::span<const Picoseconds> collective_ps, ProgressSink* progress) {
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();
  PARASIM_CHECK(collective_ps.size() == g.collectives.size(), "one duration per collective");
  check_time_range(g, collective_ps);
  if (g.queues_follow_ids) return simulate_in_id_order(g, collective_ps, progress);
  std::vector<std::uint32_t> succ_begin;
  std::vector<TaskId> succ;
  successors(g, succ_begin, succ);
  std::vector<std::uint32_t> pending = initial_pending(g);

  // ready[t]: the latest finish among t's predecessors seen so far (its start once all are seen).
  std::vector<std::int64_t> ready;
  reserve_huge(ready, n);
  ready.assign(n, 0);
  std::vector<std::uint32_t> head(g.queue_begin.begin(), g.queue_begin.end() - 1);
  std::vector<TaskId> worklist;
  worklist.reserve(1024);
  auto release = [&](TaskId t, std::int64_t time) {
    ready[t] = std::max(ready[t], time);
    if (--pending[t] == 0) worklist.push_back(t);
  };
  for (std::size_t r = 0; r + 1 < g.queue_begin.size(); ++r)
    if (head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]], 0);

  std::int64_t makespan = 0;
  std::size_t finished = 0;
  while (!worklist.empty()) {
    const TaskId t = worklist.back();
    worklist.pop_back();
    const std::int64_t finish = ready[t] + task_duration_ps(g, collective_ps, t);
    makespan = std::max(makespan, finish);
    if (++finished % kProgressEvery == 0 && progress) progress->update(finished);
    for (std::uint32_t k = succ_begin[t]; k < succ_begin[t + 1]; ++k) release(succ[k], finish);
    std::int64_t scratch = 0;
    for (std::int64_t device : g.devices_of(t, scratch)) {
      const std::size_t r = static_cast<std::size_t>(device) * streams + g.stream[t];
      if (++head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]], finish);
    }
  }
  Timeline out;
  out.start_ps = std::move(ready);
  if (finished != n) {
    for (TaskId t = 0; t < n; ++t)
      if (pending[t] != 0) out.start_ps[t] = -1;
    report_deadlock(g, out.start_ps, n - finished);
  }
  out.makespan = Picoseconds(makespan);
  return out;
}

}  // namespace parasim::sim
