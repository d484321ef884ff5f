#pragma once
/// The memory model: what one device holds at its peak during a step, by kind, for every pipeline
/// stage (the devices of one stage hold the same: tensor-parallel shards and data-parallel replicas
/// are symmetric). Capacities live in sim/; the caller compares.
#include <cstdint>
#include <vector>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

/// The weights ZeRO-3 holds gathered at once on one device of `plan`, in bytes: the largest layer's
/// gather units (strategies/implementation.hpp) and the prefetch beyond them — FSDP2 two layers,
/// DeepSpeed a layer and the next unit (or up to stage3_prefetch_bucket_size elements), a
/// synchronous implementation one layer — as the lowering issues them (sim/work/weight_gathers.hpp).
/// Weights under the persistence threshold stay whole and are not counted here. 0 below ZeRO-3.
[[nodiscard]] double zero3_gathered_bytes(const models::Graph& graph, const Plan& plan);

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;  ///< gradient buckets, ZeRO-3 prefetch, tensor-parallel gather buffers
  [[nodiscard]] double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes;
  }
  bool operator==(const MemoryBreakdown&) const = default;
};

struct StageMemory {
  std::int64_t stage = 0;
  std::int64_t in_flight = 0;  ///< peak (micro-batch, chunk) forward passes held at once
  double parameters = 0;       ///< parameters stored on one device of this stage, before ZeRO sharding
  MemoryBreakdown memory;
  bool operator==(const StageMemory&) const = default;
};

/// Bytes per parameter of weights, gradients and optimizer state before ZeRO sharding. Mixed
/// precision Adam: 2 + 2 + 12 (fp32 master weights, momentum, variance) = 16 (Rajbhandari et al.
/// 2020, §3.1); fp32 Adam 4 + 4 + 8; SGD with momentum keeps one fp32 state (plus the fp32 master
/// in mixed precision); Adafactor's factored second moment is negligible, its master weights are not.
struct BytesPerParameter {
  double weights = 0, gradients = 0, optimizer = 0;
};
[[nodiscard]] BytesPerParameter bytes_per_parameter(models::DType precision, Optimizer optimizer);
/// The same for a plan: its precision and optimizer, with gradients in the plan's gradient dtype.
[[nodiscard]] BytesPerParameter bytes_per_parameter(const Plan& plan);

/// Activation bytes of one transformer layer for one micro-batch (Korthikanti et al. 2022, Table 2):
///   no parallelism              s·b·h·(34 + 5·a·s/h)
///   tensor parallel (t)         s·b·h·(10 + 24/t + 5·a·s/(h·t))
///   tensor + sequence parallel  s·b·h/t·(34 + 5·a·s/h)
///   + selective recompute       drops the 5·a·s/h term (attention core recomputed)
///   full recompute              2·s·b·h (the layer input only; /t with sequence parallel)
/// s sequence, b micro-batch, h hidden, a heads, t tensor-parallel size.
[[nodiscard]] double korthikanti_layer_activation_bytes(std::int64_t s, std::int64_t b, std::int64_t h, std::int64_t a, std::int64_t t,
                                                        bool sequence_parallel, Recompute recompute);

/// Activation bytes one transformer block keeps for backward, for one micro-batch of b sequences: the
/// derivation of Korthikanti et al. 2022 (§4.1) carried out term by term for any block shape, per
/// token, with 16-bit activations and 1-byte dropout masks (h hidden, a heads, g key/value heads, d head
/// dim, f MLP width, k experts per token):
///   replicated over tp unless sequence parallel: the two norm inputs 4h, the QKV and MLP inputs 2h + 2h,
///     the two dropout masks 2h when the model has dropout;
///   split over tp: Q 2ad, K and V 4gd, the attention output 2ad; eager attention the softmax output,
///     its dropout mask and the dropped-out probabilities 5as (selective recompute drops them), fused
///     attention the fp32 log-sum-exp 4a; the MLP's internals: GELU and squared ReLU 4f (the activation
///     input and the second GEMM's input), SwiGLU 6f (gate, up, their product); an MoE layer keeps, per
///     routed copy, the expert input and output 4h and the internals.
/// For GPT (MHA, d = h/a, GELU with f = 4h, dropout, eager) this is Korthikanti's 34sbh + 5as²b and its
/// tensor-parallel split 10 + 24/t. Full recompute keeps the block input, 2sbh (/t with sequence
/// parallel). In fp8 training (Transformer Engine) each linear layer saves its input in fp8, 1 byte:
/// the QKV and MLP inputs take h each instead of 2h, the second MLP GEMM's input f instead of 2f, and
/// the output projection keeps an fp8 copy (ad) beside the bf16 output the attention kernel saves.
/// With context parallelism over cp devices each keeps the terms of its s/cp tokens; the all_gather
/// exchange also keeps the gathered keys and values of the other ranks, 4gd per token of theirs.
///
/// The same derivation for the blocks of MoE models as trained now and for latent attention, u the
/// value head dim (d elsewhere), ρ the rotary part of d:
///   value heads of another dim: V 2gu and the attention output 2au in place of 2gd and 2ad, the
///     log-sum-exp 4a as before;
///   q/k norms (Qwen3): their inputs, the projections' outputs, 2ad + 2gd more;
///   multi-head latent attention (DeepSeek-V2 §2.1): K and V come from the latent, every head's no-rope
///     key and value 2a(d − ρ + u) in place of 4gd; the latents run on every tensor-parallel rank and
///     are kept whole there (never split, even with sequence parallel): the key/value down-projection's
///     output (latent and shared rotary key) 2(l + ρ), which its norm and the attention both read, the
///     up-projection's input 2l, and with a query latent its norm's input 2m and q_b_proj's input 2m;
///   an MoE block (`block` is one per TransformerShape::moe_block): per routed copy of a token (k of
///     them, times expert_imbalance on the busiest expert-parallel rank) the expert input and output
///     4h and its SwiGLU internals 6f_e (f_e the routed experts' width); the router's output, which
///     the combine keeps, 2e; a shared expert its SwiGLU internals 6f_s, and with its sigmoid gate the
///     shared output and the gate, 2h + 2; a dense block (before the MoE ones) the dense MLP's.
/// The 1-byte fp8 copies replace the 2-byte linear inputs here as above.
[[nodiscard]] double layer_activation_bytes(const models::TransformerShape& shape, std::int64_t b, std::int64_t t, bool sequence_parallel,
                                            Recompute recompute, models::DType precision = models::DType::BF16, std::int64_t cp = 1,
                                            CpComm cp_comm = CpComm::P2P, std::int64_t block = 0, double expert_imbalance = 1.0);

/// Bytes per parameter of the fp8 copies Transformer Engine caches of a linear layer's weight in fp8
/// training: row-wise and transposed (Hopper's fp8 GEMMs take only the TN layout), 1 + 1 (TE docs,
/// "Performance considerations": the weight stays in high precision and an fp8 copy is kept beside it).
inline constexpr double kFp8WeightCopyBytes = 2;

/// Peak memory of one device of each pipeline stage.
[[nodiscard]] std::vector<StageMemory> memory_per_stage(const models::Graph& graph, const Plan& plan);

}  // namespace parasim::strategies
