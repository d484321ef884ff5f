// One SimGrid simulation of a TaskGraph (see simgrid_engine.hpp for the model).
//
// Network model. SimGrid's default (LV08) models TCP: bandwidth and latency corrections fitted to
// TCP over Ethernet, and "cross-traffic" (acknowledgements flowing back, taking a share of the
// reverse direction). The fabrics parasim models — NVLink, PCIe, InfiniBand and RoCE with RDMA,
// TPU ICI — move data with neither, and their collectives are described by the alpha–beta
// closed forms the analytical backend uses. So the model is CM02 (plain max-min sharing of each
// link between the flows crossing it) with cross-traffic off: on a ring all-reduce of 1 GB over 64
// hosts it gives exactly the closed form, where LV08 is 12% slower and CM02 with cross-traffic 5%
// (measured here with SimGrid 3.32; the models are described in SimGrid's documentation,
// "Configuring SimGrid", network/model: CM02, LV08). Links carry no latency in SimGrid: the latency
// of a flow is the α of the algorithm steps it stands for (Flow::latency_s), which the collective
// pays as a wait before the flow's bytes move; SimGrid would charge a route's latency only once per
// flow, and a coarsened flow stands for many messages.
//
// Flows become communications, coarsened once more. A phase's flows of one latency add up, on
// every link they cross, to a number of wire bytes (bytes / efficiency). Links that carry the
// same wire bytes in a phase — the p ports of a ring, all NICs of a hierarchical ring — become ONE
// SimGrid communication whose route is those links: it moves that many bytes at the pace of its
// most contended link, as a ring's lockstep steps do. On an idle network a phase then lasts its
// latency plus its most loaded link's wire bytes over its bandwidth (uncontended_seconds, the
// closed form); under contention each link is shared max-min between the communications crossing
// it. A ring all-reduce of a tensor-parallel group is one communication, not p flows or 2(p−1)·p
// messages, which keeps a thousand-GPU step at a few million SimGrid activities.
//
// A communication needs a source and a destination host whose route is its set of links: each
// distinct set gets a route host in a star zone (SimGrid's own zone kind for "every host has its
// own path to a centre"), whose path to the centre is those links, and every communication goes to
// one sink host whose path from the centre is empty.
//
// Compute: a compute, copy or load task's duration was fixed at lowering by the cost model (from
// the device's profile speed and speed factor) and a device's streams never share a core, so SimGrid
// has nothing to decide about it: the stream actor times it itself (see State). Measured on the
// GPT-3 175B step on 1024 GPUs, giving each compute task a SimGrid sleep instead made 13 million
// activities and took over four times as long, for the same timeline to a few nanoseconds.
// Under interference (sim/interference.hpp) a compute task's duration depends on the
// collectives beside it, which SimGrid decides, so compute runs in SimGrid then: an execution on the
// device's host, whose pstates are its speed at each compute rate, switched as collectives start
// and end on the device; and while a device computes, the links only it drives
// (sim/topology.hpp, device_links) carry the communication rate of their bandwidth.
#include "sim/engine/simgrid_run.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "sim/topology.hpp"

