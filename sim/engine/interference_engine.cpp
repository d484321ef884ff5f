#include "sim/engine/interference_engine.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "common/error.hpp"
#include "common/huge_pages.hpp"

namespace parasim::sim {

std::size_t interference_class(CollectiveKind kind, CommKernel kernel) {
  switch (kernel) {
    case CommKernel::RingExchange: return 6;
    case CommKernel::Pipelined: return 7;
    case CommKernel::Nccl: break;
  }
  return static_cast<std::size_t>(kind);
}

const std::vector<std::string>& interference_class_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int k = 0; k <= static_cast<int>(CollectiveKind::SendRecv); ++k) out.emplace_back(to_string(static_cast<CollectiveKind>(k)));
    out.emplace_back(to_string(CommKernel::RingExchange));
    out.emplace_back(to_string(CommKernel::Pipelined));
    return out;
  }();
  return names;
}

bool InterferenceRates::none() const {
  for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
    if (compute[k] < 1 || communication[k] < 1) return false;
  return true;
}

bool Interference::none() const {
  return std::all_of(rates.begin(), rates.end(), [](const InterferenceRates& r) { return r.none(); });
}

namespace {

constexpr std::size_t kProgressEvery = std::size_t{1} << 18;
static_assert(kInterferenceClassCount == static_cast<std::size_t>(CollectiveKind::SendRecv) + 3, "a class per collective kind and userbuffers method");

// The fluid state of the tasks in flight. A running task has work left (picoseconds at rate 1) as of
// `since`, a rate, and a predicted finish; an event for that finish is queued with the task's
// version, and a rate change bumps the version so the earlier event is skipped when it comes up.
class Fluid {
 public:
  Fluid(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& interference)
      : g_(g), collective_ps_(collective_ps), x_(interference), computing_(static_cast<std::size_t>(g.devices)),
        in_flight_(static_cast<std::size_t>(g.devices)) {
    const std::size_t n = g.task_count();
    reserve_huge(left_, n);
    left_.assign(n, 0);
    since_.assign(n, 0);
    rate_.assign(n, 1);
    version_.assign(n, 0);
    busy_members_.assign(n, 0);
  }

  using Event = std::tuple<std::int64_t, TaskId, std::uint32_t>;  // (finish, task, version): ties by task id
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;

  [[nodiscard]] bool current(const Event& e) const { return std::get<2>(e) == version_[std::get<1>(e)]; }

  void start(TaskId t, std::int64_t now) {
    left_[t] = static_cast<double>(task_duration_ps(g_, collective_ps_, t));
    since_[t] = now;
    std::int64_t scratch = 0;
    if (g_.kind[t] == TaskKind::Compute) {
      const auto d = static_cast<std::size_t>(g_.owner[t]);
      rate_[t] = compute_rate(d);
      if (computing_[d].empty())
        for (const TaskId c : in_flight_[d])
          if (busy_members_[c]++ == 0) rerate(c, now, communication_rate(c));
      computing_[d].push_back(t);
    } else if (g_.kind[t] == TaskKind::Collective) {
      rate_[t] = 1;
      for (const std::int64_t dev : g_.devices_of(t, scratch)) {
        const auto d = static_cast<std::size_t>(dev);
        in_flight_[d].push_back(t);
        if (!computing_[d].empty()) {
          ++busy_members_[t];
          const double rate = compute_rate(d);
          for (const TaskId k : computing_[d]) rerate(k, now, rate);
        }
      }
      if (busy_members_[t] > 0) rate_[t] = communication_rate(t);
    }
    schedule(t);
  }

  void finish(TaskId t, std::int64_t now) {
    std::int64_t scratch = 0;
    if (g_.kind[t] == TaskKind::Compute) {
      const auto d = static_cast<std::size_t>(g_.owner[t]);
      auto& running = computing_[d];
      running.erase(std::find(running.begin(), running.end(), t));
      if (running.empty())
        for (const TaskId c : in_flight_[d])
          if (--busy_members_[c] == 0) rerate(c, now, 1);
    } else if (g_.kind[t] == TaskKind::Collective) {
      for (const std::int64_t dev : g_.devices_of(t, scratch)) {
        const auto d = static_cast<std::size_t>(dev);
        auto& f = in_flight_[d];
        f.erase(std::find(f.begin(), f.end(), t));
        const double rate = compute_rate(d);
        for (const TaskId k : computing_[d]) rerate(k, now, rate);
      }
    }
  }

 private:
  // What compute on device d keeps while the collectives in flight there run.
  double compute_rate(std::size_t d) const {
    double r = 1;
    const InterferenceRates& rates = x_.of(static_cast<std::int64_t>(d));
    for (const TaskId c : in_flight_[d]) r = std::min(r, rates.compute_beside(kind_of(c), x_.share_of(g_.owner[c])));
    return r;
  }
  // What collective task c keeps while a device it occupies computes: the least over its devices.
  double communication_rate(TaskId c) const {
    double r = 1;
    std::int64_t scratch = 0;
    const std::size_t k = kind_of(c);
    for (const std::int64_t d : g_.devices_of(c, scratch)) r = std::min(r, x_.of(d).communication[k]);
    return r;
  }
  std::size_t kind_of(TaskId c) const {
    const CollectiveSpec& spec = g_.collectives[g_.owner[c]];
    return interference_class(spec.kind, spec.kernel);
  }

