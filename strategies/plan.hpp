#pragma once
/// A Plan: how a model graph runs on a device mesh. Every parallel plan — data, tensor (Megatron),
/// sequence, channel-split CNN model parallel, expert, pipeline, ZeRO/FSDP — is expressed in one
/// vocabulary: a mesh with named axes, for every operator which mesh axes split which of its dims
/// (GSPMD-style sharding; the layouts of its tensors follow), the pipeline stage of every layer, and
/// the schedule. The lowering in sim/ derives every collective from these shardings; there is no
/// separate code path per kind of parallelism.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/graph.hpp"
#include "strategies/implementation.hpp"
#include "strategies/mesh.hpp"
#include "strategies/plan_spec.hpp"

namespace parasim::strategies {

/// One dim of an operator split over mesh axes (several axes split it in order, outermost first).
struct DimSharding {
  std::string dim;
  std::vector<int> axes;  ///< indices into DeviceMesh::axes
  bool operator==(const DimSharding&) const = default;
};

/// The sharding of one operator: the dims that are split (every other dim is replicated).
struct OpSharding {
  std::vector<DimSharding> dims;
  bool operator==(const OpSharding&) const = default;
  /// Axes splitting `dim` (empty when replicated).
  [[nodiscard]] const std::vector<int>& axes_of(std::string_view dim) const;
};

struct Plan {
  std::string description;  ///< e.g. "tp 8 × pp 16 × dp 8, 1f1b, recompute full"
  DeviceMesh mesh;
  int dp_axis = -1, tp_axis = -1, pp_axis = -1, ep_axis = -1, cp_axis = -1;  ///< -1 when the axis is absent
  std::vector<OpSharding> sharding;      ///< per graph operator id
  /// Per graph layer: the model chunk it belongs to. Chunk c runs on pipeline stage c mod pp
  /// (interleaved schedules give each stage virtual_stages chunks: c, c+pp, c+2pp, ...).
  std::vector<std::int32_t> chunk_of_layer;
  std::int64_t pp = 1;
  std::int64_t virtual_stages = 1;
  Schedule schedule = Schedule::OneFOneB;
  std::int64_t global_batch = 1;
  std::int64_t micro_batch = 1;    ///< samples per micro-batch per data-parallel replica
  std::int64_t micro_batches = 1;  ///< per replica per step (gradient accumulation steps)
  int zero = 0;                    ///< 0–3; FSDP is stored as 3
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;  ///< see PlanSpec::tp_comm_overlap
  CpComm cp_comm = CpComm::P2P;  ///< see PlanSpec::cp_comm (with cp > 1)
  double expert_imbalance = 1.0;  ///< see PlanSpec::expert_imbalance
  /// The framework running the plan and what it decides about the plan's communication.
  Implementation implementation;
  double grad_bucket_bytes = 25.0 * 1024 * 1024;  ///< implementation.bucket_bytes
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = false;  ///< see PlanSpec::overlap_param_gather
  bool blocking_p2p = false;
  GradAccumulation grad_accumulation = GradAccumulation::Autograd;
  models::DType precision = models::DType::F16;
  Optimizer optimizer = Optimizer::Adam;
  std::string attention_kernel;  ///< see TrainingSpec::attention_kernel
  /// The dtype of weight gradients: their buffers and their data-parallel reductions (see
  /// TrainingSpec::grad_precision; resolved: 16-bit in mixed precision unless fp32 is asked for).
  models::DType grad_dtype = models::DType::F16;
  /// The shardings come from a user's mesh and annotations (PlanSpec::mesh), not from the knobs: the
  /// memory model then reads every layer's activations off the graph, not Megatron's formula.
  bool annotated = false;

  bool operator==(const Plan&) const = default;

  [[nodiscard]] std::int64_t dp() const;  ///< data-parallel degree (dp axis × ep axis)
  [[nodiscard]] std::int64_t tp() const;
  [[nodiscard]] std::int64_t ep() const;
  [[nodiscard]] std::int64_t cp() const;
  [[nodiscard]] std::int64_t chunks() const { return pp * virtual_stages; }
  [[nodiscard]] std::int64_t stage_of_chunk(std::int64_t chunk) const { return chunk % pp; }
};

/// The data-parallel degree a spec implies on `devices` devices (spec.dp, or devices / (tp·pp·cp) when 0).
/// A plan's mesh in words, "tp 8 × cp 2 × pp 4 × dp 16" (the cp axis only when cp > 1, with its
/// communication in parentheses when `cp_comm` is set), as describe_plan and the search's shape list say it.
[[nodiscard]] std::string describe_mesh(const PlanSpec& spec, std::int64_t dp, bool cp_comm);

/// A plan in one line, as make_plan's Plan::description and the search's candidates say it:
/// "tp 8 × pp 12 × dp 8, 1f1b, micro-batch 1 × 192, zero-1, recompute full, sequence parallel".
[[nodiscard]] std::string describe_plan(const PlanSpec& spec, const TrainingSpec& training, std::int64_t dp, std::int64_t micro_batches);

[[nodiscard]] std::int64_t resolve_dp(const PlanSpec& spec, std::int64_t devices);

/// The first reason `spec` cannot run `graph` on `devices` devices, located at the scenario field it
/// concerns (pointers like "/plan/tp", "/training/global_batch"), or nothing. Checks: degrees ≥ 1 whose
/// product is the device count; tp divides attention heads, key/value heads and the MLP width (or CNN
/// channels); pp ≤ layers, virtual stages divide layers per stage; the global batch divides into
/// micro-batches over dp; schedule/virtual-stage consistency; ZeRO stage 0–3; ep divides experts and dp;
/// sequence parallel needs tp > 1 and a transformer; mesh_order names each axis once.
/// `graph` must be built with batch = micro_batch × dp.
[[nodiscard]] std::optional<PlanProblem> check_plan(const models::Graph& graph, const TrainingSpec& training,
                                                    const PlanSpec& spec, std::int64_t devices);

/// Builds the Plan. Precondition: check_plan found nothing.
[[nodiscard]] Plan make_plan(const models::Graph& graph, const TrainingSpec& training, const PlanSpec& spec, std::int64_t devices);

}  // namespace parasim::strategies
