#include "sim/engine/interference_engine.hpp"

#include <algorithm>
#include <cmath>
#include <array>
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

namespace {
double lowest(const EfficiencyCurve& curve, double at_least) {
  for (const auto& [bytes, rate] : curve.points) at_least = std::min(at_least, rate);
  return at_least;
}
}  // namespace

bool InterferenceRates::none() const {
  for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
    if (compute[k] < 1 || communication[k] < 1 || lowest(compute_by_size[k], 1) < 1 || lowest(communication_by_size[k], 1) < 1) return false;
  return true;
}

bool InterferenceRates::by_size() const {
  for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
    if (!compute_by_size[k].points.empty() || !communication_by_size[k].points.empty()) return true;
  return false;
}

bool InterferenceRates::communication_free() const {
  for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
    if (communication[k] < 1 || lowest(communication_by_size[k], 1) < 1) return false;
  return true;
}

double InterferenceRates::compute_at(std::size_t cls, double bytes) const {
  return compute_by_size[cls].points.empty() ? compute[cls] : compute_by_size[cls].at(bytes);
}

double InterferenceRates::communication_at(std::size_t cls, double bytes) const {
  return communication_by_size[cls].points.empty() ? communication[cls] : communication_by_size[cls].at(bytes);
}

double Interference::slowest_rate() const {
  double slowest = 1;
  for (const InterferenceRates& r : rates)
    for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
      slowest = std::min({slowest, r.compute[k], r.communication[k], lowest(r.compute_by_size[k], 1), lowest(r.communication_by_size[k], 1)});
  // A compute task beside a collective and beside its host's other compute at once takes both.
  float together_least = 1;
  for (const float f : together) together_least = std::min(together_least, f);
  return std::max(slowest * static_cast<double>(together_least), 1e-6);
}

void size_rates(Interference& x, const TaskGraph& g) {
  x.at_size.clear();
  if (std::none_of(x.rates.begin(), x.rates.end(), [](const InterferenceRates& r) { return r.by_size(); })) return;
  x.at_size.resize(x.rates.size());
  for (std::size_t set = 0; set < x.rates.size(); ++set) {
    x.at_size[set].reserve(g.collectives.size());
    for (const CollectiveSpec& c : g.collectives) {
      const std::size_t cls = interference_class(c.kind, c.kernel);
      x.at_size[set].push_back({x.rates[set].compute_at(cls, c.bytes), x.rates[set].communication_at(cls, c.bytes)});
    }
  }
}

bool Interference::none() const {
  return !hosts_shared() && std::all_of(rates.begin(), rates.end(), [](const InterferenceRates& r) { return r.none(); });
}

namespace {

constexpr std::size_t kProgressEvery = std::size_t{1} << 18;
static_assert(kInterferenceClassCount == static_cast<std::size_t>(CollectiveKind::SendRecv) + 3, "a class per collective kind and userbuffers method");

// The fluid state of the tasks in flight. A running task has work left (picoseconds at rate 1) as of
// `since`, a rate, and a predicted finish; an event for that finish is queued with the task's
// version, and a rate change bumps the version so the earlier event is skipped when it comes up.
// The state lives in a pool of slots, one per running task (at most one per resource), so the loop
// keeps four bytes per task rather than a task's whole state.
class Fluid {
 public:
  Fluid(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& interference)
      : g_(g), collective_ps_(collective_ps), x_(interference), computing_(static_cast<std::size_t>(g.devices)),
        in_flight_(static_cast<std::size_t>(g.devices)) {
    reserve_huge(slot_of_, g.task_count());
    slot_of_.assign(g.task_count(), kNoSlot);
    if (x_.hosts_shared()) {
      std::int64_t hosts = 0;
      for (const std::int64_t h : x_.host_of) hosts = std::max(hosts, h + 1);
      host_devices_.resize(static_cast<std::size_t>(hosts));
      host_busy_.assign(static_cast<std::size_t>(hosts), std::int64_t{0});
      for (std::size_t d = 0; d < x_.host_of.size(); ++d)
        if (x_.host_of[d] >= 0) host_devices_[static_cast<std::size_t>(x_.host_of[d])].push_back(d);
    }
  }

