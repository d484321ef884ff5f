#include "sim/replicas.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "sim/collectives.hpp"

namespace parasim::sim {
namespace {

/// Message sizes at which two groups' collective times are compared: one where latency dominates,
/// one where bandwidth does (a transformer layer's tensor-parallel all-reduce is tens of MiB).
constexpr double kProbeBytes[] = {4096.0, 64.0 * 1024 * 1024};
constexpr CollectiveKind kProbeKinds[] = {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
                                          CollectiveKind::AllToAll};

bool same_time(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

/// Whether every probe collective takes as long over `a` as over `b` (groups of equal size, member
/// i of one at the place of member i of the other).
bool groups_alike(const Cluster& cluster, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  if (a.size() <= 1) return true;
  for (const CollectiveKind kind : kProbeKinds)
    for (const double bytes : kProbeBytes)
      if (!same_time(collective_time(cluster, kind, a, bytes).time.seconds(), collective_time(cluster, kind, b, bytes).time.seconds()))
        return false;
  return true;
}

bool sends_alike(const Cluster& cluster, std::int64_t a_from, std::int64_t a_to, std::int64_t b_from, std::int64_t b_to) {
  if (a_from == a_to) return true;
  const std::vector<std::int64_t> a{std::min(a_from, a_to), std::max(a_from, a_to)};
  const std::vector<std::int64_t> b{std::min(b_from, b_to), std::max(b_from, b_to)};
  for (const double bytes : kProbeBytes)
    if (!same_time(collective_time(cluster, CollectiveKind::SendRecv, a, bytes).time.seconds(),
                   collective_time(cluster, CollectiveKind::SendRecv, b, bytes).time.seconds()))
      return false;
  return true;
}

}  // namespace

bool data_parallel_replicas_alike(const strategies::Plan& plan, const Cluster& cluster) {
  const auto& mesh = plan.mesh;
  if (plan.dp_axis < 0 || mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size <= 1) return false;
  const auto dp_axis = static_cast<std::size_t>(plan.dp_axis);
  // The other axes (tensor, pipeline, expert…): lowering's collectives and sends run along one axis
  // at a time, or along the data-parallel axis, whose groups span the replicas and are costed whole.
  std::vector<int> other_axes;
  for (std::size_t a = 0; a < mesh.axes.size(); ++a)
    if (a != dp_axis && mesh.axes[a].size > 1) other_axes.push_back(static_cast<int>(a));

  // The device at the place of `d` in replica 0.
  auto image_of = [&mesh, dp_axis](std::int64_t d) {
    auto c = mesh.coords_of(d);
    c[dp_axis] = 0;
    return mesh.device_at(c);
  };
  std::set<std::vector<std::int64_t>> checked;  // groups already compared with their image
  for (std::int64_t d = 0; d < cluster.device_count(); ++d) {
    const auto coords = mesh.coords_of(d);
    if (coords[dp_axis] == 0) continue;
    const std::int64_t r = image_of(d);
    const Device& a = cluster.devices[static_cast<std::size_t>(d)];
    const Device& b = cluster.devices[static_cast<std::size_t>(r)];
    if (a.figures() != b.figures() || a.speed_factor != b.speed_factor) return false;
    for (const int axis : other_axes) {
      std::vector<std::int64_t> group = mesh.group_of(d, std::vector<int>{axis});
      if (!checked.insert(group).second) continue;
      std::vector<std::int64_t> image;
      image.reserve(group.size());
      for (const std::int64_t m : group) image.push_back(image_of(m));
      if (!groups_alike(cluster, group, image)) return false;
    }
    // Pipeline sends (and any other point-to-point traffic) go to the next member along one axis.
    for (const int axis : other_axes) {
      auto next = coords;
      const auto ax = static_cast<std::size_t>(axis);
      next[ax] = (next[ax] + 1) % mesh.axes[ax].size;
      const std::int64_t n = mesh.device_at(next);
      if (!sends_alike(cluster, d, n, r, image_of(n))) return false;
    }
  }
  return true;
}

}  // namespace parasim::sim
