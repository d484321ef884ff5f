#include "sim/simulate.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/format.hpp"
#include "sim/cost_model.hpp"
#include "sim/engine/interference_engine.hpp"
#include "sim/engine/simgrid_engine.hpp"
#include "sim/recost.hpp"
#include "sim/summarize.hpp"
#include "sim/topology.hpp"
#include "sim/topology_notes.hpp"

namespace parasim::sim {

namespace {

/// The coupling of the devices of shared hosts (Interference::together, memory_duty, host_of,
/// host_weight) for the analytical engine, which times each compute task of `step` by its host's
/// figures alone: `step` is re-costed with the devices' own figures, and each task keeps `together`
/// (alone over shared-host time) while another device of its host computes.
void couple_shared_hosts(LoweredStep& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile, Interference& interference) {
  TaskGraph& g = step.tasks;
  const std::vector<std::int64_t> shared_ps = g.duration_ps;
  Cluster alone = cluster;
  for (Device& d : alone.devices) d.priced_as.clear();
  // Memory time first: every arithmetic rate unbounded and no launch overhead, so that each kernel
  // takes its memory time alone (sim/cost_model.hpp: the larger of its FLOP and byte times).
  Profile memory_only = profile;
  for (auto& [name, device] : memory_only.devices) {
    constexpr double kUnbounded = 1e300;
    for (auto& [dtype, peak] : device.peak_flops_per_s) peak = kUnbounded;
    device.softmax_flops_per_s = kUnbounded;
    device.optimizer_flops_per_s = kUnbounded;
    device.kernel_launch_overhead_s = 0;
  }
  recost(step, plan, alone, memory_only);
  const std::vector<std::int64_t> memory_ps = g.duration_ps;
  recost(step, plan, alone, profile);
  interference.together.assign(g.task_count(), 1.0f);
  interference.memory_duty.assign(g.task_count(), 1.0f);
  for (TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != TaskKind::Compute || cluster.devices[static_cast<std::size_t>(g.owner[t])].priced_as.empty()) continue;
    const auto alone_ps = static_cast<double>(g.duration_ps[t]);
    if (shared_ps[t] > 0) interference.together[t] = static_cast<float>(std::min(1.0, alone_ps / static_cast<double>(shared_ps[t])));
    if (alone_ps > 0) interference.memory_duty[t] = static_cast<float>(std::min(1.0, static_cast<double>(memory_ps[t]) / alone_ps));
  }
  interference.host_of.assign(static_cast<std::size_t>(g.devices), -1);
  for (const Device& d : cluster.devices)
    if (!d.priced_as.empty() && d.id < g.devices) interference.host_of[static_cast<std::size_t>(d.id)] = d.node;
  // Under the data-parallel replica shortcut only replica 0's devices are simulated, and each other
  // replica's device computes when its image in replica 0 does: a device stands for itself and for
  // the replicas of it on its own host (a replica on another device's host is not counted there).
  interference.host_weight.assign(static_cast<std::size_t>(g.devices), 0);
  for (const Device& d : cluster.devices) {
    std::int64_t image = d.id;
    if (step.replica_shortcut) {
      auto coords = plan.mesh.coords_of(d.id);
      coords[static_cast<std::size_t>(plan.dp_axis)] = 0;
      image = plan.mesh.device_at(coords);
    }
    if (cluster.devices[static_cast<std::size_t>(image)].node == d.node) ++interference.host_weight[static_cast<std::size_t>(image)];
  }
  for (std::int64_t& w : interference.host_weight) w = std::max<std::int64_t>(w, 1);
}

}  // namespace

std::string_view to_string(Backend b) { return b == Backend::SimGrid ? "simgrid" : "analytical"; }

Interference step_interference(const TaskGraph& tasks, const Cluster& cluster, const Profile& profile) {
  Interference x;
  std::map<std::string, std::uint32_t> index;
  x.of_device.reserve(cluster.devices.size());
  for (const auto& d : cluster.devices) {
    const auto [it, inserted] = index.try_emplace(d.figures(), static_cast<std::uint32_t>(x.rates.size()));
    if (inserted) x.rates.push_back(profile.device(d.figures()).interference);
    x.of_device.push_back(it->second);
  }
  if (x.none()) return x;
  // A collective spanning nodes runs on fewer channels than one inside a node: its share of the
  // in-node SM cost is their ratio (at most 1).
  x.channel_share.reserve(tasks.collectives.size());
  for (const CollectiveSpec& c : tasks.collectives) {
    const auto group = tasks.group(c.group);
    const double in_node = group.empty() ? 0 : x.of(group.front()).nccl_channels_in_node;
    const double across = c.kernel == CommKernel::Nccl ? nccl_channels_across_nodes(cluster, group) : 0;
    x.channel_share.push_back(across > 0 && in_node > 0 ? std::min(1.0, across / in_node) : 1.0);
  }
  size_rates(x, tasks);
  return x;
}

