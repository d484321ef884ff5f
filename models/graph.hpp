#pragma once
/// The model as an operator graph: a value type wrapping a Boost.Graph adjacency_list whose vertices
/// are Operators and whose edges are tensors (producer output → consumer input slot). Operators are
/// grouped into layers, the units pipeline stages are cut at. Totals (parameters, FLOPs, saved
/// activations) are computed from the operators, never stored.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "models/operator.hpp"
#include "models/sharding_annotation.hpp"

namespace parasim::models {

/// An edge: the producer's output feeds input slot `input_slot` of the consumer.
struct TensorEdge {
  int input_slot = 0;
  bool operator==(const TensorEdge&) const = default;
};

/// A group of consecutive operators (a residual block, a transformer layer, the embedding, the head).
struct Layer {
  std::string name;
  bool operator==(const Layer&) const = default;
};

/// The MLP of a transformer block: GELU (two matrices: GPT, BERT), SwiGLU (three: Llama, Mistral) or
/// squared ReLU (two matrices, relu(x)²: Nemotron-4, So et al. 2021 "Primer").
enum class MlpKind { Gelu, SwiGLU, SquaredRelu };
/// How attention runs: one fused kernel that never writes the b·a·s² scores (FlashAttention, Dao et al.
/// 2022; cuDNN's fused attention), or the eager sequence scores → softmax → dropout → context whose
/// scores are materialised (Megatron-LM before 2022, the SC'21 runs).
enum class AttentionKind { Fused, Eager };

[[nodiscard]] std::string_view to_string(MlpKind k);
[[nodiscard]] std::optional<MlpKind> mlp_kind_from_string(std::string_view s);  ///< "gelu", "swiglu", "squared_relu"
[[nodiscard]] std::string_view to_string(AttentionKind k);
[[nodiscard]] std::optional<AttentionKind> attention_kind_from_string(std::string_view s);  ///< "fused", "eager"

/// Whether block i (0-based) of a transformer with `experts` routed experts routes its tokens to them:
/// blocks before first_dense_layers are dense, then every block with i % moe_every == moe_phase
/// (TransformerConfig says where each convention comes from).
[[nodiscard]] constexpr bool routes_to_experts(std::int64_t i, std::int64_t experts, std::int64_t first_dense_layers, std::int64_t moe_every,
                                               std::int64_t moe_phase) {
  return experts > 0 && i >= first_dense_layers && i % moe_every == moe_phase;
}

/// Shape facts of a transformer, kept beside the graph for the closed-form formulas that are stated
/// in these terms (Narayanan et al. 2021 FLOPs, Korthikanti et al. 2022 activation memory).
struct TransformerShape {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden = 0;
  std::int64_t seq_len = 0;
  std::int64_t vocab = 0;
  std::int64_t experts = 0;  ///< 0 for dense models
  std::int64_t experts_per_token = 0;
  MlpKind mlp = MlpKind::Gelu;
  AttentionKind attention = AttentionKind::Eager;
  bool dropout = false;  ///< dropout after attention probabilities and after each block's two projections
  // Mixtures of experts as trained now and multi-head latent attention (models/transformer.hpp,
  // TransformerConfig, says what each means); 0 where the model has none.
  std::int64_t moe_ffn_hidden = 0;     ///< a routed expert's MLP width (ffn_hidden for Mixtral)
  std::int64_t shared_ffn_hidden = 0;  ///< the shared expert's MLP width
  bool shared_expert_gate = false;
  std::int64_t first_dense_layers = 0;
  std::int64_t moe_every = 1;
  std::int64_t moe_phase = 0;
  bool qk_norm = false;
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t rope_head_dim = 0;
  std::int64_t v_head_dim = 0;  ///< value head dim; 0 means head_dim
  bool operator==(const TransformerShape&) const = default;

  /// Whether block i (0-based) routes its tokens to experts.
  [[nodiscard]] bool moe_block(std::int64_t i) const { return routes_to_experts(i, experts, first_dense_layers, moe_every, moe_phase); }
  [[nodiscard]] std::int64_t effective_moe_ffn_hidden() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  [[nodiscard]] std::int64_t effective_v_head_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
};

using OpId = std::size_t;

/// A structural problem of a graph and where it lies, so a loader can point at the part of its file
/// that caused it. At most one of `op`, `edge` and `layer` is set (none for a graph-wide problem).
struct GraphProblem {
  std::string message;  ///< names the operator or edge concerned
  std::optional<OpId> op;
  /// The part of `op` at fault, as a path over Operator's field names: "inputs/1", "dims/0", "layer",
  /// "name", "gemm_k", ...; empty for the operator as a whole.
  std::string op_field;
  std::optional<std::tuple<OpId, OpId, int>> edge;  ///< (producer, consumer, input slot)
  std::optional<std::int32_t> layer;
  bool operator==(const GraphProblem&) const = default;
};

class Graph {
 public:
  using Storage = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Operator, TensorEdge>;

