#pragma once
/// Transformer graphs: GPT-2/GPT-3 and BERT (learned positions, LayerNorm, GELU, biases), Llama-2/3 and
/// Mistral/Mixtral (rotary positions, RMSNorm, SwiGLU, grouped-query attention, untied embeddings,
/// top-k MoE). Parameter counts match the reference implementations exactly; FLOPs count 2 per MAC.
///
/// Dim names used in every transformer graph (the plans in strategies/ shard by these names):
///   b batch, s sequence (q / k for the query and key sides of attention), h hidden (the input side of
///   a linear), n the output hidden of a projection back to h, g key/value heads, r query heads per
///   key/value head (heads = g·r), d head dim, f MLP hidden, v vocabulary, e experts, c tokens per
///   expert (capacity).
#include <cstdint>
#include <string>

#include "models/graph.hpp"

namespace parasim::models {

enum class NormKind { LayerNorm, RMSNorm };

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
  std::int64_t experts = 0;     ///< MoE experts per layer; 0 for a dense MLP
  std::int64_t experts_per_token = 2;
  DType dtype = DType::F16;

  bool operator==(const TransformerConfig&) const = default;

  [[nodiscard]] std::int64_t effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  [[nodiscard]] std::int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  [[nodiscard]] std::int64_t effective_ffn_hidden() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
};

/// The first problem with a config ("heads (12) must divide ..."), naming the field, or nothing.
[[nodiscard]] std::optional<std::string> validate(const TransformerConfig& c);

/// Builds the training graph of one batch: embeddings, `layers` blocks (one Graph layer each), final
/// norm, LM head and loss (for an encoder: pooler, then the loss over the pooled output).
/// Layers: 0 = embeddings, 1..L = blocks, L+1 = head. Precondition: validate(c) found nothing.
[[nodiscard]] Graph build_transformer(const TransformerConfig& c);

}  // namespace parasim::models
