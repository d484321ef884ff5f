#pragma once
/// Work: what one training step does, described once from (graph, plan) and independent of any
/// profile or cluster. Everything that needs to know what a chunk does reads it:
///  - the lowering (sim/lower.hpp) instantiates each chunk program for every micro-batch on every
///    device of the chunk's stage, timing compute items with the cost model;
///  - the task-count estimate (sim/task_estimate.hpp) counts its items;
///  - the search's closed-form estimate (sim/search_estimate.hpp) reads its bytes;
///  - re-costing (sim/recost.hpp) and an executor follow a compute task back to its operators.
///
/// A chunk has a forward and a backward program: ordered items, each a compute item (a run of
/// operator passes between communication points, one kernel each), a collective over typed mesh
/// axes, or a send to another chunk. How the items are derived is in sim/work/chunk_program.hpp.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/graph.hpp"
#include "sim/collectives.hpp"
#include "sim/task_graph.hpp"
#include "sim/work/layout.hpp"
#include "sim/work/op_work.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// Which pass of an operator a compute item runs; a recomputation repeats the forward before the
/// backward.
enum class Pass : std::uint8_t { Forward, Recompute, Backward };

/// One operator's pass within a compute item.
struct OpPass {
  models::OpId op = 0;
  Pass pass = Pass::Forward;
  bool operator==(const OpPass&) const = default;
};

enum class ItemKind : std::uint8_t { Compute, Collective, Send };

/// Weight gradients complete once an item finishes, and the axes they are a partial sum over.
struct GradReady {
  AxisSet axes;
  double bytes = 0;  ///< on each device
  bool operator==(const GradReady&) const = default;
};

struct WorkItem {
  ItemKind kind = ItemKind::Compute;
  /// Depends on the previous chained item of its device and becomes the new head of the chain
  /// (false: ZeRO-3's prefetched gathers and sends, which depend only on `extra_deps`).
  bool chained = true;
  Category category = Category::Forward;
  std::string label;
  WorkId compute = kNoWork;  ///< compute: its entry in StepWork::computes
  CollectiveKind collective = CollectiveKind::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  CommKernel kernel = CommKernel::Nccl;   ///< collective: what runs it (sim/interference.hpp)
  /// Collective: copy kernels per rank of its group the framework launches around it while the
  /// device waits (strategies/implementation.hpp, copies_per_rank).
  double copies_per_rank = 0;
  AxisSet axes;                           ///< collective: the mesh axes its groups vary along
  double bytes = 0;                       ///< collective or send, per the size convention of collectives.hpp
  std::int64_t peer_chunk = -1;           ///< send: the chunk receiving
  std::vector<std::uint32_t> extra_deps;  ///< earlier items of the same program
  std::vector<GradReady> grads;           ///< weight gradients complete once this item finishes
  bool operator==(const WorkItem&) const = default;
};

struct Program {
  std::vector<WorkItem> items;
  bool operator==(const Program&) const = default;
};

struct ChunkWork {
  Program forward, backward;
  [[nodiscard]] const Program& pass(bool forward_pass) const { return forward_pass ? forward : backward; }
  bool operator==(const ChunkWork&) const = default;
};

/// A compute task's work: a run of operator passes, or one stage's optimizer step.
struct ComputeWork {
  std::uint32_t ops_begin = 0, ops_end = 0;  ///< its operator passes in StepWork::ops
  std::int64_t optimizer_stage = -1;         ///< ≥ 0: the optimizer step of this stage's parameters
  bool operator==(const ComputeWork&) const = default;
};

/// A weight held by several stages (a tied embedding): its gradient is summed over them before the
/// optimizer step, between the devices at the same place of every other mesh axis.
struct TiedGradient {
  std::string weight;
  std::vector<std::int64_t> stages;  ///< ascending
  double bytes = 0;                  ///< gradient bytes on each device
  bool operator==(const TiedGradient&) const = default;
};