  struct Event {
    std::int64_t finish;
    TaskId task;
    std::uint32_t version;
  };
  /// The finishes to come, by time. Events are never queued before the last one taken (time only
  /// moves on), so a radix heap serves: a bucket per highest bit in which a key differs from the last
  /// key taken, each event moved down a bucket at most once per bit — against a binary heap's
  /// log(running tasks) moves per event, the engine's largest cost. Events of one instant come out in
  /// an order fixed by the input; their order does not change the timeline (see simulate_events).
  class Queue {
   public:
    [[nodiscard]] bool empty() const { return size_ == 0; }
    void push(const Event& e) {
      buckets_[bucket(e.finish)].push_back(e);
      ++size_;
    }
    /// The earliest event. Precondition: not empty.
    const Event& top() {
      if (buckets_[0].empty()) refill();
      return buckets_[0].back();
    }
    void pop() {
      if (buckets_[0].empty()) refill();
      buckets_[0].pop_back();
      --size_;
    }

   private:
    [[nodiscard]] std::size_t bucket(std::int64_t key) const {
      const auto diff = static_cast<std::uint64_t>(key) ^ static_cast<std::uint64_t>(last_);
      return diff == 0 ? 0 : 64 - static_cast<std::size_t>(__builtin_clzll(diff));
    }
    // Moves the first non-empty bucket's events down, around its least key.
    void refill() {
      std::size_t i = 1;
      while (buckets_[i].empty()) ++i;
      std::int64_t least = buckets_[i].front().finish;
      for (const Event& e : buckets_[i]) least = std::min(least, e.finish);
      last_ = least;
      std::vector<Event> moving;
      moving.swap(buckets_[i]);
      for (const Event& e : moving) buckets_[bucket(e.finish)].push_back(e);
      moving.clear();
      buckets_[i].swap(moving);  // keep the bucket's capacity
    }
    std::array<std::vector<Event>, 65> buckets_;
    std::int64_t last_ = 0;
    std::size_t size_ = 0;
  };
  Queue events;

  [[nodiscard]] bool current(const Event& e) const {
    const std::uint32_t s = slot_of_[e.task];
    return s != kNoSlot && slots_[s].version == e.version;
  }

  void start(TaskId t, std::int64_t now) {
    Slot& me = take(t);
    me.left = static_cast<double>(task_duration_ps(g_, collective_ps_, t));
    me.since = now;
    std::int64_t scratch = 0;
    if (g_.kind[t] == TaskKind::Compute) {
      const auto d = static_cast<std::size_t>(g_.owner[t]);
      const bool first = computing_[d].empty();
      if (first)
        for (const TaskId c : in_flight_[d])
          if (slot(c).busy_members++ == 0) rerate(c, now, communication_rate(c));
      computing_[d].push_back(t);  // before the host's other devices are re-rated: t runs beside them
      if (first) {
        host_starts(d, now);
      } else if (!x_.memory_duty.empty()) {
        host_changes(d, now, 0);  // the others' pressure may change with t beside them
      }
      me.rate = compute_rate(d) * host_rate(t, d);
    } else if (g_.kind[t] == TaskKind::Collective) {
      for (const std::int64_t dev : g_.devices_of(t, scratch)) {
        const auto d = static_cast<std::size_t>(dev);
        in_flight_[d].push_back(t);
        if (!computing_[d].empty()) {
          ++slot(t).busy_members;
          const double rate = compute_rate(d);
          for (const TaskId k : computing_[d]) rerate(k, now, rate * host_rate(k, d));
        }
      }
      if (slot(t).busy_members > 0) slot(t).rate = communication_rate(t);
    }
    schedule(t);
  }

