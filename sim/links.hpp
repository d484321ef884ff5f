#pragma once
/// Link-level accounting of a simulated step, the same for both backends: how many bytes crossed
/// each link of the topology (sim/topology.hpp), how long it was busy, which links were the most
/// loaded, and whether collectives in flight at the same time shared a link.
///
/// A collective's bytes on a link are those of its flows (sim/collectives.hpp, collective_flows)
/// routed over the topology, summed over its phases, once per time the step runs it. A link is
/// busy while at least one collective whose flows cross it is in flight (from the task's start to
/// its finish, whichever backend timed it); its load is the time it needs at full rate for what
/// crossed it (wire bytes, i.e. bytes / the flows' efficiency, over its bandwidth). Busy time can
/// exceed load (a collective is slowed elsewhere, or waits out its latency) but never the step.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/task_graph.hpp"
#include "sim/topology.hpp"

namespace parasim::sim {

/// One link's figures for the step.
struct LinkLoad {
  LinkId link = 0;
  LinkClass link_class = LinkClass::DevicePort;
  double bandwidth_bytes_per_s = 0;  ///< raw
  double bytes = 0;                  ///< payload that crossed it
  double load_s = 0;                 ///< wire bytes / bandwidth
  double busy_s = 0;                 ///< time a collective crossing it was in flight
  bool operator==(const LinkLoad&) const = default;
};

/// The figures of every link of one class, together.
struct LinkClassLoad {
  LinkClass link_class = LinkClass::DevicePort;
  std::int64_t links = 0;       ///< links of the class in the topology (each direction counts)
  std::int64_t links_used = 0;  ///< of which some traffic crossed
  double bytes = 0;             ///< payload over all its links
  double max_load_s = 0;        ///< the most loaded link's load
  double max_busy_s = 0;        ///< the busiest link's busy time
  double mean_busy_s = 0;       ///< mean busy time over the links used
  /// Collective phases (one per run of a collective) whose most loaded link — the one that sets
  /// their pace on an idle network — is of this class.
  std::int64_t bottleneck_phases = 0;
  std::int64_t shared_links = 0;  ///< of its links, those that carried collectives in flight at the same time
  bool operator==(const LinkClassLoad&) const = default;
};

/// When one link was busy: merged intervals, picoseconds from the step's start.
struct LinkTrack {
  LinkId link = 0;
  std::string name;
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;  ///< [start, finish), ascending, disjoint
  bool operator==(const LinkTrack&) const = default;
};

struct LinkUsage {
  std::vector<LinkClassLoad> classes;  ///< the classes the topology has, in LinkClass order
  std::vector<LinkLoad> busiest;       ///< the most loaded links (by load, then busy time, then id), most loaded first
  std::vector<LinkTrack> tracks;       ///< the busy intervals of the `busiest` links, in the same order
  /// Links on which collectives overlapped in time. The analytical backend gives each of them the
  /// whole link (it does not model contention); the simgrid backend shares it.
  std::int64_t shared_links = 0;
  bool operator==(const LinkUsage&) const = default;
};

/// The link-level figures of a step: `start_ps[t]` is when task t of `graph` started, `finish_ps[t]`
/// when it finished — or, with `finish_ps` empty, a collective task finished `collective_ps[i]`
/// after its start, i its collective (the analytical backend). `flows[i]` are the flows of
/// TaskGraph::collectives[i]. `busiest`: how many links to list (and keep tracks of).
[[nodiscard]] LinkUsage link_usage(const TaskGraph& graph, std::span<const std::int64_t> start_ps, std::span<const std::int64_t> finish_ps,
                                   std::span<const Picoseconds> collective_ps, std::span<const CollectiveFlows> flows,
                                   const Topology& topology, std::size_t busiest = 10);

}  // namespace parasim::sim
