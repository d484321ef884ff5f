#include "sim/local_update.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/engine/simgrid_engine.hpp"
#include "sim/links.hpp"
#include "sim/simulate.hpp"
#include "sim/summarize.hpp"
#include "sim/topology.hpp"

namespace parasim::sim {
namespace {

/// Outer steps simulated: the first fills the pipeline of fragments, the steady state is read
/// between the ends of the first and of the last.
constexpr std::int64_t kOuterSteps = 3;

/// The inner step (0-based, within an outer step) after which fragment f synchronises.
std::int64_t sync_step(std::int64_t f, std::int64_t fragments, std::int64_t inner_steps) { return (f + 1) * inner_steps / fragments - 1; }

struct OuterGraph {
  TaskGraph graph;
  /// Per outer step, per replica: the task of its last inner step.
  std::vector<std::vector<TaskId>> last_inner;
};

OuterGraph build(const OuterProblem& p, const Cluster& cluster) {
  const auto& spec = p.spec;
  const std::int64_t H = spec.inner_steps, F = spec.streaming() ? spec.fragments : 1, tau = spec.streaming() ? spec.overlap_steps : 0;
  PARASIM_CHECK(H >= 1 && F >= 1 && F <= H && tau >= 0 && p.replicas.size() >= 2, "an outer step of at least one inner step and two replicas");
  TaskGraphBuilder b(cluster.device_count(), {Stream::Compute, Stream::Wan});
  std::vector<std::int64_t> members;
  for (const auto& r : p.replicas) members.push_back(r.device);
  std::sort(members.begin(), members.end());
  const std::uint32_t group = b.group(members);
  CollectiveSpec sync;
  sync.kind = strategies::gathered(spec) ? CollectiveKind::AllGather : CollectiveKind::AllReduce;
  sync.group = group;
  // Size convention (sim/collectives.hpp): an all-reduce's buffer on each rank; an all-gather's
  // gathered output on each rank (each replica contributes its own fragment's pairs).
  const double fragment_bytes = p.wire_bytes / static_cast<double>(F);
  sync.bytes = sync.kind == CollectiveKind::AllGather ? fragment_bytes * static_cast<double>(p.replicas.size()) : fragment_bytes;
  const std::uint32_t collective = b.collective(sync);
  const std::uint32_t inner_label = b.label("inner step"), before_label = b.label("pseudo-gradient"), sync_label = b.label("outer synchronisation"),
                      after_label = b.label("outer optimizer");
  OuterGraph out;
  // Merges waiting for their inner step: (global inner step before which it runs, its collective).
  std::vector<std::pair<std::int64_t, TaskId>> pending;
  const std::size_t n = p.replicas.size();
  std::vector<TaskId> ids(n);
  const std::uint8_t compute = 0, wan = 1;
  for (std::int64_t step = 0; step < kOuterSteps * H; ++step) {
    // Merges due before this inner step, in the order their synchronisations were issued.
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->first != step) {
        ++it;
        continue;
      }
      for (std::size_t r = 0; r < n; ++r) {
        const TaskId dep = it->second;
        const TaskId t = b.add(TaskKind::Compute, p.replicas[r].device, compute, Picoseconds::from_seconds(p.replicas[r].after_s / static_cast<double>(F)),
                               Category::Optimizer, -1, after_label, std::span(&dep, 1));
        b.enqueue(t);
      }
      it = pending.erase(it);
    }
    for (std::size_t r = 0; r < n; ++r) {
      ids[r] = b.add(TaskKind::Compute, p.replicas[r].device, compute, Picoseconds::from_seconds(p.replicas[r].inner_step_s), Category::Forward, -1,
                     inner_label, {});
      b.enqueue(ids[r]);
    }
    const std::int64_t within = step % H;
    if (within == H - 1) out.last_inner.push_back(ids);
    for (std::int64_t f = 0; f < F; ++f) {
      if (sync_step(f, F, H) != within) continue;
      std::vector<TaskId> ready;
      for (std::size_t r = 0; r < n; ++r) {
        const TaskId t = b.add(TaskKind::Compute, p.replicas[r].device, compute, Picoseconds::from_seconds(p.replicas[r].before_s / static_cast<double>(F)),
                               Category::Optimizer, -1, before_label, std::span(&ids[r], 1));
        b.enqueue(t);
        ready.push_back(t);
      }
      const TaskId c = b.add_collective(collective, wan, Category::GradientComm, -1, sync_label, ready);
      b.enqueue(c);
      pending.emplace_back(step + tau + 1, c);
    }
  }
  // Merges past the last simulated inner step still run (they end the last outer step's traffic).
  for (const auto& [due, c] : pending)
    for (std::size_t r = 0; r < n; ++r) {
      const TaskId t = b.add(TaskKind::Compute, p.replicas[r].device, compute, Picoseconds::from_seconds(p.replicas[r].after_s / static_cast<double>(F)),
                             Category::Optimizer, -1, after_label, std::span(&c, 1));
      b.enqueue(t);
    }
  out.graph = std::move(b).finish();
  return out;
}

}  // namespace

