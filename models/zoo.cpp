#include "models/zoo.hpp"

#include "common/did_you_mean.hpp"
#include "common/error.hpp"

namespace parasim::models {
namespace {

TransformerConfig gpt(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t positions) {
  TransformerConfig c;
  c.name = std::move(name);
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.vocab = 50257;
  c.max_positions = positions;
  c.seq_len = positions;
  return c;
}

TransformerConfig bert(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
  TransformerConfig c = gpt(std::move(name), layers, hidden, heads, 512);
  c.vocab = 30522;
  c.token_types = 2;
  c.encoder = true;
  c.pooler = true;
  c.tied_embeddings = false;
  return c;
}

TransformerConfig llama(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t ffn, std::int64_t vocab, std::int64_t context) {
  TransformerConfig c;
  c.name = std::move(name);
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn_hidden = ffn;
  c.vocab = vocab;
  c.seq_len = context;
  c.norm = NormKind::RMSNorm;
  c.mlp = MlpKind::SwiGLU;
  c.bias = false;
  c.tied_embeddings = false;
  c.dropout = false;
  c.dtype = DType::BF16;
  return c;
}

TransformerConfig mixtral(std::string name) {
  TransformerConfig c = llama(std::move(name), 32, 4096, 32, 8, 14336, 32000, 32768);
  c.experts = 8;
  c.experts_per_token = 2;
  return c;
}

// Sources: GPT-2 — Radford et al. 2019 and the Hugging Face gpt2* configs; GPT-3 — Brown et al. 2020,
// Table 2.1 (context 2048, vocabulary 50257 as GPT-2); BERT — Devlin et al. 2019 and the
// bert-*-uncased configs; Llama-2 — Touvron et al. 2023 and the meta-llama/Llama-2-* configs; Llama-3 —
// Dubey et al. 2024, Table 3 and the Meta-Llama-3(.1)-* configs; Mixtral — Jiang et al. 2024 and the
// mistralai/Mixtral-8x7B-v0.1 config.
const std::vector<TransformerConfig>& transformer_presets() {
  static const std::vector<TransformerConfig> presets = [] {
    std::vector<TransformerConfig> v{
        gpt("gpt2", 12, 768, 12, 1024),
        gpt("gpt2-medium", 24, 1024, 16, 1024),
        gpt("gpt2-large", 36, 1280, 20, 1024),
        gpt("gpt2-xl", 48, 1600, 25, 1024),
        gpt("gpt3-125m", 12, 768, 12, 2048),
        gpt("gpt3-350m", 24, 1024, 16, 2048),
        gpt("gpt3-760m", 24, 1536, 16, 2048),
        // Table 2.1 lists 24 heads of 128 for GPT-3 XL, which is 3072 ≠ d_model 2048; we keep d_head 128.
        gpt("gpt3-1.3b", 24, 2048, 16, 2048),
        gpt("gpt3-2.7b", 32, 2560, 32, 2048),
        gpt("gpt3-6.7b", 32, 4096, 32, 2048),
        // Table 2.1 prints d_model 5140; 40 heads × d_head 128 = 5120, which we use.
        gpt("gpt3-13b", 40, 5120, 40, 2048),
        gpt("gpt3-175b", 96, 12288, 96, 2048),
        bert("bert-base-uncased", 12, 768, 12),
        bert("bert-large-uncased", 24, 1024, 16),
        llama("llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
        llama("llama-2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
        llama("llama-2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
        llama("llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
        llama("llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
        llama("llama-3-405b", 126, 16384, 128, 8, 53248, 128256, 8192),
        llama("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768),
        mixtral("mixtral-8x7b"),
    };
    return v;
  }();
  return presets;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& c : transformer_presets()) names.push_back(c.name);
  return names;
}

std::optional<TransformerConfig> transformer_preset(std::string_view name) {
  for (const auto& c : transformer_presets())
    if (c.name == name) return c;
  return std::nullopt;
}

Graph build_named_model(std::string_view name, const ModelOptions& options, const std::string& origin, const std::string& pointer) {
  const std::string file = origin.empty() ? "<command line>" : origin;
  if (auto t = transformer_preset(name)) {
    t->batch = options.batch;
    if (options.dtype) t->dtype = *options.dtype;
    if (options.seq_len) t->seq_len = *options.seq_len;
    if (auto problem = validate(*t)) throw InputError(file, 0, 0, pointer, "model \"" + std::string(name) + "\": " + *problem);
    return build_transformer(*t);
  }
  throw InputError(file, 0, 0, pointer,
                   "unknown model \"" + std::string(name) + "\"" + did_you_mean(name, model_names()) +
                       "; run `parasim model --list` for the list");
}

}  // namespace parasim::models
