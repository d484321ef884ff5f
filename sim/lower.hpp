#pragma once
/// Lowering: a model graph under a plan on a cluster becomes the TaskGraph of one training step.
///
/// For every model chunk the lowering builds a forward and a backward program once — compute
/// segments (runs of operators between communication points, one kernel each, timed by the cost
/// model) and the collectives the plan's sharding implies — and then instantiates them for every
/// micro-batch on every device of the chunk's stage, in the order the pipeline schedule gives:
///  - a tensor whose layout differs between producer and consumer is resharded: a partial sum (a split
///    contraction) becomes an all-reduce, or a reduce-scatter when the consumer wants it split; an
///    axis that splits the producer's tensor but not the consumer's an all-gather; an axis that moves
///    to another dim an all-to-all; MoE token routing an all-to-all over the expert axis. Backward
///    applies the same rules to gradients, from the consumer's layout to the producer's;
///  - weight gradients that are partial sums over data axes are reduced in buckets (all-reduce, or
///    reduce-scatter under ZeRO) on the data stream, overlapped with the last micro-batch's backward;
///  - tensors crossing a chunk boundary are sent point to point (with Megatron's scatter/gather: each
///    tensor-parallel rank sends 1/t and the receivers all-gather);
///  - recomputation repeats a layer's forward (full) or its attention core (selective) before its
///    backward; the optimizer step follows the gradient reduction, then ZeRO's parameter all-gather.
#include <cstdint>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/profile.hpp"
#include "sim/task_graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// Streams of every device, in TaskGraph::stream_names order.
enum Stream : std::uint8_t { kComputeStream = 0, kTensorStream = 1, kDataStream = 2, kExpertStream = 3, kPipelineStream = 4 };

struct LowerOptions {
  /// Simulate one data-parallel replica and stand it for all (DESIGN.md: identical replicas may be
  /// simulated once). Used only when every replica is identical — the same device kinds, speeds and
  /// links at the same place of the other mesh axes (sim/replicas.hpp); otherwise every device is
  /// simulated.
  bool replicate_data_parallel = false;
};

struct LoweredStep {
  TaskGraph tasks;
  /// Whether the replica shortcut was used, and which devices have tasks (all when it was not).
  bool replica_shortcut = false;
  std::vector<std::int64_t> simulated_devices;
  double model_flops = 0;     ///< forward + backward FLOPs of the step over all devices, without recomputation
  double hardware_flops = 0;  ///< the FLOPs the devices execute, recomputation included
  std::int64_t samples = 0;   ///< per step (the global batch)
  std::int64_t tokens = 0;    ///< per step (samples × sequence length; samples for non-sequence models)
};

/// Precondition: the plan was made for this graph and a device count equal to the cluster's.
[[nodiscard]] LoweredStep lower(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                                const LowerOptions& options = {});

}  // namespace parasim::sim