  void rerate(TaskId t, std::int64_t now, double rate) {
    if (rate == rate_[t]) return;
    left_[t] = std::max(0.0, left_[t] - static_cast<double>(now - since_[t]) * rate_[t]);
    since_[t] = now;
    rate_[t] = rate;
    ++version_[t];
    schedule(t);
  }
  void schedule(TaskId t) {
    const double span = left_[t] / rate_[t];
    PARASIM_CHECK(span < 9.2e18 - static_cast<double>(since_[t]), "simulated time overflows (over 106 days) under interference");
    events.emplace(since_[t] + static_cast<std::int64_t>(std::llround(span)), t, version_[t]);
  }

  const TaskGraph& g_;
  std::span<const Picoseconds> collective_ps_;
  const Interference& x_;
  std::vector<std::vector<TaskId>> computing_;    // per device: its running compute tasks (one per compute stream)
  std::vector<std::vector<TaskId>> in_flight_;    // per device: collectives running on it
  std::vector<double> left_;
  std::vector<std::int64_t> since_;
  std::vector<double> rate_;
  std::vector<std::uint32_t> version_;
  std::vector<std::uint32_t> busy_members_;  // per collective task: its devices now computing
};

}  // namespace

InterferedTimeline simulate_interference(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& given,
                                         ProgressSink* progress) {
  // No entries at all: every rate 1.
  const Interference free{{InterferenceRates{}}, std::vector<std::uint32_t>(static_cast<std::size_t>(g.devices), 0)};
  const Interference& interference = given.of_device.empty() ? free : given;
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();
  PARASIM_CHECK(collective_ps.size() == g.collectives.size(), "one duration per collective");
  PARASIM_CHECK(interference.of_device.size() == static_cast<std::size_t>(g.devices), "one interference entry per device");
  for (const std::uint32_t i : interference.of_device) PARASIM_CHECK(i < interference.rates.size(), "interference index out of range");

  // Successors, and per task what it waits for: its dependencies and the head of each of its queues.
  std::vector<std::uint32_t> succ_begin(n + 1, 0);
  for (const TaskId d : g.deps) ++succ_begin[d + 1];
  for (std::size_t i = 0; i < n; ++i) succ_begin[i + 1] += succ_begin[i];
  std::vector<TaskId> succ(g.deps.size());
  {
    std::vector<std::uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (TaskId t = 0; t < n; ++t)
      for (const TaskId d : g.deps_of(t)) succ[fill[d]++] = t;
  }
  std::vector<std::uint32_t> pending(n);
  for (TaskId t = 0; t < n; ++t) {
    std::int64_t scratch = 0;
    pending[t] = (g.dep_begin[t + 1] - g.dep_begin[t]) + static_cast<std::uint32_t>(g.devices_of(t, scratch).size());
  }

  InterferedTimeline out;
  out.timeline.start_ps.assign(n, -1);
  out.finish_ps.assign(n, -1);
  std::vector<std::uint32_t> head(g.queue_begin.begin(), g.queue_begin.end() - 1);
  Fluid fluid(g, collective_ps, interference);
  std::int64_t now = 0;
  std::size_t finished = 0;
  // Tasks released at `now` start together once every event of this instant is handled, in task id
  // order, so a rate change at an instant never depends on the order its events were popped.
  std::vector<TaskId> ready;
  auto release = [&](TaskId t) {
    if (--pending[t] == 0) ready.push_back(t);
  };
  auto start_ready = [&] {
    std::sort(ready.begin(), ready.end());
    for (const TaskId t : ready) {
      out.timeline.start_ps[t] = now;
      fluid.start(t, now);
    }
    ready.clear();
  };
  for (std::size_t r = 0; r + 1 < g.queue_begin.size(); ++r)
    if (head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]]);

  for (;;) {
    while (!fluid.events.empty() && !fluid.current(fluid.events.top())) fluid.events.pop();
    // What an instant released starts once every event of the instant has been handled.
    if (!ready.empty() && (fluid.events.empty() || std::get<0>(fluid.events.top()) != now)) {
      start_ready();
      continue;
    }
    if (fluid.events.empty()) break;
    const TaskId t = std::get<1>(fluid.events.top());
    now = std::get<0>(fluid.events.top());
    fluid.events.pop();
    out.finish_ps[t] = now;
    fluid.finish(t, now);
    ++finished;
    if (progress && finished % kProgressEvery == 0) progress->update(finished);
    for (std::uint32_t k = succ_begin[t]; k < succ_begin[t + 1]; ++k) release(succ[k]);
    std::int64_t scratch = 0;
    for (const std::int64_t device : g.devices_of(t, scratch)) {
      const std::size_t r = static_cast<std::size_t>(device) * streams + g.stream[t];
      if (++head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]]);
    }
  }
  if (finished != n) {
    for (TaskId t = 0; t < n; ++t)
      if (out.timeline.start_ps[t] < 0) {
        PARASIM_CHECK(false, "the task graph deadlocks: task " + std::to_string(t) + " (" + g.labels[g.label[t]] + ", stream " +
                                 std::string(g.stream_name(g.stream[t])) + ") never starts; " + std::to_string(n - finished) +
                                 " tasks are stuck");
      }
  }
  out.timeline.makespan = Picoseconds(now);
  return out;
}

std::vector<std::int64_t> compute_stretch_ps(const TaskGraph& g, std::span<const std::int64_t> start_ps, std::span<const std::int64_t> finish_ps) {
  PARASIM_CHECK(start_ps.size() == g.task_count() && finish_ps.size() == g.task_count(), "one start and finish per task");
  std::vector<std::int64_t> stretch(static_cast<std::size_t>(g.devices), 0);
  for (TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == TaskKind::Compute) stretch[g.owner[t]] += (finish_ps[t] - start_ps[t]) - g.duration_ps[t];
  return stretch;
}

}  // namespace parasim::sim