  void finish(TaskId t, std::int64_t now) {
    std::int64_t scratch = 0;
    if (g_.kind[t] == TaskKind::Compute) {
      const auto d = static_cast<std::size_t>(g_.owner[t]);
      auto& running = computing_[d];
      running.erase(std::find(running.begin(), running.end(), t));
      if (running.empty()) {
        for (const TaskId c : in_flight_[d])
          if (--slot(c).busy_members == 0) rerate(c, now, 1);
        host_stops(d, now);
      } else if (!x_.memory_duty.empty()) {
        host_changes(d, now, 0);
      }
    } else if (g_.kind[t] == TaskKind::Collective) {
      for (const std::int64_t dev : g_.devices_of(t, scratch)) {
        const auto d = static_cast<std::size_t>(dev);
        auto& f = in_flight_[d];
        f.erase(std::find(f.begin(), f.end(), t));
        const double rate = compute_rate(d);
        for (const TaskId k : computing_[d]) rerate(k, now, rate * host_rate(k, d));
      }
    }
    free_.push_back(slot_of_[t]);
    slot_of_[t] = kNoSlot;
  }

 private:
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;
  struct Slot {
    double left = 0;
    std::int64_t since = 0;
    double rate = 1;
    std::uint32_t version = 0;
    std::uint32_t busy_members = 0;  // a collective's devices now computing
  };
  Slot& slot(TaskId t) { return slots_[slot_of_[t]]; }
  Slot& take(TaskId t) {
    std::uint32_t s;
    if (free_.empty()) {
      s = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      s = free_.back();
      free_.pop_back();
    }
    slot_of_[t] = s;
    Slot& me = slots_[s];
    me.rate = 1;
    me.busy_members = 0;
    ++me.version;
    return me;
  }

  // What compute task t on device d keeps beside its host's other devices: while another device of
  // the host computes, its `together` rate beside a twin (the replicas d stands for, or another
  // device running the same work), and beside other work that rate's slowdown times the largest
  // memory duty among the tasks running beside it (sim/interference.hpp); else all of its speed.
  // Precondition: d computes (t runs there), so the host's count includes d's weight.
  double host_rate(TaskId t, std::size_t d) const {
    if (!x_.hosts_shared() || x_.host_of[d] < 0) return 1;
    const auto h = static_cast<std::size_t>(x_.host_of[d]);
    if (host_busy_[h] < 2) return 1;
    const double slowdown = 1 - static_cast<double>(x_.together[t]);
    if (x_.memory_duty.empty() || (!x_.host_weight.empty() && x_.host_weight[d] >= 2)) return 1 - slowdown;
    const WorkId work = g_.work_of(t);
    double pressure = 0;
    for (const std::size_t other : host_devices_[h]) {
      if (other == d) continue;
      for (const TaskId k : computing_[other])
        pressure = std::max(pressure, work != kNoWork && g_.work_of(k) == work ? 1.0 : static_cast<double>(x_.memory_duty[k]));
    }
    return 1 - slowdown * pressure;
  }
  // Device d of a shared host starts computing (its first running compute task) or stops (its
  // last), or with memory duties changes what it runs (by 0): where that takes the host from one
  // computing device to two, or back, or changes the tasks beside them, the other devices' running
  // compute changes speed.
  void host_starts(std::size_t d, std::int64_t now) { host_changes(d, now, +1); }
  void host_stops(std::size_t d, std::int64_t now) { host_changes(d, now, -1); }
  void host_changes(std::size_t d, std::int64_t now, int by) {
    if (!x_.hosts_shared() || x_.host_of[d] < 0) return;
    const auto h = static_cast<std::size_t>(x_.host_of[d]);
    const std::int64_t before = host_busy_[h];
    host_busy_[h] += by * (x_.host_weight.empty() ? 1 : x_.host_weight[d]);
    // Without memory duties only a step across two computing devices changes another device's rate;
    // with them, which task runs beside it does too.
    if (x_.memory_duty.empty() && (before >= 2) == (host_busy_[h] >= 2)) return;
    for (const std::size_t other : host_devices_[h]) {
      if (other == d || computing_[other].empty()) continue;
      const double rate = compute_rate(other);
      for (const TaskId k : computing_[other]) rerate(k, now, rate * host_rate(k, other));
    }
  }