struct StepWork {
  std::vector<OpWork> op_work;        ///< per graph operator, on one device of its stage
  /// Per graph operator: the producer of its first input (SIZE_MAX: a graph input feeds it).
  std::vector<models::OpId> first_producer;
  std::vector<OpPass> ops;            ///< the operator passes of every compute item, item by item
  std::vector<ComputeWork> computes;  ///< per compute item (WorkItem::compute), then per stage's optimizer step
  std::vector<ChunkWork> chunks;      ///< per model chunk
  AxisSet data_axes;                  ///< the data, expert and context axes larger than 1, over which gradients are reduced
  /// Per stage: the local parameters on each device that a data axis replicates (ZeRO 1–2 shards
  /// their update and gathers them back; a weight an annotated plan splits over the data axis is
  /// updated whole where it lives and gathered by nobody).
  std::vector<double> stage_gathered;
  std::vector<double> chunk_gathered;  ///< per chunk: the same, of the weights its layers use first
  std::vector<std::int64_t> chunk_weight_layers;  ///< per chunk: its layers holding weights
  std::vector<double> stage_updated;  ///< per stage: parameters each device's optimizer updates (a ZeRO shard)
  std::vector<TiedGradient> tied;
  bool operator==(const StepWork&) const = default;

  [[nodiscard]] WorkId optimizer_work(std::int64_t stage) const {
    return static_cast<WorkId>(computes.size() - stage_updated.size() + static_cast<std::size_t>(stage));
  }
};

/// Describes one step of `plan` on `graph`. Precondition: the plan was made for the graph.
[[nodiscard]] StepWork describe_step(const models::Graph& graph, const strategies::Plan& plan);

/// The time category of an activation's collective over `axis` (a reshard where layouts meet, a
/// partial sum completed): expert communication on an expert axis, tensor-parallel (intra-operator)
/// communication otherwise — a data axis included, where an annotated plan splits an operator's
/// model dims over it: such a collective is on the step's critical path like any reshard, not a
/// gradient reduction, and runs on the tensor-parallel stream (unit_emitter.cpp), not queued
/// behind the gradient buckets.
[[nodiscard]] Category category_of_axis(const strategies::DeviceMesh& mesh, int axis);
/// The stream a collective over `axes` runs on: the data stream if any axis is a data axis, else
/// the expert stream if any is an expert axis, else the tensor stream.
[[nodiscard]] Stream stream_of_axes(const strategies::DeviceMesh& mesh, const AxisSet& axes);

/// The gradient buckets of one backward program: which leave after which item (with overlap, a
/// bucket leaves once it holds the plan's bucket bytes) and what is left after the last item, per
/// axis set (zero-byte entries included).
struct GradientBuckets {
  std::vector<std::vector<std::pair<AxisSet, double>>> after;  ///< per item
  std::map<AxisSet, double> rest;
};
[[nodiscard]] GradientBuckets gradient_buckets(const Program& backward, const strategies::Plan& plan);
/// A gradient bucket is all-reduced, or reduce-scattered under ZeRO (its devices keep a shard).
[[nodiscard]] CollectiveKind gradient_bucket_kind(const strategies::Plan& plan);
/// Whether micro-batch `j`'s backward reduces its gradients: the last micro-batch's, or every one
/// under ZeRO-2/3, whose devices keep only their gradient shard (DeepSpeed reduce-scatters each
/// micro-batch's gradients).
[[nodiscard]] bool syncs_gradients(const strategies::Plan& plan, std::int64_t micro_batch);
/// How many micro-batches' backward passes reduce gradients (those syncs_gradients says yes to).
[[nodiscard]] std::uint64_t syncing_micro_batches(const strategies::Plan& plan);

/// The hardware FLOPs of one micro-batch's recomputation (0 without recompute).
[[nodiscard]] double recompute_flops(const models::Graph& graph, const strategies::Plan& plan);

}  // namespace parasim::sim
