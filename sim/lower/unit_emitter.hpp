#pragma once
/// Makes the tasks of a lowered step: each unit (one pass of one micro-batch through one chunk)
/// instantiates its chunk program on every simulated device of the chunk's stage, in the order
/// sim/lower/unit_order.hpp gives; gradient buckets follow the backward items that fill them; the
/// step ends with the tied-weight reductions, the optimizer step and ZeRO's parameter all-gather.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "sim/input_pipeline.hpp"
#include "sim/lower/stage_layout.hpp"
#include "sim/task_graph.hpp"
#include "sim/work/work.hpp"
#include "sim/work/work_cost.hpp"

namespace parasim::sim {

class UnitEmitter {
 public:
  /// `loader`: the input pipeline's costs (nullptr: none), its queue holding `prefetch` micro-batches.
  UnitEmitter(const StepWork& work, const strategies::Plan& plan, const WorkDurations& durations, StageLayout& layout,
              TaskGraphBuilder& builder, const LoaderCosts* loader = nullptr, std::int64_t prefetch = 0);

  /// The tasks of one unit: pass `forward` of micro-batch `j` through chunk `c`.
  void emit_unit(bool forward, std::int64_t j, std::int64_t c);
  /// The tasks after the last unit: tied-weight gradient reductions, the optimizer step on every
  /// simulated device, then (ZeRO 1–2) the all-gather of the updated parameter shards.
  void emit_step_end();

 private:
  /// Per program item, what repeats for every micro-batch: its groups and their interned
  /// collectives (ordered by the block they lie in: CSR over the stage's blocks), and a send's
  /// collective per position in the stage. Filled on first use (an item always runs on one stage).
  struct ItemGroups {
    const std::vector<Group>* groups = nullptr;
    std::vector<std::uint32_t> collective_ids;
    std::vector<std::uint32_t> group_order;
    std::vector<std::size_t> group_block_begin;
    std::vector<std::uint32_t> send_collective_ids;
  };
  /// What one unit being made needs.
  struct Unit {
    const Program* program = nullptr;
    std::vector<ItemGroups>* cache = nullptr;
    const std::vector<std::uint32_t>* labels = nullptr;
    std::int64_t stage = 0;
    std::size_t stage_size = 0;
    std::uint32_t key = 0;
    std::int32_t micro_batch = 0;
    bool forward = true;
    std::int64_t chunk = 0;
    std::size_t takes_recv = SIZE_MAX;  ///< the item that takes the unit's incoming sends: its first chained one
  };

  [[nodiscard]] bool block_local(const WorkItem& it) const { return it.kind != ItemKind::Collective || layout_.block_local(it.axes); }
  void prepare_groups(const Unit& u, std::size_t i);
  void member_deps(const Unit& u, std::int64_t d, std::size_t i, bool first);
  void emit_item(const Unit& u, std::size_t i, std::span<const std::int64_t> devs, std::span<const std::uint32_t> gis);
  void emit_compute(const Unit& u, std::size_t i, std::span<const std::int64_t> devs);
  void emit_collective(const Unit& u, std::size_t i, std::span<const std::uint32_t> gis);
  void emit_send(const Unit& u, std::size_t i, std::span<const std::int64_t> devs);
  void emit_items_block_by_block(const Unit& u, const std::vector<std::vector<std::pair<AxisSet, double>>>& buckets_after);
  /// A gradient bucket over `axes` after item `after_item` of the unit (SIZE_MAX: after its last task).
  void emit_bucket(const Unit& u, const AxisSet& axes, double bytes, std::size_t after_item);
  /// The input of micro-batch `j` for the devices of `stage` (sim/input_pipeline.hpp): its copies
  /// and broadcasts, which the forward of unit `key` waits for, and the load that refills the queue.
  void emit_inputs(std::int64_t stage, std::int64_t j, std::uint32_t key);
  void emit_tied_gradients();
  std::vector<TaskId> emit_optimizer_steps(const std::vector<std::uint32_t>& labels);
  void emit_parameter_gathers(const std::vector<TaskId>& optimizer_task);
  /// ZeRO 1–2 with overlap_param_gather: chunk `c`'s share of the previous step's parameter
  /// all-gather, issued as the step starts, before the chunk's first forward unit.
  void emit_parameter_gathers_ahead(std::int64_t c);
  [[nodiscard]] bool gathers_parameters() const {
    return plan_.zero >= 1 && plan_.zero < 3 && !work_.data_axes.empty();
  }

  const LoaderCosts* loader_;
  std::int64_t prefetch_;
  /// Per device: its load task of each micro-batch of this step (those made in the step before: none).
  std::vector<std::vector<TaskId>> load_tasks_;
  const StepWork& work_;
  const strategies::Plan& plan_;
  const WorkDurations& durations_;
  StageLayout& layout_;
  TaskGraphBuilder& b_;
  std::int64_t chunks_;
  /// Per program (2·chunk + 0 forward, 1 backward): its items' interned labels and group caches.
  std::vector<std::vector<std::uint32_t>> labels_;
  std::vector<std::vector<ItemGroups>> item_groups_;

  // Per device: the sends addressed to it that a unit not yet made will receive (receiving unit's
  // key, send task); the receiving unit's first chained item depends on them.
  std::vector<std::vector<std::pair<std::uint32_t, TaskId>>> pending_recv_;
  // Per device: the last task made on it, and its gradient reductions (the optimizer waits for them).
  std::vector<TaskId> last_task_;
  std::vector<std::vector<TaskId>> grad_tasks_;
  std::vector<TaskId> prev_;        ///< per device: the head of the current unit's chain
  std::vector<TaskId> last_compute_;  ///< per device: its last compute task
  std::vector<TaskId> item_tasks_;  ///< current unit: [item · stage size + position in stage]
  std::vector<TaskId> deps_;        ///< scratch
  std::vector<std::map<AxisSet, double>> held_buckets_;  ///< per stage: gradients kept until its last backward
};

}  // namespace parasim::sim