  // What compute on device d keeps while the collectives in flight there run.
  double compute_rate(std::size_t d) const {
    double r = 1;
    for (const TaskId c : in_flight_[d]) r = std::min(r, x_.compute_beside(static_cast<std::int64_t>(d), g_.owner[c], kind_of(c)));
    return r;
  }
  // What collective task c keeps while a device it occupies computes: the least over its devices.
  double communication_rate(TaskId c) const {
    double r = 1;
    std::int64_t scratch = 0;
    const std::size_t k = kind_of(c);
    for (const std::int64_t d : g_.devices_of(c, scratch)) r = std::min(r, x_.communication_beside(d, g_.owner[c], k));
    return r;
  }
  std::size_t kind_of(TaskId c) const {
    const CollectiveSpec& spec = g_.collectives[g_.owner[c]];
    return interference_class(spec.kind, spec.kernel);
  }

  void rerate(TaskId t, std::int64_t now, double rate) {
    Slot& me = slot(t);
    if (rate == me.rate) return;
    me.left = std::max(0.0, me.left - static_cast<double>(now - me.since) * me.rate);
    me.since = now;
    me.rate = rate;
    ++me.version;
    schedule(t);
  }
  void schedule(TaskId t) {
    const Slot& me = slot(t);
    const double span = me.left / me.rate;
    PARASIM_CHECK(span < 9.2e18 - static_cast<double>(me.since), "simulated time overflows (over 106 days) under interference");
    events.push(Event{me.since + static_cast<std::int64_t>(std::llround(span)), t, me.version});
  }

