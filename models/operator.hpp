#pragma once
/// An operator of the model graph, described as an einsum over named dimensions.
///
/// Every operator has an iteration space `dims` (e.g. a linear layer: b, s, k, n). Its activation
/// inputs, its output, its weights and the tensors it saves for backward name the dims that index
/// them. This one description serves every layer above:
///  - FLOPs: fwd = flops_per_point × ∏ dims (a linear layer: 2·b·s·k·n, i.e. 2 FLOPs per MAC);
///    bwd = bwd_flops_factor × fwd (2 for GEMMs: the data and the weight gradient).
///  - sharding (strategies/): a plan maps dims to mesh axes; the local size of a dim is its size
///    divided by the product of its axes' sizes. A dim in `dims` but not in the output is a
///    contraction: sharding it leaves the output a partial sum (Megatron's row-parallel layer).
///  - cost (sim/): GEMM-class operators give their (batch, m, n, k) from the dims listed in the GEMM
///    view, so the efficiency curve sees the local problem size.
///  - sliding windows: the input of a strided convolution or pooling is indexed by stride·o + k − pad,
///    which no product of loop dims sizes. Such an input names `extent_dims` (ih, iw): dims that size
///    a tensor without being loops of the iteration space, so they count in no FLOPs.
#include <cstdint>
#include <string>
#include <vector>

#include "models/dtype.hpp"

namespace parasim::models {

enum class OpKind {
  Input,       ///< a batch of samples entering the graph (no FLOPs)
  Conv2d,
  BatchNorm,
  LayerNorm,
  RMSNorm,
  Activation,  ///< variant: relu, gelu, silu, swiglu (two inputs: gate, up), tanh
  Pool,        ///< variant: max, avg, adaptive_avg
  Linear,
  Matmul,      ///< weightless batched matmul: attention scores (Q·Kᵀ) and context (P·V)
  Softmax,
  Embedding,
  Add,         ///< residual add (two inputs)
  Dropout,
  MoERouter,   ///< gate logits and top-k selection
  MoEExperts,  ///< the expert FFNs applied to routed tokens
  Loss,        ///< softmax cross-entropy (or log-softmax) over the class/vocab dim
  Cast,        ///< element type conversion (the fp32 upcast of the logits before the loss)
  Attention,   ///< fused attention: softmax(Q·Kᵀ)·V in one kernel, scores never stored (FlashAttention)
};

[[nodiscard]] std::string_view to_string(OpKind k);
[[nodiscard]] const std::vector<std::string>& op_kind_names();
/// Throws nothing; returns false when `s` names no kind.
[[nodiscard]] bool op_kind_from_string(std::string_view s, OpKind& out);

/// The operator classes of the cost model: GEMM-like (compute-bound, efficiency by problem size),
/// fused attention (compute-bound, its own efficiency by head dim and sequence length) and
/// memory-bound (bytes over memory bandwidth).
enum class OpClass { Gemm, Attention, MemoryBound };
[[nodiscard]] OpClass op_class(OpKind k);
/// Whether an operator of this kind runs its GEMMs in fp8 in fp8 training as Transformer Engine does
/// it: the linear layers and the MoE experts; norms, softmax, attention and the router stay in bf16.
[[nodiscard]] constexpr bool fp8_gemm(OpKind k) { return k == OpKind::Linear || k == OpKind::MoEExperts; }

/// A dimension of an operator's iteration space.
struct Dim {
  std::string name;
  std::int64_t size = 1;
  /// False where sharding the dim would need communication inside the operator that the cost model
  /// does not represent (the normalised dim of a norm or softmax, a kernel window).
  bool splittable = true;
  bool operator==(const Dim&) const = default;
};

/// A tensor as the operator sees it: the operator dims that index it, outermost first.
struct TensorSpec {
  std::vector<std::string> dims;
  DType dtype = DType::F16;
  bool operator==(const TensorSpec&) const = default;
};

/// A parameter tensor. Two operators naming the same parameter share it (tied embeddings); it is
/// counted once.
struct Weight {
  std::string name;
  TensorSpec spec;
  bool operator==(const Weight&) const = default;
};

struct Operator {
  std::string name;  ///< unique in the graph, e.g. "layers.3.attn.q_proj"
  OpKind kind = OpKind::Input;
  std::string variant;  ///< activation function, pooling kind or attention mask ("causal", "full"); empty otherwise
  std::int32_t layer = 0;  ///< index into Graph::layers(): the unit pipeline stages are cut at
  std::vector<Dim> dims;
  /// Dims that size a tensor but are not loops of the iteration space: the input rows and columns of
  /// a strided convolution or pooling window (not splittable), the token side of an MoE dispatch or
  /// combine. Not counted by points().
  std::vector<Dim> extent_dims;
  std::vector<TensorSpec> inputs;  ///< activation inputs; input slot i is fed by one in-edge
  TensorSpec output;
  std::vector<Weight> weights;
  /// GEMM view (GEMM-class operators only): the dims whose product is the batch count, M, N and K.
  std::vector<std::string> gemm_batch, gemm_m, gemm_n, gemm_k;
  double flops_per_point = 0;   ///< forward FLOPs per point of the iteration space, as the kernel executes them
  double bwd_flops_factor = 0;  ///< backward FLOPs = factor × forward FLOPs
  /// Forward + backward FLOPs per point as model FLOPs count them (the numerator of MFU), where that
  /// differs from what the kernels execute; 0 when it does not. A causal fused attention executes about
  /// half the score blocks and recomputes the scores in backward, while model FLOPs count the full s²
  /// and backward twice forward (Chowdhery et al. 2022, PaLM, Appendix B; Megatron-LM's
  /// num_floating_point_operations).
  double model_flops_per_point = 0;
  /// Activations kept for backward: these input slots, the output, and `saved_mask_bytes_per_element`
  /// further bytes per output element (a dropout mask: 1; the int64 argmax indices of a max pooling:
  /// 8; the internal activations of a fused operator such as the MoE expert MLP).
  std::vector<int> saved_inputs;
  bool saved_output = false;
  double saved_mask_bytes_per_element = 0;
  /// Token routing (MoE dispatch/combine): a change of sharding across this operator's inputs is an
  /// all-to-all, not a local slice.
  bool routing = false;

