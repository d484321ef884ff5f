#pragma once
/// Lowering: a model graph under a plan on a cluster becomes the TaskGraph of one training step.
///
/// The step's work is described once (sim/work/work.hpp: each chunk's forward and backward program
/// of compute items, collectives and sends, derived from the plan's shardings as
/// sim/work/chunk_program.hpp says). The lowering times each compute item with the cost model for
/// every class of device, then instantiates every program for every micro-batch on every device of
/// the chunk's stage, in an order every stage's schedule follows (sim/lower/unit_order.hpp); weight
/// gradients are reduced in buckets on the data stream, overlapped with the backward; the optimizer
/// step follows the gradient reduction, then ZeRO's parameter all-gather (sim/lower/unit_emitter.hpp).
/// Every compute task keeps its entry in the step's work table, so the graph can be re-costed
/// (sim/recost.hpp) or run for real.
#include <cstdint>
#include <optional>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/profile.hpp"
#include "sim/task_graph.hpp"
#include "sim/work/work.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// The streams of every device of a lowered step, in order (a stream's index is its sim::Stream value).
inline const std::vector<Stream> kTrainingStreams{Stream::Compute, Stream::TensorComm, Stream::DataComm, Stream::ExpertComm, Stream::Pipeline};
/// With an input pipeline, the loader's streams follow (sim/input_pipeline.hpp).
inline const std::vector<Stream> kTrainingStreamsWithInput{Stream::Compute,    Stream::TensorComm, Stream::DataComm,    Stream::ExpertComm,
                                                           Stream::Pipeline,   Stream::Loader,     Stream::HostToDevice};
/// The index of `s` among kTrainingStreams (its value: they are the first streams, in order).
[[nodiscard]] constexpr std::uint8_t stream_index(Stream s) { return static_cast<std::uint8_t>(s); }

struct LowerOptions {
  /// Simulate one data-parallel replica and stand it for all (identical replicas may be
  /// simulated once). Used only when every replica is identical — the same device kinds, speeds and
  /// links at the same place of the other mesh axes (sim/replicas.hpp); otherwise every device is
  /// simulated.
  bool replicate_data_parallel = false;
  /// The input pipeline to simulate (sim/input_pipeline.hpp); none: the step's inputs are on the
  /// devices when it starts.
  std::optional<InputPipeline> input;
};

struct LoweredStep {
  TaskGraph tasks;
  StepWork work;  ///< what the compute tasks do (TaskGraph::work indexes work.computes)
  /// Whether the replica shortcut was used, and which devices have tasks (all when it was not).
  bool replica_shortcut = false;
  std::vector<std::int64_t> simulated_devices;
  double model_flops = 0;     ///< forward + backward FLOPs of the step over all devices, without recomputation
  double hardware_flops = 0;  ///< the FLOPs the devices execute, recomputation included
  std::int64_t samples = 0;   ///< per step (the global batch)
  std::int64_t tokens = 0;    ///< per step (samples × sequence length; samples for non-sequence models)
  /// The input pipeline's costs, when one was simulated.
  std::optional<LoaderCosts> loader;
};

/// Precondition: the plan was made for this graph and a device count equal to the cluster's.
[[nodiscard]] LoweredStep lower(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                                const LowerOptions& options = {});

}  // namespace parasim::sim