namespace parasim::sim::simgrid_detail {
namespace {

namespace sg4 = simgrid::s4u;

constexpr TaskId kNone = static_cast<TaskId>(-1);

/// One SimGrid communication of a phase: after `latency_s` from the phase's start, `wire_bytes`
/// over the links of route host `route`.
struct CommPlan {
  double latency_s = 0;
  std::uint64_t wire_bytes = 0;
  std::uint32_t route = 0;
};
struct PhasePlan {
  std::vector<CommPlan> comms;  ///< by latency, ascending
  double latency_s = 0;         ///< the phase's longest latency (it lasts at least that)
};

/// Turns each collective's flows into phases of communications, interning each distinct set of
/// links as a route.
struct Plans {
  std::vector<std::vector<PhasePlan>> collectives;
  std::vector<std::vector<LinkId>> routes;
};

Plans plan_communications(const Topology& topology, std::span<const CollectiveFlows> flows) {
  Plans plans;
  std::map<std::vector<LinkId>, std::uint32_t> route_index;
  std::vector<LinkId> path;
  plans.collectives.reserve(flows.size());
  for (const CollectiveFlows& collective : flows) {
    std::vector<PhasePlan> phases;
    for (const FlowPhase& phase : collective.phases) {
      std::map<double, std::map<LinkId, double>> wire;  // latency → link → wire bytes
      for (const Flow& f : phase.flows) {
        path.clear();
        topology.route(f.src, f.dst, path);
        auto& on = wire[f.latency_s];
        for (const LinkId l : path) on[l] += f.bytes / f.efficiency;
      }
      PhasePlan plan;
      for (const auto& [latency, on] : wire) {
        plan.latency_s = std::max(plan.latency_s, latency);
        // Links with equal wire bytes (to a relative 1e-9, so sums in another order still match)
        // share one communication.
        std::vector<std::pair<double, LinkId>> by_load;
        for (const auto& [l, bytes] : on) by_load.push_back({bytes, l});
        std::sort(by_load.begin(), by_load.end());
        for (std::size_t i = 0; i < by_load.size();) {
          std::size_t j = i;
          std::vector<LinkId> links;
          while (j < by_load.size() && by_load[j].first <= by_load[i].first * (1 + 1e-9)) links.push_back(by_load[j++].second);
          std::sort(links.begin(), links.end());
          const auto [it, inserted] = route_index.try_emplace(links, static_cast<std::uint32_t>(plans.routes.size()));
          if (inserted) plans.routes.push_back(links);
          const auto bytes = static_cast<std::uint64_t>(std::llround(by_load[i].first));
          if (bytes > 0) plan.comms.push_back(CommPlan{latency, bytes, it->second});
          i = j;
        }
      }
      phases.push_back(std::move(plan));
    }
    plans.collectives.push_back(std::move(phases));
  }
  return plans;
}

std::int64_t now_ps() {
  const double now = sg4::Engine::get_clock();
  if (!(now <= kMaxSimulatedSeconds)) simulated_time_out_of_range(now, "SimGrid's clock");
  return static_cast<std::int64_t>(std::llround(now * 1e12));
}

/// The simulation's state, shared by the controller and the runners. SimGrid runs actors one at a
/// time (cooperatively), so plain fields need no locking.
///
/// Who does what. One ordered queue per device stream (the TaskGraph's), walked by a controller
/// actor in dataflow order as the analytical engine does: a task at the head of its queue whose
/// dependencies have all finished starts at the later of their finish and its stream's previous
/// finish. A compute, copy or load task then finishes its fixed duration later — worked out, not
/// simulated, since SimGrid has nothing to decide about it. A collective waits at the head of the
/// queue of each member's stream; once all have reached it, it starts at the latest of their
/// arrivals, and a runner actor sleeps in SimGrid until then, runs its flows phase by phase, and
/// hands the finish time (SimGrid's clock) back to the controller, which carries on from there.
/// Every time becomes known at a SimGrid instant no later than itself (a collective's finish when
/// it happens, a compute task's when its inputs are known), so a collective never starts in
/// SimGrid's past. SimGrid's work, and its count of distinct event times that dominates its cost,
/// is then the network's alone: a thousand-GPU step holds about ten million compute tasks and one
/// million collectives.
struct State {
  State(const TaskGraph& graph, const Plans& p, const Interference& x, Output& o) : g(graph), plans(p), interference(x), out(o) {}

  const TaskGraph& g;
  const Plans& plans;
  const Interference& interference;
  bool interfered = false;  ///< compute runs in SimGrid, at the rates of `interference`
  std::vector<sg4::Host*> route_hosts;
  sg4::Host* sink = nullptr;
  sg4::Host* home = nullptr;  ///< where the controller and runners live (they do no work of their own)
  Output& out;