  bool operator==(const Operator&) const = default;

  /// Size of a named dim (a loop dim or an extent dim). Precondition: the dim exists.
  [[nodiscard]] std::int64_t dim_size(std::string_view name) const;
  /// The loop dim or extent dim of that name, or nullptr.
  [[nodiscard]] const Dim* find_dim(std::string_view name) const;
  /// ∏ dims.
  [[nodiscard]] double points() const;
  /// Elements of a tensor of this operator.
  [[nodiscard]] double elements(const TensorSpec& t) const;
  [[nodiscard]] double fwd_flops() const { return flops_per_point * points(); }
  [[nodiscard]] double bwd_flops() const { return bwd_flops_factor * fwd_flops(); }
  /// Forward + backward model FLOPs (see model_flops_per_point).
  [[nodiscard]] double model_flops() const { return model_flops_per_point > 0 ? model_flops_per_point * points() : fwd_flops() + bwd_flops(); }
  /// Bytes the forward pass reads (activation inputs and weights; an embedding reads only the rows
  /// it looks up, counted as its output size) and writes (the output).
  [[nodiscard]] double fwd_bytes_read() const;
  [[nodiscard]] double fwd_bytes_written() const;
  /// Parameters of this operator's weights (shared weights included).
  [[nodiscard]] std::int64_t param_count() const;
  /// Bytes this operator alone saves for backward (saved inputs are attributed to the consumer here;
  /// Graph::saved_activation_bytes() counts a tensor saved by several consumers once).
  [[nodiscard]] double saved_bytes() const;
};

}  // namespace parasim::models