Simulation simulate(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile, Backend backend,
                    const LowerOptions& options, ProgressSink* progress) {
  Simulation s;
  auto begin = [progress](std::string_view phase, std::size_t total) {
    if (progress) progress->begin(phase, total);
  };
  auto end = [progress] {
    if (progress) progress->end();
  };
  // The data-parallel replica shortcut stands one replica for all, so its all-reduces never meet
  // the other replicas' traffic: right for the analytical backend, which gives every collective
  // its links whole anyway, but it would hide exactly the contention the simgrid backend is for.
  // Under simgrid every replica is simulated, and the Result says so.
  LowerOptions lower_options = options;
  const bool shortcut_refused = backend == Backend::SimGrid && options.replicate_data_parallel;
  if (backend == Backend::SimGrid) lower_options.replicate_data_parallel = false;
  begin("lowering the plan to tasks", 0);
  s.step = lower(graph, plan, cluster, profile, lower_options);
  end();
  const std::size_t tasks = s.step.tasks.task_count();
  s.collectives = estimate_collectives(s.step.tasks, cluster);
  std::vector<Picoseconds> coll_ps;
  coll_ps.reserve(s.collectives.size());
  for (const auto& c : s.collectives) coll_ps.push_back(c.time);
  const std::vector<CollectiveFlows> flows = collective_flows_of(s.step.tasks, cluster, s.collectives);
  Interference interference = step_interference(s.step.tasks, cluster, profile);
  // Devices priced by their kind's shared-host entry (build_cluster: a node of two devices or more
  // whose kind has one) share their host's memory bandwidth and caches only while more than one of
  // them computes. The analytical engine follows that (couple_shared_hosts); the SimGrid backend
  // prices every task by the shared-host figures throughout (the note says which).
  const bool hosts_shared = std::any_of(cluster.devices.begin(), cluster.devices.end(), [](const Device& d) { return !d.priced_as.empty(); });
  if (hosts_shared && backend == Backend::Analytical) couple_shared_hosts(s.step, plan, cluster, profile, interference);
  const bool interfered = !interference.none();
  // Under interference the step is also simulated with overlap free, to say what interference cost.
  std::int64_t free_makespan_ps = 0;
  if (backend == Backend::SimGrid) {
    // Hosts run at their devices' profile speed for the plan's precision, times their speed factor.
    std::vector<double> speeds;
    speeds.reserve(cluster.devices.size());
    for (const auto& d : cluster.devices) speeds.push_back(gemm_peak_flops(profile.device(d.figures()), plan.precision) * d.speed_factor);
    // SimGrid's clock is a double: the step is refused first if the analytical figures already say
    // it would leave the picosecond clock's range (fifo_engine.hpp).
    check_time_range(s.step.tasks, coll_ps, interference.slowest_rate());
    // The step with overlap free first, so that its timeline is gone before the one kept is made.
    // Each run counts its finished tasks, so a long one shows its rate and the time left.
    if (interfered) {
      begin("simulating " + std::to_string(tasks) + " tasks with SimGrid, overlap free", tasks);
      free_makespan_ps = simulate_simgrid(s.step.tasks, cluster, flows, speeds, {}, progress).timeline.makespan.count;
      if (progress) progress->update(tasks);
      end();
    }
    begin("simulating " + std::to_string(tasks) + " tasks with SimGrid", tasks);
    SimGridRun run = simulate_simgrid(s.step.tasks, cluster, flows, speeds, interference, progress);
    if (progress) progress->update(tasks);
    end();
    s.timeline = std::move(run.timeline);
    s.finish_ps = std::move(run.finish_ps);
    s.simgrid_activities = run.activities;
  } else {
    begin("simulating tasks (analytical engine)", tasks);
    if (interfered) {
      free_makespan_ps = simulate_fifo(s.step.tasks, coll_ps).makespan.count;  // first, as above
      InterferedTimeline run = simulate_interference(s.step.tasks, coll_ps, interference, progress);
      s.timeline = std::move(run.timeline);
      s.finish_ps = std::move(run.finish_ps);
    } else {
      s.timeline = simulate_fifo(s.step.tasks, coll_ps, progress);
    }
    if (progress) progress->update(tasks);
    end();
  }
  begin("summarising the step", 0);
  s.result = summarize(graph, plan, cluster, profile, s.step, s.timeline, s.collectives, backend, s.finish_ps);
  if (interfered) {
    // Mean over the devices that computed (one replica's under the replica shortcut).
    const std::vector<std::int64_t> stretch = compute_stretch_ps(s.step.tasks, s.timeline.start_ps, s.finish_ps);
    std::vector<bool> computed(stretch.size(), false);
    for (TaskId t = 0; t < tasks; ++t)
      if (s.step.tasks.kind[t] == TaskKind::Compute) computed[s.step.tasks.owner[t]] = true;
    double total_ps = 0;
    std::int64_t count = 0;
    for (std::size_t d = 0; d < stretch.size(); ++d)
      if (computed[d]) {
        total_ps += static_cast<double>(stretch[d]);
        ++count;
      }
    s.result.interference_compute_s = count > 0 ? total_ps / static_cast<double>(count) * 1e-12 : 0;
    s.result.interference_step_s = static_cast<double>(s.timeline.makespan.count - free_makespan_ps) * 1e-12;
  }

  const Topology topology(cluster);
  s.links = link_usage(s.step.tasks, s.timeline.start_ps, s.finish_ps, coll_ps, flows, topology);
  Result& r = s.result;
  for (const LinkClassLoad& c : s.links.classes)
    r.link_classes.push_back(LinkClassFigures{std::string(to_string(c.link_class)), c.links, c.links_used, c.bytes, c.max_load_s,
                                              c.max_busy_s, c.mean_busy_s, c.bottleneck_phases});
  for (const LinkLoad& l : s.links.busiest)
    r.busiest_links.push_back(
        LinkFigures{topology.link_name(l.link), std::string(to_string(l.link_class)), l.bandwidth_bytes_per_s, l.bytes, l.load_s, l.busy_s});
  r.shared_links = s.links.shared_links;
  r.notes = topology_notes(cluster, s.links, backend == Backend::SimGrid);
  // The profile's shared-host entry and rank spread, where build_cluster applied them
  // (sim/cluster.cpp): each said once.
  if (!cluster.devices.empty() && !cluster.devices.front().priced_as.empty()) {
    const Device& d = cluster.devices.front();
    const std::int64_t measured = profile.device(d.kind).shared_host.ranks;
    r.notes.push_back("Each " + d.kind + " is priced by the profile's \"" + d.priced_as + "\" figures: its kernels measured with " +
                      std::to_string(measured) + " ranks of one host running them at the same moment (the profile's shared_host), as the " +
                      std::to_string(cluster.devices_per_node) + " devices of a node share its memory bandwidth and caches" +
                      (backend == Backend::Analytical
                           ? "; while no other device of its node computes, by its own figures, and beside other work than its own by that slowdown times the other work's memory duty (the engine follows which devices compute what, when)"
                           : ", throughout (the simgrid backend does not follow which devices compute when)") +
                      (measured == cluster.devices_per_node ? "."
                       : measured < cluster.devices_per_node
                           ? "; the node has more devices than were measured, so its kernels may run slower still."
                           : "; the node has fewer devices than were measured, so its kernels may run faster."));
  }
  if (!cluster.devices.empty()) {
    const DeviceProfile& first = profile.device(cluster.devices.front().figures());
    const double slowdown = rank_spread_slowdown(first, cluster.devices.size());
    if (slowdown > 1)
      r.notes.push_back("Every device computes " + format_number(round_to_digits(slowdown, 4)) + " times slower than its profile's rates: the slowest of " +
                        std::to_string(first.rank_spread.ranks) + " " + cluster.devices.front().kind +
                        " ranks running the same work at once took that over their mean (the profile's rank_spread), and ranks in step wait for the slowest.");
  }
  if (backend == Backend::Analytical && options.replicate_data_parallel && !s.step.replica_shortcut && plan.dp() > 1)
    r.notes.push_back("Every data-parallel replica is simulated: the replicas differ in their devices or links (a straggler, another "
                      "device kind, or a tensor, pipeline or expert group that crosses a node, switch or site boundary in one "
                      "replica and not in the first), so one replica cannot stand for all.");
  if (shortcut_refused && plan.dp() > 1)
    r.notes.push_back("The simgrid backend simulates every data-parallel replica: the replica shortcut (one replica standing for "
                      "all) would hide the contention between replicas' collectives.");
  end();
  return s;
}

}  // namespace parasim::sim
