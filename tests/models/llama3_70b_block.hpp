// Llama-3-70B's transformer block as the memory and cost tests state it (config.json of
// meta-llama/Meta-Llama-3-70B: hidden 8192, 64 heads, 8 key-value heads of 128, SwiGLU MLP of 28,672),
// fused attention, at sequence `seq`.
#pragma once

#include <cstdint>

#include "models/graph.hpp"

namespace parasim::testing {

inline models::TransformerShape llama3_70b_block(std::int64_t seq) {
  models::TransformerShape llama;
  llama.seq_len = seq;
  llama.hidden = 8192;
  llama.heads = 64;
  llama.kv_heads = 8;
  llama.head_dim = 128;
  llama.ffn_hidden = 28672;
  llama.mlp = models::MlpKind::SwiGLU;
  llama.attention = models::AttentionKind::Fused;
  return llama;
}

}  // namespace parasim::testing