  std::vector<std::int32_t> remaining;  ///< per task: dependencies not finished yet
  std::vector<std::int64_t> ready_ps;   ///< per task: latest finish of its dependencies (a collective: and of its members' arrivals)
  std::vector<std::int32_t> arrived;    ///< per collective task: members whose stream reached it
  std::vector<std::uint32_t> succ_begin;
  std::vector<TaskId> succ;
  std::vector<std::uint32_t> head;      ///< per resource: position of its next task in its queue
  std::vector<std::int64_t> stream_ps;  ///< per resource: when its last task finished
  std::vector<std::size_t> worklist;    ///< resources whose head may be able to start
  std::size_t running = 0;              ///< collectives handed to runners and not finished
  std::size_t finished_tasks = 0;

  // The controller sleeps on `wake` while collectives run; runners queue what finished in `done`.
  sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
  std::vector<TaskId> done;

  /// A runner: one collective at a time, handed over through its semaphore.
  struct Runner {
    sg4::SemaphorePtr go = sg4::Semaphore::create(0);
    TaskId task = kNone;
    std::int64_t start_ps = 0;
  };
  std::vector<std::unique_ptr<Runner>> runners;
  std::vector<Runner*> idle;

  /// Per device, under interference: its host, the compute rate of each of its pstates, the links
  /// only it drives with their full bandwidth, whether it computes, and its collectives in flight by
  /// kind.
  struct DeviceState {
    sg4::Host* host = nullptr;
    std::vector<double> pstate_rates;
    std::vector<std::pair<sg4::Link*, double>> links;
    double link_rate = 1;
    bool computing = false;
    std::vector<TaskId> in_flight;  ///< collective tasks
  };
  std::vector<DeviceState> devices;

  /// Sets device d's speed and its links' bandwidth for what runs on it now.
  void refresh(std::size_t d) {
    DeviceState& dev = devices[d];
    double compute = 1, communication = 1;
    for (const TaskId t : dev.in_flight) {
      const CollectiveSpec& spec = g.collectives[g.owner[t]];
      const std::size_t k = interference_class(spec.kind, spec.kernel);
      compute = std::min(compute, interference.compute_beside(static_cast<std::int64_t>(d), g.owner[t], k));
      communication = std::min(communication, interference.communication_beside(static_cast<std::int64_t>(d), g.owner[t], k));
    }
    const auto pstate = std::find(dev.pstate_rates.begin(), dev.pstate_rates.end(), compute) - dev.pstate_rates.begin();
    if (static_cast<unsigned long>(pstate) != dev.host->get_pstate()) dev.host->set_pstate(static_cast<unsigned long>(pstate));
    const double link_rate = dev.computing ? communication : 1;
    if (link_rate != dev.link_rate) {
      dev.link_rate = link_rate;
      for (const auto& [link, bandwidth] : dev.links) link->set_bandwidth(bandwidth * link_rate);
    }
  }
  void collective_on_devices(TaskId t, bool starts) {
    std::int64_t scratch = 0;
    for (const std::int64_t d : g.devices_of(t, scratch)) {
      auto& in_flight = devices[static_cast<std::size_t>(d)].in_flight;
      if (starts) in_flight.push_back(t);
      else in_flight.erase(std::find(in_flight.begin(), in_flight.end(), t));
      refresh(static_cast<std::size_t>(d));
    }
  }
  void run_compute(TaskId t) {
    const auto d = static_cast<std::size_t>(g.owner[t]);
    DeviceState& dev = devices[d];
    dev.computing = true;
    refresh(d);
    const double flops = static_cast<double>(g.duration_ps[t]) * 1e-12 * dev.host->get_pstate_speed(0);
    sg4::this_actor::exec_init(flops)->set_host(dev.host)->start()->wait();
    ++out.activities;
    dev.computing = false;
    refresh(d);
  }

  void count_sync() { ++out.activities; ++out.synchronisations; }

  void finish(TaskId t, std::int64_t at) {
    out.finish_ps[t] = at;
    ++finished_tasks;
    if (out.finished && finished_tasks % 4096 == 0) out.finished->store(finished_tasks, std::memory_order_relaxed);
    for (std::uint32_t i = succ_begin[t]; i < succ_begin[t + 1]; ++i) {
      const TaskId s = succ[i];
      ready_ps[s] = std::max(ready_ps[s], at);
      if (--remaining[s] == 0) wake_resources_of(s);
    }
  }