/// Runs the outer steps' graph on `cluster` (only the collectives' times depend on its links).
static OuterRun run_outer(const OuterProblem& p, const OuterGraph& og, const Cluster& cluster, Backend backend) {
  const TaskGraph& g = og.graph;
  const std::vector<CollectiveEstimate> estimates = estimate_collectives(g, cluster);
  std::vector<Picoseconds> coll_ps;
  for (const auto& e : estimates) coll_ps.push_back(e.time);
  const std::vector<CollectiveFlows> flows = collective_flows_of(g, cluster, estimates);
  Timeline timeline;
  std::vector<std::int64_t> finish;
  if (backend == Backend::SimGrid) {
    // Compute tasks carry their durations; the hosts' speed only converts them (any one speed).
    const std::vector<double> speeds(static_cast<std::size_t>(cluster.device_count()), 1e12);
    SimGridRun run = simulate_simgrid(g, cluster, flows, speeds);
    timeline = std::move(run.timeline);
    finish = std::move(run.finish_ps);
  } else {
    timeline = simulate_fifo(g, coll_ps);
  }
  if (finish.empty()) {
    finish.resize(g.task_count());
    for (TaskId t = 0; t < g.task_count(); ++t) finish[t] = timeline.start_ps[t] + task_duration_ps(g, coll_ps, t);
  }
  auto end_of = [&](std::size_t outer) {
    std::int64_t latest = 0;
    for (const TaskId t : og.last_inner[outer]) latest = std::max(latest, finish[t]);
    return latest;
  };
  OuterRun run;
  run.tasks = static_cast<std::int64_t>(g.task_count());
  const double span_s = static_cast<double>(end_of(kOuterSteps - 1) - end_of(0)) * 1e-12;
  run.outer_step_s = span_s / static_cast<double>(kOuterSteps - 1);
  double inner = 0;
  for (const auto& r : p.replicas) inner += r.inner_step_s;
  inner /= static_cast<double>(p.replicas.size());
  run.compute_utilisation = run.outer_step_s > 0 ? std::min(1.0, inner * static_cast<double>(p.spec.inner_steps) / run.outer_step_s) : 1.0;
  // The WAN's traffic: every synchronisation of the simulated outer steps, per outer step.
  const Topology topology(cluster);
  const LinkUsage usage = link_usage(g, timeline.start_ps, finish, coll_ps, flows, topology);
  for (const LinkClassLoad& c : usage.classes) {
    if (c.link_class != LinkClass::Wan) continue;
    run.wan_bytes = c.bytes / static_cast<double>(kOuterSteps);
    run.wan_utilisation = timeline.makespan.count > 0 ? c.max_busy_s / (static_cast<double>(timeline.makespan.count) * 1e-12) : 0;
  }
  for (const LinkLoad& l : usage.busiest)
    if (l.link_class == LinkClass::Wan) run.wan_bytes_per_site = std::max(run.wan_bytes_per_site, l.bytes / static_cast<double>(kOuterSteps));
  return run;
}

OuterRun simulate_outer(const OuterProblem& p, const Cluster& cluster, Backend backend) { return run_outer(p, build(p, cluster), cluster, backend); }

BandwidthNeed wan_bandwidth_for(const OuterProblem& p, const Cluster& cluster, Backend backend, double target) {
  PARASIM_CHECK(target > 0 && target < 1, "a compute utilisation in (0, 1)");
  // The graph is the same at every bandwidth: built once, run at each.
  const OuterGraph og = build(p, cluster);
  Cluster c = cluster;
  auto utilisation = [&](double bytes_per_s) {
    c.wan.bandwidth_bytes_per_s = bytes_per_s;
    return run_outer(p, og, c, backend).compute_utilisation;
  };
  // An upper bound where the WAN's transfer time vanishes beside the inner steps: 1 EB/s.
  double high = 1e18;
  if (utilisation(high) < target) return {};
  // A lower bound at which one synchronisation takes 10^5 s (kept inside the simulated time's range).
  double low = std::max(1.0, p.wire_bytes / 1e5);
  if (utilisation(low) >= target) return {low, true};
  // Bisection in log space: the utilisation grows with the bandwidth.
  while (high / low > 1.001) {
    const double mid = std::sqrt(low * high);
    (utilisation(mid) >= target ? high : low) = mid;
  }
  return {high, true};
}

double time_per_step_s(const Result& r) { return r.local_update ? r.local_update->time_per_inner_step_s : r.step_time_s; }

std::int64_t devices_in_run(const Result& r) { return r.local_update ? r.devices * r.local_update->replicas : r.devices; }

double wan_bytes(const Result& r) {
  for (const auto& c : r.link_classes)
    if (c.link_class == "WAN") return c.bytes;
  return 0;
}

}  // namespace parasim::sim
