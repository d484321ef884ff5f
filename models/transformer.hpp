#pragma once
/// Transformer graphs: GPT-2/GPT-3 and BERT (learned positions, LayerNorm, GELU, biases), Llama-2/3 and
/// Mistral/Mixtral (rotary positions, RMSNorm, SwiGLU, grouped-query attention, untied embeddings,
/// top-k MoE), and mixtures of experts as trained now: fine-grained routed experts of their own width,
/// shared experts (DeepSeek, Qwen2-MoE with its sigmoid gate), dense blocks before the MoE ones,
/// multi-head latent attention (DeepSeek-V2/V3), q/k norms (Qwen3), attention sinks, biases and
/// alternating sliding-window attention (gpt-oss). Parameter counts match the reference
/// implementations exactly; FLOPs count 2 per MAC.
///
/// Dim names used in every transformer graph (the plans in strategies/ shard by these names):
///   b batch, s sequence (q / k for the query and key sides of attention), h hidden (the input side of
///   a linear), n the output hidden of a projection back to h, g key/value heads, r query heads per
///   key/value head (heads = g·r), d head dim (of queries and keys), f MLP hidden, v vocabulary, e experts,
///   c tokens per expert (capacity); multi-head latent attention adds m the query latent, l the
///   key/value latent, j the key/value down-projection's output (latent and the shared rotary key),
///   w a head's key and value from the latent (no-rope key part and value), u the value head dim.
#include <cstdint>
#include <string>

#include "models/graph.hpp"

namespace parasim::models {

enum class NormKind { LayerNorm, RMSNorm };

/// The most transformer blocks a model may have, wherever it is given (a scenario's inline
/// transformer, a Hugging Face config, the scenario schema's maximum): far above any released model
/// (126 for Llama-3-405B), low enough to keep graphs bounded.
inline constexpr std::int64_t kMaxLayers = 4096;

struct TransformerConfig {
  std::string name = "transformer";
  std::int64_t layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t kv_heads = 0;    ///< 0 means equal to heads (multi-head attention)
  std::int64_t head_dim = 0;    ///< 0 means hidden / heads
  std::int64_t ffn_hidden = 0;  ///< 0 means 4 × hidden
  std::int64_t vocab = 50257;
  std::int64_t max_positions = 0;  ///< learned position embeddings (GPT-2, BERT); 0 for rotary
  std::int64_t token_types = 0;    ///< BERT segment embeddings (2); 0 for none
  std::int64_t seq_len = 2048;
  std::int64_t batch = 1;
  NormKind norm = NormKind::LayerNorm;
  MlpKind mlp = MlpKind::Gelu;
  /// Fused attention is what every current training stack runs (FlashAttention since 2022, cuDNN's
  /// fused attention in Transformer Engine); eager reproduces runs made before it.
  AttentionKind attention = AttentionKind::Fused;
  bool bias = true;             ///< biases on every linear layer
  bool qkv_bias = false;        ///< biases on the q, k and v projections only (Qwen2); implied by `bias`
  bool tied_embeddings = true;  ///< the LM head reuses the token embedding
  bool dropout = true;          ///< dropout after attention probabilities, projections and embeddings
  bool encoder = false;         ///< BERT: post-norm layers, embedding LayerNorm, pooler, no final norm
  bool pooler = false;          ///< BERT's pooler (dense + tanh over the first token)
  std::int64_t experts = 0;     ///< routed MoE experts per MoE block; 0 for a dense MLP
  std::int64_t experts_per_token = 2;
  /// A routed expert's MLP width (Hugging Face moe_intermediate_size: fine-grained experts are narrower
  /// than the dense MLP); 0 means ffn_hidden (Mixtral).
  std::int64_t moe_ffn_hidden = 0;
  /// The width of the shared expert: an always-on SwiGLU MLP beside the routed ones on every MoE block
  /// (DeepSeek: n_shared_experts × moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size);
  /// 0 for none.
  std::int64_t shared_ffn_hidden = 0;
  bool shared_expert_gate = false;  ///< Qwen2-MoE: sigmoid(x·w), w [h], scales the shared expert's output
  /// Blocks 0 … first_dense_layers − 1 have a dense MLP of ffn_hidden (DeepSeek first_k_dense_replace);
  /// after them block i is an MoE block when i % moe_every == moe_phase (DeepSeek moe_layer_freq with
  /// phase 0; Qwen-MoE decoder_sparse_step n with phase n − 1), else dense.
  std::int64_t first_dense_layers = 0;
  std::int64_t moe_every = 1;
  std::int64_t moe_phase = 0;
  bool router_bias = false;  ///< a bias per expert on the router (gpt-oss; DeepSeek-V3's e_score_correction_bias)
  bool expert_bias = false;  ///< biases on the experts' projections (gpt-oss)
  bool attention_bias = false;  ///< biases on q, k, v and o (gpt-oss); implied by `bias`
  bool qk_norm = false;         ///< an RMSNorm over the head dim of every query and key head (Qwen3)
  bool attention_sinks = false;  ///< a learned sink logit per head joins each softmax row (gpt-oss)
  /// On sliding blocks a query attends to itself and the sliding_window − 1 keys before it (0: none);
  /// block i slides when i % sliding_every == 0 (gpt-oss 2: sliding and full alternate; 1: every block).
  std::int64_t sliding_window = 0;
  std::int64_t sliding_every = 1;
  /// Multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: keys and values come up from
  /// a kv_lora_rank latent, queries from a q_lora_rank one (0: projected directly from h); head_dim is
  /// the query/key head dim, of which rope_head_dim is the rotary part whose key is one head shared by
  /// all; values have v_head_dim (0: head_dim).
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  DType dtype = DType::F16;