  void wake_resources_of(TaskId t) {
    std::int64_t scratch = 0;
    for (const std::int64_t d : g.devices_of(t, scratch)) worklist.push_back(static_cast<std::size_t>(d) * g.stream_count() + g.stream[t]);
  }

  /// Starts what can start at the head of resource r: compute tasks one after the other, up to a
  /// collective (which waits for its other members, or goes to a runner) or a task whose
  /// dependencies are not finished.
  void advance(std::size_t r) {
    const auto queue = g.queue_of(r);
    std::int64_t scratch = 0;
    while (head[r] < queue.size()) {
      const TaskId t = queue[head[r]];
      if (remaining[t] > 0) return;
      const std::int64_t start = std::max(stream_ps[r], ready_ps[t]);
      if (g.kind[t] != TaskKind::Collective && !(interfered && g.kind[t] == TaskKind::Compute)) {
        out.start_ps[t] = start;
        stream_ps[r] = start + g.duration_ps[t];
        ++head[r];
        finish(t, stream_ps[r]);
        continue;
      }
      // A collective waits for every member's stream; under interference a compute task goes to a
      // runner the same way (its one stream is its only member).
      if (arrived_at_[r] == t) return;  // this member already waits here
      arrived_at_[r] = t;
      ready_ps[t] = std::max(ready_ps[t], start);  // the collective starts at its members' latest arrival
      if (++arrived[t] == static_cast<std::int32_t>(g.devices_of(t, scratch).size())) dispatch(t, ready_ps[t]);
      return;
    }
  }

  void dispatch(TaskId t, std::int64_t start) {
    out.start_ps[t] = start;
    Runner* runner = nullptr;
    if (!idle.empty()) {
      runner = idle.back();
      idle.pop_back();
    } else {
      runners.push_back(std::make_unique<Runner>());
      runner = runners.back().get();
      sg4::Actor::create("runner" + std::to_string(runners.size()), home, [this, runner] { run(*runner); });
    }
    runner->task = t;
    runner->start_ps = start;
    ++running;
    runner->go->release();
  }

  /// A collective (or, under interference, a compute task) finished at SimGrid's now: its members'
  /// streams move on.
  void complete(TaskId t) {
    --running;
    const std::int64_t at = std::max(out.start_ps[t], now_ps());
    std::int64_t scratch = 0;
    for (const std::int64_t d : g.devices_of(t, scratch)) {
      const std::size_t r = static_cast<std::size_t>(d) * g.stream_count() + g.stream[t];
      stream_ps[r] = at;
      ++head[r];
      arrived_at_[r] = kNone;
      worklist.push_back(r);
    }
    finish(t, at);
  }

  void run_collective(std::uint32_t c) {
    // The framework's host time around the collective (strategies/implementation.hpp) comes first.
    const CollectiveSpec& spec = g.collectives[c];
    if (spec.host_s_per_rank > 0) {
      sg4::this_actor::sleep_for(spec.host_s_per_rank * static_cast<double>(g.group(spec.group).size()));
      ++out.activities;
    }
    for (const PhasePlan& phase : plans.collectives[c]) {
      std::vector<sg4::CommPtr> comms;
      comms.reserve(phase.comms.size());
      double waited = 0;
      for (const CommPlan& comm : phase.comms) {
        if (comm.latency_s > waited) {
          sg4::this_actor::sleep_for(comm.latency_s - waited);
          ++out.activities;
          waited = comm.latency_s;
        }
        comms.push_back(sg4::Comm::sendto_async(route_hosts[comm.route], sink, comm.wire_bytes));
        ++out.activities;
        ++out.communications;
      }
      if (phase.latency_s > waited) {  // a phase whose flows all rounded to no bytes still pays its latency
        sg4::this_actor::sleep_for(phase.latency_s - waited);
        ++out.activities;
      }
      sg4::Comm::wait_all(comms);
    }
  }

