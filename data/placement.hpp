#pragma once
/// Which samples of a training step each device needs, and what loading them costs under each
/// placement of the loader (issue 18; the seed text's distributed data loader, its Figure 2): the
/// arithmetic the simulated loader and the real one (data/README.md) share, so that both move the
/// same samples and the same bytes.
///
/// Samples are numbered within one step's global batch, 0 … global_batch − 1. A data-parallel
/// replica r of D takes, from each group of micro_batch × D consecutive samples (one micro-batch of
/// every replica), the micro_batch samples starting at r × micro_batch: Megatron-LM's
/// MegatronPretrainingSampler (megatron/legacy/data/data_samplers.py, get_start_end_idx), so a
/// replica's micro-batches are consecutive runs and no sample goes to two replicas.
///
/// The placements:
///  - naive (the seed's baseline): one loader thread on the first host reads and decodes every
///    sample of the step and sends all of them to every device, which keeps its own share;
///  - per_device: every device loads its replica's samples itself, whether or not its pipeline
///    stage or tensor-parallel rank uses them (a loader per rank that knows only data parallelism);
///  - sharded (the seed's loader): what the plan needs, once. A host reads a sample once if any of
///    its devices needs it; the devices of one tensor-parallel group share one copy, made to the
///    group's first device and broadcast inside the group over the device links (Megatron-LM's
///    get_batch: tensor-parallel rank 0 reads, tensor_parallel.broadcast_data sends it on); only
///    the first pipeline stage needs the inputs and only the last the labels; under context
///    parallelism each device needs 1/cp of each sample's sequence (Megatron-Core gives rank i the
///    chunks i and 2cp − 1 − i of 2cp).
#include <cstdint>
#include <string_view>
#include <vector>

#include "strategies/plan.hpp"

namespace parasim::data {

enum class Placement { Naive, PerDevice, Sharded };
[[nodiscard]] std::string_view to_string(Placement p);

/// One sample's bytes: as stored (read from storage), and decoded (the tensors a device receives),
/// split into inputs and labels.
struct SampleBytes {
  double stored = 0;
  double inputs = 0;
  double labels = 0;
};

/// What one device receives in a step.
struct DeviceFeed {
  std::vector<std::int64_t> samples;  ///< its replica's samples, in the order its micro-batches take them
  bool inputs = false;                ///< it needs the samples' inputs (the first pipeline stage)
  bool labels = false;                ///< it needs their labels (the last stage)
  double sequence_share = 1;          ///< of each sample's sequence it receives (1/cp under sharded)
  /// Bytes copied to it from its host's memory in a step (over PCIe on a GPU node), and received
  /// from another device of its tensor-parallel group.
  double host_bytes = 0;
  double peer_bytes = 0;
};

/// A step's loading under one placement.
struct LoadPlan {
  Placement placement = Placement::Sharded;
  std::vector<DeviceFeed> devices;                   ///< per device of the plan's mesh
  std::vector<std::int64_t> samples_read_per_host;   ///< samples each host reads and decodes
  double read_bytes = 0;          ///< from storage, all hosts
  double host_to_device_bytes = 0;  ///< every device's host_bytes
  double device_to_device_bytes = 0;  ///< every device's peer_bytes
  /// Bytes sent from the first host to devices of other hosts (naive only: its one loader feeds all).
  double network_bytes = 0;
};

/// The load plan of one step of `plan` (global_batch, micro_batch and the mesh from it) on hosts
/// of `devices_per_host` devices (device d on host d / devices_per_host), each sample `bytes`.
/// Preconditions: a plan made by strategies::make_plan; devices_per_host ≥ 1.
[[nodiscard]] LoadPlan plan_loading(const strategies::Plan& plan, std::int64_t devices_per_host, const SampleBytes& bytes, Placement placement);

/// The samples each host reads and decodes in a step of `plan` under `placement` (LoadPlan's
/// samples_read_per_host), without the per-device feeds: for estimates over many plans.
[[nodiscard]] std::vector<std::int64_t> samples_read_per_host(const strategies::Plan& plan, std::int64_t devices_per_host, Placement placement);

/// The samples of the step data-parallel replica `replica` of `replicas` takes, micro-batch by
/// micro-batch (MegatronPretrainingSampler's order).
[[nodiscard]] std::vector<std::int64_t> replica_samples(std::int64_t global_batch, std::int64_t micro_batch, std::int64_t replicas,
                                                       std::int64_t replica);

}  // namespace parasim::data