  Graph() = default;
  explicit Graph(std::string name) : name_(std::move(name)) {}

  // ---- building -------------------------------------------------------------------------------
  /// Adds a layer and returns its index.
  std::int32_t add_layer(std::string name);
  /// Adds an operator; returns its id (ids are dense, in insertion order).
  OpId add_op(Operator op);
  /// Feeds `from`'s output into input slot `slot` of `to`.
  void connect(OpId from, OpId to, int slot);
  void set_name(std::string name) { name_ = std::move(name); }
  void set_batch(std::int64_t batch) { batch_ = batch; }
  void set_transformer(TransformerShape t) { transformer_ = t; }
  /// Sharding annotations the model carries (a graph file's "shardings"): a plan naming a mesh
  /// applies them before its own (strategies/propagation.hpp); the knobs' plans do not use them.
  void set_annotations(std::vector<ShardingAnnotation> a) { annotations_ = std::move(a); }

  // ---- reading --------------------------------------------------------------------------------
  [[nodiscard]] const std::string& name() const { return name_; }
  /// Samples per batch the graph was built for (the size of its batch dim).
  [[nodiscard]] std::int64_t batch() const { return batch_; }
  [[nodiscard]] const std::optional<TransformerShape>& transformer() const { return transformer_; }
  [[nodiscard]] const std::vector<ShardingAnnotation>& annotations() const { return annotations_; }
  [[nodiscard]] std::size_t op_count() const { return boost::num_vertices(g_); }
  [[nodiscard]] std::size_t edge_count() const { return boost::num_edges(g_); }
  [[nodiscard]] const Operator& op(OpId id) const { return g_[id]; }
  [[nodiscard]] const std::vector<Layer>& layers() const { return layers_; }
  [[nodiscard]] const Storage& storage() const { return g_; }

  /// Producers of `id`'s input slots, indexed by slot (size = op(id).inputs.size(); a slot with no
  /// producer holds SIZE_MAX — only in an invalid graph).
  [[nodiscard]] std::vector<OpId> producers(OpId id) const;
  /// (consumer, slot) pairs fed by `id`'s output, in edge order.
  [[nodiscard]] std::vector<std::pair<OpId, int>> consumers(OpId id) const;
  /// All edges as (producer, consumer, slot), in insertion order.
  [[nodiscard]] std::vector<std::tuple<OpId, OpId, int>> edges() const;

  /// Operators in a topological order (Boost.Graph's DFS-based sort, returned producers-first).
  /// Precondition: validate() found nothing.
  [[nodiscard]] std::vector<OpId> topological_order() const;

  /// The first structural problem, or nothing: a duplicate layer or operator name, a layer index out
  /// of range, a dim of size < 1 or named twice, a tensor naming a dim its operator lacks (or one dim
  /// twice), a GEMM view naming a non-loop dim, a saved input slot that does not exist, a negative or
  /// non-finite FLOP or byte factor, a weight too large to count or shared with another shape, an
  /// edge to a slot that does not exist, a slot fed zero or several times, a tensor whose rank, sizes
  /// or dtype differ between producer and consumer, or a cycle (the message lists it).
  [[nodiscard]] std::optional<GraphProblem> check() const;
  /// check()'s message alone.
  [[nodiscard]] std::optional<std::string> validate() const;

  // ---- totals ---------------------------------------------------------------------------------
  /// Parameters, each shared weight counted once.
  [[nodiscard]] std::int64_t param_count() const;
  [[nodiscard]] std::int64_t layer_param_count(std::int32_t layer) const;
  [[nodiscard]] double fwd_flops() const;
  [[nodiscard]] double bwd_flops() const;
  /// Forward + backward FLOPs as model FLOPs count them (Operator::model_flops), the numerator of MFU.
  [[nodiscard]] double model_flops() const;
  [[nodiscard]] double layer_fwd_flops(std::int32_t layer) const;
  [[nodiscard]] double layer_bwd_flops(std::int32_t layer) const;
  /// Operators whose layer is `layer`.
  [[nodiscard]] std::size_t layer_op_count(std::int32_t layer) const;
  /// Bytes of activations saved for backward over the whole batch; a tensor saved by several
  /// consumers (the input of Q, K and V projections) is counted once.
  [[nodiscard]] double saved_activation_bytes() const;
  [[nodiscard]] double layer_saved_activation_bytes(std::int32_t layer) const;

  bool operator==(const Graph& other) const;

 private:
  std::string name_;
  std::int64_t batch_ = 1;
  std::optional<TransformerShape> transformer_;
  std::vector<ShardingAnnotation> annotations_;
  std::vector<Layer> layers_;
  Storage g_;
};

}  // namespace parasim::models