  bool operator==(const TransformerConfig&) const = default;

  [[nodiscard]] std::int64_t effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  [[nodiscard]] std::int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  [[nodiscard]] std::int64_t effective_ffn_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  [[nodiscard]] std::int64_t effective_moe_ffn_hidden() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : effective_ffn_hidden(); }
  [[nodiscard]] std::int64_t effective_v_head_dim() const { return v_head_dim > 0 ? v_head_dim : effective_head_dim(); }
  [[nodiscard]] bool mla() const { return kv_lora_rank > 0; }
  /// Whether block i (0-based) routes its tokens to experts.
  [[nodiscard]] bool moe_block(std::int64_t i) const { return routes_to_experts(i, experts, first_dense_layers, moe_every, moe_phase); }
  [[nodiscard]] bool sliding_block(std::int64_t i) const { return sliding_window > 0 && i % sliding_every == 0; }
};

/// The first problem with a config ("heads (12) must divide ..."), naming the field, or nothing.
[[nodiscard]] std::optional<std::string> validate(const TransformerConfig& c);

/// Builds the training graph of one batch: embeddings, `layers` blocks (one Graph layer each), final
/// norm, LM head and loss (for an encoder: pooler, then the loss over the pooled output).
/// Layers: 0 = embeddings, 1..L = blocks, L+1 = head. Precondition: validate(c) found nothing.
[[nodiscard]] Graph build_transformer(const TransformerConfig& c);

/// The parameters one token uses: every weight but the routed experts', of which experts_per_token of
/// experts count (shared experts, routers, attention, embeddings and head count in full). Vendors
/// differ on the embedding: DeepSeek and OpenAI leave the input embedding out of their "active" figure.
/// For a dense graph, param_count().
[[nodiscard]] std::int64_t active_param_count(const Graph& g);

/// The share of a causal s × s score matrix that lies within a sliding window of `window` keys (each
/// query attends to itself and the window − 1 keys before it): Σ_q min(q + 1, window) / s².
[[nodiscard]] double sliding_window_share(std::int64_t seq_len, std::int64_t window);

}  // namespace parasim::models
