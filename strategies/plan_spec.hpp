#pragma once
/// What a user asks for: the training settings and the parallel plan's knobs, as written in a scenario
/// (no JSON here; scenarios/ decodes into these). strategies/plan.hpp turns them, with a model graph
/// and a device count, into a Plan (mesh, per-operator sharding, stages, schedule).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/dtype.hpp"
#include "strategies/annotation.hpp"
#include "strategies/implementation.hpp"

namespace parasim::strategies {

enum class Optimizer { Adam, AdamW, SGD, SGDMomentum, Adafactor };
enum class Schedule { GPipe, OneFOneB, Interleaved1F1B };
enum class Recompute { None, Selective, Full };
/// How weight gradients are accumulated over micro-batches: inside the weight-gradient GEMM (no extra
/// traffic: Megatron-Core's gradient_accumulation_fusion), by autograd into .grad from the second
/// micro-batch on (PyTorch: read 2 + read 2 + write 2 bytes per parameter), or into an fp32 buffer
/// every micro-batch (Megatron-LM's local DDP main_grad: read 2 + read 4 + write 4). This prices the
/// accumulation's traffic only; the gradient buffer's size and the bytes its reductions move follow
/// TrainingSpec::grad_precision.
enum class GradAccumulation { Fused, Autograd, Fp32Buffer };
/// How context parallelism exchanges keys and values (Megatron-Core --cp-comm-type): a ring of
/// point-to-point K/V blocks overlapped with the attention blocks (Liu et al. 2023, ring attention; the
/// default), one all-gather of K/V before attention (Llama 3's long-context training), or all-to-alls
/// that trade the sequence split for a head split around attention (DeepSpeed-Ulysses).
enum class CpComm { P2P, AllGather, AllToAll };

struct TrainingSpec {
  std::int64_t global_batch = 1;  ///< samples per optimizer step, over all data-parallel replicas
  std::int64_t micro_batch = 1;   ///< samples per micro-batch per replica
  models::DType precision = models::DType::F16;  ///< compute dtype (mixed precision keeps fp32 master weights)
  Optimizer optimizer = Optimizer::Adam;
  /// The fused attention implementation the run uses (a name in the device profile's attention curves:
  /// "cudnn", "flash-attention-2", ...); empty: each device's default, the first it lists.
  std::string attention_kernel;
  /// The dtype weight gradients are accumulated in and reduced over data parallelism. Absent: the
  /// weights' (16-bit in mixed precision). Megatron-LM forces fp32 with bf16 training
  /// (megatron/training/arguments.py: "accumulate and all-reduce gradients in fp32 for bfloat16 data
  /// type"): its gradient buffers then take 4 bytes per parameter and its reduce-scatters twice the bytes.
  std::optional<models::DType> grad_precision;
  bool operator==(const TrainingSpec&) const = default;
};

struct PlanSpec {
  std::int64_t dp = 0;  ///< data-parallel degree; 0 = the device count divided by tp·pp·ep
  std::int64_t tp = 1;  ///< tensor (Megatron) / channel (CNN) model-parallel degree
  std::int64_t pp = 1;  ///< pipeline stages
  std::int64_t ep = 1;  ///< expert-parallel degree (MoE); experts are sharded over a sub-axis of dp
  /// Routing imbalance (MoE with ep > 1): the tokens the busiest expert-parallel rank receives over the
  /// balanced share b·s·k/ep, ≥ 1 (1 = balanced, the default). Every rank waits for the busiest at the
  /// all-to-all that returns its tokens, so the step is timed on it: its expert GEMMs, the expert
  /// activations it keeps and its all-to-all bytes are scaled by this factor. At most min(ep, e/k):
  /// a rank cannot receive more than every token's k copies, nor more than one copy per expert it holds.
  double expert_imbalance = 1.0;
  /// Context-parallel degree (transformers): every operator's sequence split over cp devices, causal
  /// work balanced across them as Megatron-Core does (rank i holds chunks i and 2cp − 1 − i); weight
  /// gradients reduced over dp × cp.
  std::int64_t cp = 1;
  CpComm cp_comm = CpComm::P2P;
  Schedule schedule = Schedule::OneFOneB;
  std::int64_t virtual_stages = 1;  ///< model chunks per device (interleaved 1F1B)
  int zero = 0;                     ///< ZeRO stage 0–3 over the data-parallel axis
  bool fsdp = false;                ///< fully sharded data parallel (parameters, gradients, optimizer: as ZeRO-3)
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;  ///< Megatron sequence parallel (with tp > 1)
  /// Tensor-parallel communication overlapped with the GEMMs (Megatron-Core's --tp-comm-overlap,
  /// Transformer Engine's userbuffers): each sequence-parallel all-gather and reduce-scatter is split
  /// into chunks pipelined with the GEMM that consumes or produces it. Needs sequence parallelism.
  bool tp_comm_overlap = false;
  /// Gradient reduction bucket in MiB; absent: the implementation's default (strategies/implementation.hpp).
  std::optional<double> grad_bucket_mb;
  /// The framework that runs the plan (strategies/implementation.hpp); absent: default_framework.
  std::optional<Framework> implementation;
  bool overlap_grad_reduce = true;  ///< gradient reduction overlapped with backward
  /// ZeRO 1–2: the all-gather of the updated parameters runs under the next step's first forward pass
  /// (Megatron-LM --overlap-param-gather, where each layer waits for its own bucket), instead of at the
  /// step's end. Modelled per chunk: a mean layer's share of the chunk's weights before its first
  /// forward unit, the rest before its next unit (sim/lower/step_end.cpp). Like overlap_grad_reduce, a switch: it changes nothing where there is no such gather
  /// (zero 0 or 3, one data-parallel replica), so a search holds it for every candidate.
  bool overlap_param_gather = false;
  /// Pipeline sends block the sending stage until the transfer completes (Megatron-LM as of SC'21
  /// synchronised after every batch_isend_irecv); false = asynchronous sends overlapped with compute.
  bool blocking_p2p = false;
  GradAccumulation grad_accumulation = GradAccumulation::Autograd;
  /// Mesh axes from outermost to innermost; the innermost axis gets consecutive device ids (so tp
  /// stays inside a node). Default {"pp", "dp", "tp"}; with cp > 1 and no "cp" named, cp goes just
  /// outside tp (Megatron-Core's order tp-cp-ep-dp-pp, innermost first).
  std::vector<std::string> mesh_order{"pp", "dp", "tp"};
  /// Optional explicit pipeline cut: the number of graph layers in each stage (sums to the layer count).
  std::vector<std::int64_t> stage_layers;
  /// A mesh the user names (GSPMD / JAX style), outermost first, in place of the tp, dp, cp and ep
  /// knobs: each stage's devices are this mesh (pp stages of it in all), and `shardings` say how it
  /// splits tensors; propagation (strategies/propagation.hpp) gives every other operator its sharding.
  /// Empty: the knobs build the mesh and Megatron's shardings.
  std::vector<MeshAxisSpec> mesh;
  std::vector<ShardingAnnotation> shardings;
  /// With `mesh`: every operator's sharding is found by the integer program of sim/auto_sharding.hpp
  /// (Alpa's intra-operator pass) and written into `shardings` as operator annotations.
  bool auto_sharding = false;
  double auto_sharding_time_limit_s = 10;
  /// Once solved: how ("optimal", or "feasible (time limit), gap 1.2%"), for the plan's description.
  std::string auto_sharding_outcome;
  /// Once solved: what it chose, one line per group of alike operators (parasim model --shardings).
  std::string auto_sharding_report;
  bool operator==(const PlanSpec&) const = default;
};

[[nodiscard]] std::string_view to_string(Optimizer o);
[[nodiscard]] std::string_view to_string(Schedule s);
[[nodiscard]] std::string_view to_string(Recompute r);
[[nodiscard]] std::string_view to_string(GradAccumulation g);
[[nodiscard]] std::string_view to_string(CpComm c);  ///< "p2p", "all_gather", "a2a" (Megatron-Core's names)
[[nodiscard]] const std::vector<std::string>& cp_comm_names();
[[nodiscard]] std::optional<CpComm> cp_comm_from_string(std::string_view s);
/// Names as written in scenarios: "adam", "adamw", "sgd", "sgd-momentum", "adafactor";
/// "gpipe", "1f1b", "interleaved-1f1b"; "none", "selective", "full".
[[nodiscard]] const std::vector<std::string>& optimizer_names();
[[nodiscard]] const std::vector<std::string>& schedule_names();
[[nodiscard]] const std::vector<std::string>& recompute_names();
/// "fused", "autograd", "fp32-buffer".
[[nodiscard]] const std::vector<std::string>& grad_accumulation_names();
[[nodiscard]] std::optional<Optimizer> optimizer_from_string(std::string_view s);
[[nodiscard]] std::optional<Schedule> schedule_from_string(std::string_view s);
[[nodiscard]] std::optional<Recompute> recompute_from_string(std::string_view s);
[[nodiscard]] std::optional<GradAccumulation> grad_accumulation_from_string(std::string_view s);

/// A problem with a plan for a given model and device count: which field of the scenario
/// (a JSON pointer relative to the scenario root, e.g. "/plan/tp") and what is wrong.
struct PlanProblem {
  std::string pointer;
  std::string message;
  /// The file the pointer is in, where it is not the scenario (a graph file's annotations).
  std::string file;
};

}  // namespace parasim::strategies