  /// A runner's body.
  void run(Runner& me) {
    for (;;) {
      me.go->acquire();
      count_sync();
      if (me.task == kNone) return;  // the simulation is over
      const std::int64_t now = now_ps();
      if (me.start_ps > now) {
        sg4::this_actor::sleep_for(static_cast<double>(me.start_ps - now) * 1e-12);
        ++out.activities;
      }
      if (g.kind[me.task] == TaskKind::Compute) {
        run_compute(me.task);
      } else if (interfered) {
        collective_on_devices(me.task, true);
        run_collective(g.owner[me.task]);
        collective_on_devices(me.task, false);
      } else {
        run_collective(g.owner[me.task]);
      }
      done.push_back(me.task);
      idle.push_back(&me);
      wake->release();
    }
  }

  /// The controller's body.
  void control() {
    for (std::size_t r = 0; r < g.resource_count(); ++r)
      if (!g.queue_of(r).empty()) worklist.push_back(r);
    for (;;) {
      while (!worklist.empty()) {
        const std::size_t r = worklist.back();
        worklist.pop_back();
        advance(r);
      }
      if (running == 0) break;
      while (done.empty()) {
        wake->acquire();
        count_sync();
      }
      std::vector<TaskId> finished;
      finished.swap(done);
      for (const TaskId t : finished) complete(t);
    }
    for (const auto& runner : runners) {
      runner->task = kNone;
      runner->go->release();
    }
  }

  std::vector<TaskId> arrived_at_;  ///< per resource: the collective it waits at, counted once
};

}  // namespace

void run_here(const TaskGraph& g, const Cluster& cluster, std::span<const CollectiveFlows> flows, std::span<const double> device_speed_flops,
              const Interference& interference, Output& out) {
  PARASIM_CHECK(flows.size() == g.collectives.size(), "one flow plan per collective of the task graph");
  PARASIM_CHECK(static_cast<std::int64_t>(device_speed_flops.size()) == g.devices && g.devices == cluster.device_count(),
                "one speed per device of the cluster");
  const bool interfered = !interference.none();
  PARASIM_CHECK(!interfered || static_cast<std::int64_t>(interference.of_device.size()) == g.devices, "one interference entry per device");
  const Topology topology(cluster);
  const Plans plans = plan_communications(topology, flows);

  int argc = 1;
  char name[] = "parasim-simgrid";
  char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thres:critical");
  sg4::Engine engine(&argc, argv);
  // See the top of this file for why: plain max-min sharing, no TCP corrections.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  // Thousands of stream actors, each a few calls deep: small stacks, no guard pages.
  sg4::Engine::set_config("contexts/stack-size:128");
  sg4::Engine::set_config("contexts/guard-size:0");

  auto* zone = sg4::create_star_zone("parasim");
  State st(g, plans, interference, out);
  st.interfered = interfered;
  st.devices.resize(static_cast<std::size_t>(g.devices));
  // The graph's collectives that differ in what compute keeps beside them (class, channel share and,
  // under rates by size, bytes), one standing for each: a device's pstates are its compute rates
  // beside each.
  std::map<std::tuple<std::size_t, double, double>, std::uint32_t> beside;
  if (interfered)
    for (std::uint32_t c = 0; c < g.collectives.size(); ++c)
      beside.emplace(std::tuple(interference_class(g.collectives[c].kind, g.collectives[c].kernel), interference.share_of(c),
                                interference.at_size.empty() ? 0.0 : g.collectives[c].bytes),
                     c);
  for (std::int64_t d = 0; d < g.devices; ++d) {
    const auto i = static_cast<std::size_t>(d);
    const double speed = device_speed_flops[i];
    // Pstate 0 is full speed; under interference one more per distinct compute rate below 1.
    std::vector<double> rates{1};
    if (interfered)
      for (const auto& [key, c] : beside) {
        const double r = interference.compute_beside(d, c, std::get<0>(key));
        if (std::find(rates.begin(), rates.end(), r) == rates.end()) rates.push_back(r);
      }
    std::vector<double> speeds;
    for (const double r : rates) speeds.push_back(speed * r);
    st.devices[i].host = zone->create_host("device" + std::to_string(d), speeds)->seal();
    st.devices[i].pstate_rates = std::move(rates);
  }
  st.sink = zone->create_host("sink", 1)->seal();
  std::map<LinkId, sg4::Link*> links;
  for (const auto& route : plans.routes)
    for (const LinkId l : route)
      if (!links.count(l)) links[l] = zone->create_link(topology.link_name(l), topology.link(l).bandwidth_bytes_per_s)->seal();
  if (interfered) {
    std::vector<LinkId> own;
    for (std::int64_t d = 0; d < g.devices; ++d) {
      own.clear();
      device_links(cluster, topology.layout(), d, own);
      for (const LinkId l : own)
        if (const auto it = links.find(l); it != links.end())
          st.devices[static_cast<std::size_t>(d)].links.emplace_back(it->second, topology.link(l).bandwidth_bytes_per_s);
    }
  }
  for (std::size_t r = 0; r < plans.routes.size(); ++r) {
    sg4::Host* host = zone->create_host("route" + std::to_string(r), 1)->seal();
    std::vector<sg4::LinkInRoute> path;
    for (const LinkId l : plans.routes[r]) path.emplace_back(links[l]);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, path, false);
    st.route_hosts.push_back(host);
  }
  zone->add_route(nullptr, st.sink->get_netpoint(), nullptr, nullptr, {}, false);
  zone->seal();
  st.home = st.sink;

