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

// torchvision.models.resnet: resnet18/34 use BasicBlock, the others Bottleneck; the block counts per
// stage are torchvision's (He et al. 2016, Table 1); wide_resnet*_2 double the Bottleneck's inner width
// (width_per_group 128, Zagoruyko & Komodakis 2016 as torchvision adapts it).
ResNetConfig resnet(std::string name, ResNetBlock block, std::array<std::int64_t, 4> blocks, std::int64_t width_per_group = 64) {
  ResNetConfig c;
  c.name = std::move(name);
  c.block = block;
  c.blocks = blocks;
  c.width_per_group = width_per_group;
  return c;
}

const std::vector<ResNetConfig>& resnet_presets() {
  static const std::vector<ResNetConfig> presets{
      resnet("resnet18", ResNetBlock::Basic, {2, 2, 2, 2}),
      resnet("resnet34", ResNetBlock::Basic, {3, 4, 6, 3}),
      resnet("resnet50", ResNetBlock::Bottleneck, {3, 4, 6, 3}),
      resnet("resnet101", ResNetBlock::Bottleneck, {3, 4, 23, 3}),
      resnet("resnet152", ResNetBlock::Bottleneck, {3, 8, 36, 3}),
      resnet("wide_resnet50_2", ResNetBlock::Bottleneck, {3, 4, 6, 3}, 128),
      resnet("wide_resnet101_2", ResNetBlock::Bottleneck, {3, 4, 23, 3}, 128),
  };
  return presets;
}

/// An MLP preset and the images its input layer flattens (for the image_size and in_channels options).
struct MlpPreset {
  MlpConfig config;
  std::int64_t image_size;
  std::int64_t in_channels;
};

// The seed's JAX MNIST example: 28×28 grey images flattened to 784 inputs, two hidden layers of 512,
// 10 classes.
const std::vector<MlpPreset>& mlp_presets() {
  static const std::vector<MlpPreset> presets{{MlpConfig{"mlp-mnist", {784, 512, 512, 10}, 1, DType::F32}, 28, 1}};
  return presets;
}

[[noreturn]] void option_does_not_apply(const std::string& file, const std::string& pointer, std::string_view name,
                                        const char* option, const char* family, const char* applies_to) {
  throw InputError(file, 0, 0, pointer,
                   "model \"" + std::string(name) + "\": option " + option + " does not apply to " + family + " (it applies to " +
                       applies_to + ")");
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& c : transformer_presets()) names.push_back(c.name);
  for (const auto& c : resnet_presets()) names.push_back(c.name);
  for (const auto& p : mlp_presets()) names.push_back(p.config.name);
  return names;
}

std::optional<TransformerConfig> transformer_preset(std::string_view name) {
  for (const auto& c : transformer_presets())
    if (c.name == name) return c;
  return std::nullopt;
}

std::optional<ResNetConfig> resnet_preset(std::string_view name) {
  for (const auto& c : resnet_presets())
    if (c.name == name) return c;
  return std::nullopt;
}

std::optional<MlpConfig> mlp_preset(std::string_view name) {
  for (const auto& p : mlp_presets())
    if (p.config.name == name) return p.config;
  return std::nullopt;
}

Graph build_named_model(std::string_view name, const ModelOptions& options, const std::string& origin, const std::string& pointer) {
  const std::string file = origin.empty() ? "<command line>" : origin;
  auto fail = [&](const std::string& problem) { return InputError(file, 0, 0, pointer, "model \"" + std::string(name) + "\": " + problem); };
  if (options.batch < 1) throw fail("batch must be >= 1, found " + std::to_string(options.batch));

  if (auto t = transformer_preset(name)) {
    const char* applies = "CNN and MLP presets";
    if (options.image_size) option_does_not_apply(file, pointer, name, "image_size", "a transformer", applies);
    if (options.num_classes) option_does_not_apply(file, pointer, name, "num_classes", "a transformer", applies);
    if (options.in_channels) option_does_not_apply(file, pointer, name, "in_channels", "a transformer", applies);
    t->batch = options.batch;
    if (options.dtype) t->dtype = *options.dtype;
    if (options.seq_len) t->seq_len = *options.seq_len;
    if (options.attention) t->attention = *options.attention;
    if (auto problem = validate(*t)) throw fail(*problem);
    return build_transformer(*t);
  }
  if (auto r = resnet_preset(name)) {
    if (options.seq_len) option_does_not_apply(file, pointer, name, "seq_len", "a CNN", "transformer presets");
    if (options.attention) option_does_not_apply(file, pointer, name, "attention", "a CNN, which has no attention", "transformer presets");
    r->batch = options.batch;
    if (options.dtype) r->dtype = *options.dtype;
    if (options.image_size) r->image_size = *options.image_size;
    if (options.num_classes) r->num_classes = *options.num_classes;
    if (options.in_channels) r->in_channels = *options.in_channels;
    if (auto problem = validate(*r)) throw fail(*problem);
    return build_resnet(*r);
  }
  for (const auto& preset : mlp_presets()) {
    if (preset.config.name != name) continue;
    if (options.seq_len) option_does_not_apply(file, pointer, name, "seq_len", "an MLP", "transformer presets");
    if (options.attention) option_does_not_apply(file, pointer, name, "attention", "an MLP, which has no attention", "transformer presets");
    MlpConfig m = preset.config;
    m.batch = options.batch;
    if (options.dtype) m.dtype = *options.dtype;
    // Range-check before multiplying, so the product cannot overflow.
    const std::int64_t image = options.image_size.value_or(preset.image_size), channels = options.in_channels.value_or(preset.in_channels);
    if (image < 1 || image > kMaxImageSize)
      throw fail("image_size must be between 1 and " + std::to_string(kMaxImageSize) + ", found " + std::to_string(image));
    if (channels < 1 || channels > kMaxChannels)
      throw fail("in_channels must be between 1 and " + std::to_string(kMaxChannels) + ", found " + std::to_string(channels));
    m.sizes.front() = channels * image * image;
    if (options.num_classes) {
      if (*options.num_classes < 1 || *options.num_classes > kMaxClasses)
        throw fail("num_classes must be between 1 and " + std::to_string(kMaxClasses) + ", found " + std::to_string(*options.num_classes));
      m.sizes.back() = *options.num_classes;
    }
    if (m.sizes.front() > kMaxMlpWidth)
      throw fail("in_channels·image_size² = " + std::to_string(m.sizes.front()) + " inputs exceed the limit of " + std::to_string(kMaxMlpWidth));
    if (auto problem = validate(m)) throw fail(*problem);
    return build_mlp(m);
  }
  throw InputError(file, 0, 0, pointer,
                   "unknown model \"" + std::string(name) + "\"" + did_you_mean(name, model_names()) +
                       "; run `parasim model --list` for the list");
}

}  // namespace parasim::models
