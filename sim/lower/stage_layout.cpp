#include "sim/lower/stage_layout.hpp"

#include <algorithm>
#include <set>

namespace parasim::sim {

StageLayout::StageLayout(const strategies::Plan& plan, bool one_replica, TaskGraphBuilder& builder)
    : plan_(plan), one_replica_(one_replica), builder_(builder) {
  const auto& mesh = plan.mesh;
  const std::int64_t devices = mesh.device_count();
  coords_.resize(static_cast<std::size_t>(devices));
  for (std::int64_t d = 0; d < devices; ++d) coords_[static_cast<std::size_t>(d)] = mesh.coords_of(d);
  stage_devices_.resize(static_cast<std::size_t>(plan.pp));
  pos_in_stage_.resize(static_cast<std::size_t>(devices));
  for (std::int64_t d = 0; d < devices; ++d) {
    if (!simulated(d)) continue;
    simulated_devices_.push_back(d);
    auto& in_stage = stage_devices_[static_cast<std::size_t>(stage_of(d))];
    pos_in_stage_[static_cast<std::size_t>(d)] = in_stage.size();
    in_stage.push_back(d);
  }
  for (int a = 0; a < static_cast<int>(mesh.axes.size()); ++a)
    if (a != plan.pp_axis && a != plan.dp_axis && a != plan.ep_axis) block_axes_.push_back(a);
  blocks_.resize(static_cast<std::size_t>(plan.pp));
}

std::int64_t StageLayout::peer_device(std::int64_t d, std::int64_t stage) const {
  auto c = coords_[static_cast<std::size_t>(d)];
  if (plan_.pp_axis >= 0) c[static_cast<std::size_t>(plan_.pp_axis)] = stage;
  return plan_.mesh.device_at(c);
}

Group StageLayout::make_group(std::vector<std::int64_t> all) {
  Group grp;
  grp.id = builder_.group(all);
  for (std::int64_t x : all)
    if (simulated(x)) grp.members.push_back(x);
  if (grp.members.size() != all.size()) grp.occupies = builder_.group(grp.members);
  return grp;
}

const std::vector<Group>& StageLayout::groups(const AxisSet& axes, std::int64_t stage) {
  auto key = std::make_pair(axes, stage);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  std::vector<Group> gs;
  std::set<std::int64_t> seen;
  for (std::int64_t d : stage_devices(stage)) {
    if (seen.count(d)) continue;
    auto all = plan_.mesh.group_of(d, axes);
    for (auto x : all) seen.insert(x);
    gs.push_back(make_group(std::move(all)));
  }
  return groups_.emplace(key, std::move(gs)).first->second;
}

bool StageLayout::block_local(const AxisSet& axes) const {
  return std::includes(block_axes_.begin(), block_axes_.end(), axes.begin(), axes.end());
}

const StageBlocks& StageLayout::blocks(std::int64_t stage) {
  auto& cached = blocks_[static_cast<std::size_t>(stage)];
  if (cached) return *cached;
  // Not interned as groups of the task graph: blocks only order the tasks.
  StageBlocks sb;
  const auto& in_stage = stage_devices(stage);
  constexpr std::size_t kUnassigned = SIZE_MAX;
  sb.of.assign(in_stage.size(), kUnassigned);
  for (std::int64_t first : in_stage) {
    if (sb.of[pos_in_stage(first)] != kUnassigned) continue;
    for (std::int64_t d : plan_.mesh.group_of(first, block_axes_)) {
      if (!simulated(d)) continue;
      sb.of[pos_in_stage(d)] = sb.count;
      sb.devices.push_back(d);
    }
    sb.begin.push_back(sb.devices.size());
    ++sb.count;
  }
  return *(cached = std::move(sb));
}

}  // namespace parasim::sim