  const std::size_t tasks = g.task_count();
  st.remaining.resize(tasks);
  st.ready_ps.assign(tasks, 0);
  st.arrived.assign(tasks, 0);
  st.succ_begin.assign(tasks + 1, 0);
  for (TaskId t = 0; t < tasks; ++t) {
    st.remaining[t] = static_cast<std::int32_t>(g.dep_begin[t + 1] - g.dep_begin[t]);
    for (const TaskId d : g.deps_of(t)) ++st.succ_begin[d + 1];
  }
  for (std::size_t t = 0; t < tasks; ++t) st.succ_begin[t + 1] += st.succ_begin[t];
  st.succ.resize(g.deps.size());
  {
    std::vector<std::uint32_t> at(st.succ_begin.begin(), st.succ_begin.end() - 1);
    for (TaskId t = 0; t < tasks; ++t)
      for (const TaskId d : g.deps_of(t)) st.succ[at[d]++] = t;
  }
  std::fill(out.start_ps.begin(), out.start_ps.end(), -1);
  std::fill(out.finish_ps.begin(), out.finish_ps.end(), -1);
  const std::size_t resources = g.resource_count();
  st.head.assign(resources, 0);
  st.stream_ps.assign(resources, 0);
  st.arrived_at_.assign(resources, kNone);
  sg4::Actor::create("controller", st.home, [&st] { st.control(); });
  const auto wall0 = std::chrono::steady_clock::now();
  timespec cpu0{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  engine.run();
  timespec cpu1{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  out.run_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  out.run_cpu_s = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);

  std::int64_t makespan = 0;
  for (TaskId t = 0; t < tasks; ++t) {
    PARASIM_CHECK(out.finish_ps[t] >= 0, "task " + std::to_string(t) + " (" + g.labels[g.label[t]] +
                                             ") never ran under SimGrid: the task graph has a cycle between its queues and dependencies");
    makespan = std::max(makespan, out.finish_ps[t]);
  }
  out.makespan_ps = makespan;
}

}  // namespace parasim::sim::simgrid_detail

extern "C" __attribute__((visibility("default"))) const parasim::sim::simgrid_detail::SimgridPlugin* parasim_simgrid_plugin() {
  static const parasim::sim::simgrid_detail::SimgridPlugin table{parasim::sim::simgrid_detail::kSimgridPluginVersion,
                                                                  &parasim::sim::simgrid_detail::run_here};
  return &table;
}
