#include "sim/links.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "common/error.hpp"

namespace parasim::sim {
namespace {

/// What one run of a collective puts on the links it crosses.
struct Footprint {
  std::vector<LinkId> links;      ///< ascending
  std::vector<double> bytes;      ///< payload per link
  std::vector<double> wire;       ///< wire bytes per link
  std::vector<LinkClass> bottlenecks;  ///< per phase, the class of its most loaded link
};

Footprint footprint(const CollectiveFlows& flows, const Topology& topology) {
  Footprint fp;
  std::map<LinkId, std::pair<double, double>> on;
  std::vector<LinkId> path;
  for (const FlowPhase& phase : flows.phases) {
    std::map<LinkId, double> phase_wire;
    for (const Flow& f : phase.flows) {
      path.clear();
      topology.route(f.src, f.dst, path);
      for (const LinkId l : path) {
        on[l].first += f.bytes;
        on[l].second += f.bytes / f.efficiency;
        phase_wire[l] += f.bytes / f.efficiency;
      }
    }
    double worst = -1;
    LinkClass worst_class = LinkClass::DevicePort;
    for (const auto& [l, wire] : phase_wire) {
      const TopologyLink link = topology.link(l);
      if (wire / link.bandwidth_bytes_per_s > worst) {
        worst = wire / link.bandwidth_bytes_per_s;
        worst_class = link.link_class;
      }
    }
    if (worst >= 0) fp.bottlenecks.push_back(worst_class);
  }
  for (const auto& [l, bw] : on) {
    fp.links.push_back(l);
    fp.bytes.push_back(bw.first);
    fp.wire.push_back(bw.second);
  }
  return fp;
}

}  // namespace

LinkUsage link_usage(const TaskGraph& g, std::span<const std::int64_t> start_ps, std::span<const std::int64_t> finish_ps,
                     std::span<const Picoseconds> collective_ps, std::span<const CollectiveFlows> flows, const Topology& topology,
                     std::size_t busiest) {
  PARASIM_CHECK(start_ps.size() == g.task_count() && (finish_ps.empty() || finish_ps.size() == g.task_count()),
                "the timeline belongs to the task graph");
  PARASIM_CHECK(!finish_ps.empty() || collective_ps.size() == g.collectives.size(), "one duration per collective of the task graph");
  PARASIM_CHECK(flows.size() == g.collectives.size(), "one flow plan per collective of the task graph");
  std::vector<Footprint> prints;
  prints.reserve(flows.size());
  for (const CollectiveFlows& f : flows) prints.push_back(footprint(f, topology));

  const std::size_t n = topology.link_count();
  std::vector<LinkLoad> loads(n);
  for (LinkId l = 0; l < n; ++l) {
    const TopologyLink link = topology.link(l);
    loads[l].link = l;
    loads[l].link_class = link.link_class;
    loads[l].bandwidth_bytes_per_s = link.bandwidth_bytes_per_s;
  }
  std::array<std::int64_t, kLinkClassCount> bottleneck_phases{};
  // Busy intervals: the collective runs in time order, ends before starts at the same instant, so
  // back-to-back collectives do not count as sharing a link.
  std::vector<std::tuple<std::int64_t, int, std::uint32_t>> events;
  std::vector<std::int64_t> runs(g.collectives.size(), 0);
  for (TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != TaskKind::Collective) continue;
    const Footprint& fp = prints[g.owner[t]];
    ++runs[g.owner[t]];
    const std::int64_t finish = finish_ps.empty() ? start_ps[t] + collective_ps[g.owner[t]].count : finish_ps[t];
    if (finish > start_ps[t] && !fp.links.empty()) {
      events.emplace_back(start_ps[t], 1, g.owner[t]);
      events.emplace_back(finish, 0, g.owner[t]);
    }
  }
  std::sort(events.begin(), events.end());
  // Each collective's load times its runs: the sums do not depend on the order of the tasks.
  for (std::size_t c = 0; c < runs.size(); ++c) {
    if (runs[c] == 0) continue;
    const Footprint& fp = prints[c];
    const auto times = static_cast<double>(runs[c]);
    for (std::size_t i = 0; i < fp.links.size(); ++i) {
      loads[fp.links[i]].bytes += times * fp.bytes[i];
      loads[fp.links[i]].load_s += times * fp.wire[i] / loads[fp.links[i]].bandwidth_bytes_per_s;
    }
    for (const LinkClass k : fp.bottlenecks) bottleneck_phases[static_cast<std::size_t>(k)] += runs[c];
  }

  LinkUsage usage;
  std::vector<LinkId> order;
  for (LinkId l = 0; l < n; ++l)
    if (loads[l].bytes > 0) order.push_back(l);
  // Ranked by load to the picosecond, ties by id: links at the same place of symmetric groups carry
  // equal loads that rounding may tell apart in the last bit, and they rank by id.
  auto rank_key = [&](LinkId l) { return std::llround(loads[l].load_s * 1e12); };
  std::sort(order.begin(), order.end(), [&](LinkId a, LinkId b) {
    const auto ka = rank_key(a), kb = rank_key(b);
    return ka != kb ? ka > kb : a < b;
  });
  order.resize(std::min(order.size(), busiest));
  std::vector<std::int32_t> track_of(n, -1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    track_of[order[i]] = static_cast<std::int32_t>(i);
    usage.tracks.push_back(LinkTrack{order[i], topology.link_name(order[i]), {}});
  }

  std::vector<std::int32_t> active(n, 0);
  std::vector<std::int64_t> opened(n, 0);
  std::vector<std::uint8_t> shared(n, 0);
  for (const auto& [time, is_start, c] : events) {
    for (const LinkId l : prints[c].links) {
      if (is_start) {
        if (active[l]++ == 0) opened[l] = time;
        else shared[l] = 1;
      } else if (--active[l] == 0) {
        loads[l].busy_s += static_cast<double>(time - opened[l]) * 1e-12;
        if (track_of[l] >= 0) {
          auto& busy = usage.tracks[static_cast<std::size_t>(track_of[l])].busy;
          if (!busy.empty() && busy.back().second == opened[l]) busy.back().second = time;
          else busy.emplace_back(opened[l], time);
        }
      }
    }
  }
  for (const LinkId l : order) usage.busiest.push_back(loads[l]);

  for (int c = 0; c < kLinkClassCount; ++c) {
    LinkClassLoad cls;
    cls.link_class = static_cast<LinkClass>(c);
    cls.bottleneck_phases = bottleneck_phases[static_cast<std::size_t>(c)];
    for (const LinkLoad& l : loads) {
      if (l.link_class != cls.link_class) continue;
      ++cls.links;
      cls.shared_links += shared[l.link];
      if (l.bytes <= 0) continue;
      ++cls.links_used;
      cls.bytes += l.bytes;
      cls.max_load_s = std::max(cls.max_load_s, l.load_s);
      cls.max_busy_s = std::max(cls.max_busy_s, l.busy_s);
      cls.mean_busy_s += l.busy_s;
    }
    if (cls.links == 0) continue;
    if (cls.links_used > 0) cls.mean_busy_s /= static_cast<double>(cls.links_used);
    usage.classes.push_back(cls);
  }
  for (LinkId l = 0; l < n; ++l) usage.shared_links += shared[l];
  return usage;
}

}  // namespace parasim::sim