  const TaskGraph& g_;
  std::span<const Picoseconds> collective_ps_;
  const Interference& x_;
  std::vector<std::vector<TaskId>> computing_;  // per device: its running compute tasks (one per compute stream)
  std::vector<std::vector<TaskId>> in_flight_;  // per device: collectives running on it
  std::vector<std::vector<std::size_t>> host_devices_;  // per shared host: its devices
  std::vector<std::int64_t> host_busy_;                 // per shared host: its devices now computing (weighted)
  std::vector<std::uint32_t> slot_of_;          // per task: its slot while it runs
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
};

/// A collective in flight on a device, as a compute task there sees it: when, and what compute keeps.
struct Beside {
  std::int64_t start = 0, end = 0;
  double rate = 1;
};

/// When a compute task of `work` picoseconds started at `start` finishes beside `beside` (the
/// collectives timed so far on its device), at the least of their rates wherever they overlap. The
/// work left is advanced only where the rate changes, as the event loop advances it, so both give
/// the same picosecond.
std::int64_t stretched_finish(std::int64_t start, std::int64_t work, const std::vector<Beside>& beside, std::vector<std::int64_t>& points) {
  if (beside.empty() || work == 0) return start + work;
  points.clear();
  points.push_back(start);
  for (const Beside& b : beside) {
    if (b.start > start) points.push_back(b.start);
    points.push_back(b.end);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto rate_at = [&](std::int64_t t) {
    double r = 1;
    for (const Beside& b : beside)
      if (b.start <= t && t < b.end) r = std::min(r, b.rate);
    return r;
  };
  double left = static_cast<double>(work);
  std::int64_t since = start;
  double rate = rate_at(start);
  for (const std::int64_t p : points) {
    if (p <= since) continue;
    const double next = rate_at(p);
    if (next == rate) continue;
    // Does the task end before the rate changes at p?
    const std::int64_t end = since + static_cast<std::int64_t>(std::llround(left / rate));
    if (end <= p) return end;
    left = std::max(0.0, left - static_cast<double>(p - since) * rate);
    since = p;
    rate = next;
  }
  return since + static_cast<std::int64_t>(std::llround(left / rate));
}

/// The one-pass engine under interference, for the common case: no collective slows beside compute
/// (every communication rate 1, so a collective lasts its own duration) and every queue follows the
/// ids (the lowering's graphs). Visiting the tasks by id, each collective's interval is known before
/// any compute task it can overlap is timed, provided it starts no earlier than the end of the last
/// compute task already timed on each of its devices; a compute task is then stretched by the
/// collectives beside it. Returns false, leaving `out` to be discarded, when a collective starts
/// under a compute task already timed, or a device computes on two streams: the event loop then
/// decides.
bool simulate_one_pass(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& x, InterferedTimeline& out,
                       ProgressSink* progress) {
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();
  const auto devices = static_cast<std::size_t>(g.devices);
  std::vector<std::int64_t>& start_ps = out.timeline.start_ps;
  std::vector<std::int64_t>& finish_ps = out.finish_ps;
  reserve_huge(start_ps, n);
  start_ps.resize(n);
  reserve_huge(finish_ps, n);
  finish_ps.resize(n);
  std::vector<std::int64_t> free_at(g.resource_count(), 0);
  std::vector<std::vector<Beside>> beside(devices);
  std::vector<std::int64_t> compute_end(devices, 0);
  std::vector<std::int16_t> compute_stream(devices, -1);
  std::vector<std::int64_t> points;
  std::int64_t makespan = 0;
  for (TaskId t = 0; t < n; ++t) {
    std::int64_t scratch = 0;
    const auto on = g.devices_of(t, scratch);
    const std::size_t stream = g.stream[t];
    const std::int64_t start = earliest_start(g, t, finish_ps.data(), free_at.data(), on);
    std::int64_t finish = 0;
    if (g.kind[t] == TaskKind::Compute) {
      const auto d = static_cast<std::size_t>(g.owner[t]);
      if (compute_stream[d] < 0) compute_stream[d] = static_cast<std::int16_t>(stream);
      if (compute_stream[d] != static_cast<std::int16_t>(stream)) return false;
      auto& b = beside[d];
      b.erase(std::remove_if(b.begin(), b.end(), [start](const Beside& c) { return c.end <= start; }), b.end());
      finish = stretched_finish(start, g.duration_ps[t], b, points);
      compute_end[d] = finish;
    } else if (g.kind[t] == TaskKind::Collective) {
      finish = start + collective_ps[g.owner[t]].count;
      const CollectiveSpec& spec = g.collectives[g.owner[t]];
      const std::size_t cls = interference_class(spec.kind, spec.kernel);
      for (const std::int64_t dev : on) {
        const auto d = static_cast<std::size_t>(dev);
        if (start < compute_end[d]) return false;  // it runs under a compute task already timed
        const double rate = x.compute_beside(dev, g.owner[t], cls);
        if (rate < 1 && finish > start) beside[d].push_back({start, finish, rate});
      }
    } else {
      finish = start + g.duration_ps[t];
    }
    for (const std::int64_t d : on) free_at[static_cast<std::size_t>(d) * streams + stream] = finish;
    start_ps[t] = start;
    finish_ps[t] = finish;
    makespan = std::max(makespan, finish);
    if (progress && (t + 1) % kProgressEvery == 0) progress->update(t + 1);
  }
  out.timeline.makespan = Picoseconds(makespan);
  return true;
}

/// The fluid event loop (every case).
InterferedTimeline simulate_events(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& interference,
                                   ProgressSink* progress);

}  // namespace

InterferedTimeline simulate_interference(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& given,
                                         ProgressSink* progress) {
  PARASIM_CHECK(collective_ps.size() == g.collectives.size(), "one duration per collective");
  // No entries at all: every rate 1.
  const Interference free{{InterferenceRates{}}, std::vector<std::uint32_t>(static_cast<std::size_t>(g.devices), 0), {}, {}, {}, {}, {}, {}};
  const Interference& interference = given.of_device.empty() ? free : given;
  PARASIM_CHECK(interference.of_device.size() == static_cast<std::size_t>(g.devices), "one interference entry per device");
  for (const std::uint32_t i : interference.of_device) PARASIM_CHECK(i < interference.rates.size(), "interference index out of range");
  PARASIM_CHECK(interference.channel_share.empty() || interference.channel_share.size() == g.collectives.size(),
                "one channel share per collective");
  const bool sized = std::any_of(interference.rates.begin(), interference.rates.end(), [](const InterferenceRates& r) { return r.by_size(); });
  PARASIM_CHECK(!sized || (interference.at_size.size() == interference.rates.size() &&
                           std::all_of(interference.at_size.begin(), interference.at_size.end(),
                                       [&](const auto& set) { return set.size() == g.collectives.size(); })),
                "rates by size need each collective's rates at its size (size_rates)");
  PARASIM_CHECK(!interference.hosts_shared() || (interference.together.size() == g.task_count() &&
                                                  interference.host_of.size() == static_cast<std::size_t>(g.devices)),
                "a shared host needs a rate per task and a host per device");
  PARASIM_CHECK(interference.host_weight.empty() || interference.host_weight.size() == static_cast<std::size_t>(g.devices),
                "a host weight per device");
  for (const std::int64_t w : interference.host_weight) PARASIM_CHECK(w >= 1, "a device stands for itself at least");
  for (const float f : interference.together) PARASIM_CHECK(f > 0 && f <= 1, "a compute task beside its host's others keeps a share of its speed in (0, 1]");
  PARASIM_CHECK(interference.memory_duty.empty() || interference.memory_duty.size() == interference.together.size(), "a memory duty per task");
  for (const float f : interference.memory_duty) PARASIM_CHECK(f >= 0 && f <= 1, "a task's memory duty is a share of its time, in [0, 1]");
  check_time_range(g, collective_ps, interference.slowest_rate());
  // The one pass times each device's compute against the collectives timed before it; a device's
  // compute beside another device's compute needs the event loop, which follows every device at once.
  const bool fixed_collectives = !interference.hosts_shared() &&
      std::all_of(interference.rates.begin(), interference.rates.end(), [](const InterferenceRates& r) { return r.communication_free(); });
  if (g.queues_follow_ids && fixed_collectives) {
    InterferedTimeline out;
    if (simulate_one_pass(g, collective_ps, interference, out, progress)) {
      out.one_pass = true;
      return out;
    }
  }
  return simulate_events(g, collective_ps, interference, progress);
}

namespace {

InterferedTimeline simulate_events(const TaskGraph& g, std::span<const Picoseconds> collective_ps, const Interference& interference,
                                   ProgressSink* progress) {
  const std::size_t n = g.task_count();
  const std::size_t streams = g.stream_count();

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
  reserve_huge(out.timeline.start_ps, n);
  out.timeline.start_ps.assign(n, -1);
  reserve_huge(out.finish_ps, n);
  out.finish_ps.assign(n, -1);
  std::vector<std::uint32_t> head(g.queue_begin.begin(), g.queue_begin.end() - 1);
  Fluid fluid(g, collective_ps, interference);
  std::int64_t now = 0;
  std::size_t finished = 0;
  // A task starts the moment its last predecessor finishes. Several events of one instant change
  // rates in some order, but every rate between them lasts no time, so the order leaves the timeline
  // as it is.
  auto release = [&](TaskId t) {
    if (--pending[t] == 0) {
      out.timeline.start_ps[t] = now;
      fluid.start(t, now);
    }
  };
  for (std::size_t r = 0; r + 1 < g.queue_begin.size(); ++r)
    if (head[r] < g.queue_begin[r + 1]) release(g.queue[head[r]]);

  for (;;) {
    while (!fluid.events.empty() && !fluid.current(fluid.events.top())) fluid.events.pop();
    if (fluid.events.empty()) break;
    const TaskId t = fluid.events.top().task;
    now = fluid.events.top().finish;
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

}  // namespace

std::vector<std::int64_t> compute_stretch_ps(const TaskGraph& g, std::span<const std::int64_t> start_ps, std::span<const std::int64_t> finish_ps) {
  PARASIM_CHECK(start_ps.size() == g.task_count() && finish_ps.size() == g.task_count(), "one start and finish per task");
  std::vector<std::int64_t> stretch(static_cast<std::size_t>(g.devices), 0);
  for (TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == TaskKind::Compute) stretch[g.owner[t]] += (finish_ps[t] - start_ps[t]) - g.duration_ps[t];
  return stretch;
}

}  // namespace parasim::sim
