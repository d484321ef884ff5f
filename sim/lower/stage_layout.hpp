#pragma once
/// Where a lowered step's tasks go: the simulated devices of each pipeline stage, the collective
/// groups a mesh-axis set forms among them (interned in the task graph as first used), and the
/// blocks the tasks are laid out by (see block_layout below).
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/task_graph.hpp"
#include "sim/work/layout.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// A collective's group: all its members price it, the simulated ones wait for it.
struct Group {
  std::uint32_t id = 0;                                  ///< the whole group (cost)
  std::uint32_t occupies = CollectiveSpec::kWholeGroup;  ///< the simulated members, when fewer
  std::vector<std::int64_t> members;                     ///< the simulated members
};

/// The devices of one stage that differ only in the mesh axes other than pipeline, data and expert
/// (tensor-parallel groups), block by block.
struct StageBlocks {
  std::size_t count = 0;
  std::vector<std::size_t> of;        ///< per position in the stage: its block
  std::vector<std::size_t> begin{0};  ///< CSR over blocks into `devices`
  std::vector<std::int64_t> devices;  ///< simulated members, block by block
};

class StageLayout {
 public:
  /// `one_replica`: simulate the devices of data-parallel replica 0 only (the replica shortcut).
  StageLayout(const strategies::Plan& plan, bool one_replica, TaskGraphBuilder& builder);

  [[nodiscard]] bool simulated(std::int64_t d) const {
    return !one_replica_ || coords_[static_cast<std::size_t>(d)][static_cast<std::size_t>(plan_.dp_axis)] == 0;
  }
  [[nodiscard]] std::int64_t stage_of(std::int64_t d) const {
    return plan_.pp_axis >= 0 ? coords_[static_cast<std::size_t>(d)][static_cast<std::size_t>(plan_.pp_axis)] : 0;
  }
  /// The device at `d`'s place of every other axis on stage `stage`.
  [[nodiscard]] std::int64_t peer_device(std::int64_t d, std::int64_t stage) const;
  [[nodiscard]] const std::vector<std::int64_t>& stage_devices(std::int64_t stage) const {
    return stage_devices_[static_cast<std::size_t>(stage)];
  }
  [[nodiscard]] std::size_t pos_in_stage(std::int64_t d) const { return pos_in_stage_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] const std::vector<std::int64_t>& simulated_devices() const { return simulated_devices_; }

  /// The groups a collective over `axes` forms on `stage`, interned in the task graph on first use.
  const std::vector<Group>& groups(const AxisSet& axes, std::int64_t stage);
  /// Whether a collective over `axes` stays inside one block.
  [[nodiscard]] bool block_local(const AxisSet& axes) const;
  const StageBlocks& blocks(std::int64_t stage);

 private:
  [[nodiscard]] Group make_group(std::vector<std::int64_t> all);

  const strategies::Plan& plan_;
  bool one_replica_;
  TaskGraphBuilder& builder_;
  std::vector<std::vector<std::int64_t>> coords_;
  std::vector<std::vector<std::int64_t>> stage_devices_;
  std::vector<std::size_t> pos_in_stage_;
  std::vector<std::int64_t> simulated_devices_;
  AxisSet block_axes_;
  std::map<std::pair<AxisSet, std::int64_t>, std::vector<Group>> groups_;
  std::vector<std::optional<StageBlocks>> blocks_;
};

}  // namespace parasim::sim
