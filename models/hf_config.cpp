#include "models/hf_config.hpp"

#include <filesystem>

#include "common/did_you_mean.hpp"
#include "common/json_reader.hpp"

namespace parasim::models {
namespace {

enum class Family { Llama, Mistral, Mixtral, Qwen2, Qwen2Moe, Qwen3Moe, DeepseekV2, DeepseekV3, GptOss, Nemotron, Gpt2, Bert };

struct Architecture {
  const char* architecture;
  const char* model_type;
  Family family;
};

constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", Family::Llama},       {"MistralForCausalLM", "mistral", Family::Mistral},
    {"MixtralForCausalLM", "mixtral", Family::Mixtral}, {"Qwen2ForCausalLM", "qwen2", Family::Qwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Family::Qwen2Moe}, {"Qwen3MoeForCausalLM", "qwen3_moe", Family::Qwen3Moe},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Family::DeepseekV2}, {"DeepseekV3ForCausalLM", "deepseek_v3", Family::DeepseekV3},
    {"GptOssForCausalLM", "gpt_oss", Family::GptOss},   {"NemotronForCausalLM", "nemotron", Family::Nemotron},
    {"GPT2LMHeadModel", "gpt2", Family::Gpt2},          {"BertModel", "bert", Family::Bert},
    {"BertForMaskedLM", "bert", Family::Bert},
};

/// Typed access to the top-level fields of a config. Absent and null fields are alike (transformers
/// writes null for "use the default").
class Fields {
 public:
  Fields(const JsonDocument& doc, std::string architecture) : doc_(doc), architecture_(std::move(architecture)) {}

  const nlohmann::json* find(const std::string& key) const {
    const auto& root = doc_.root();
    const auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
  }
  std::string pointer(const std::string& key) const { return json_pointer_append("", key); }

  /// A size in [1, max] that the config must give. The default limit, 2^24, is far above any released
  /// model's widths, vocabularies and contexts; it keeps every count inside int64.
  std::int64_t size(const std::string& key, std::int64_t max = kMaxSize) const {
    if (!find(key)) throw doc_.error_at(pointer(key), "missing required field \"" + key + "\" (" + architecture_ + " configs must give it)");
    return bounded(key, max);
  }
  std::int64_t size_or(const std::string& key, std::int64_t fallback, std::int64_t max = kMaxSize) const {
    return find(key) ? bounded(key, max) : fallback;
  }
  /// A count in [0, max] (0 allowed), or `fallback` when absent.
  std::int64_t count_or(const std::string& key, std::int64_t fallback, std::int64_t max) const {
    if (!find(key)) return fallback;
    const std::int64_t v = read_integer(doc_, pointer(key), 0);
    if (v > max) throw doc_.error_at(pointer(key), "found integer " + std::to_string(v) + ", expected an integer <= " + std::to_string(max));
    return v;
  }
  bool boolean_or(const std::string& key, bool fallback) const {
    const auto* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) throw doc_.error_at(pointer(key), "found " + describe_json_value(*v) + ", expected true or false");
    return v->get<bool>();
  }
  double probability_or(const std::string& key, double fallback) const {
    const auto* v = find(key);
    if (!v) return fallback;
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 1)
      throw doc_.error_at(pointer(key), "found " + describe_json_value(*v) + ", expected a probability between 0 and 1");
    return v->get<double>();
  }
  /// Rejects a field whose value would change the model beyond what parasim represents.
  void require_value(const std::string& key, const nlohmann::json& supported, const std::string& why) const {
    const auto* v = find(key);
    if (v && *v != supported)
      throw doc_.error_at(pointer(key), "found " + describe_json_value(*v) + ", but parasim supports only " + supported.dump() + ": " + why);
  }
  std::string string_or(const std::string& key, const std::string& fallback) const {
    return find(key) ? read_string(doc_, pointer(key)) : fallback;
  }
  /// The elements of an array field (empty when absent).
  std::vector<nlohmann::json> array_or_empty(const std::string& key) const {
    const auto* v = find(key);
    if (!v) return {};
    if (!v->is_array()) throw doc_.error_at(pointer(key), "found " + describe_json_value(*v) + ", expected an array");
    return std::vector<nlohmann::json>(v->begin(), v->end());
  }
  InputError error(const std::string& key, const std::string& message) const { return doc_.error_at(pointer(key), message); }
  InputError error_at(const std::string& pointer, const std::string& message) const { return doc_.error_at(pointer, message); }

 private:
  static constexpr std::int64_t kMaxSize = 1LL << 24;

  std::int64_t bounded(const std::string& key, std::int64_t max) const {
    const std::int64_t v = read_integer(doc_, pointer(key), 1);
    if (v > max) throw doc_.error_at(pointer(key), "found integer " + std::to_string(v) + ", expected an integer <= " + std::to_string(max));
    return v;
  }

  const JsonDocument& doc_;
  std::string architecture_;
};

const Architecture& find_architecture(const JsonDocument& doc) {
  const auto& root = doc.root();
  if (!root.is_object()) throw doc.error_at("", "found " + describe_json_value(root) + ", expected a Hugging Face config object");
  std::vector<std::string> names;
  for (const auto& a : kArchitectures) names.emplace_back(a.architecture);
  if (const auto it = root.find("architectures"); it != root.end() && !it->is_null()) {
    if (!it->is_array() || it->empty())
      throw doc.error_at("/architectures", "found " + describe_json_value(*it) + ", expected a non-empty array of architecture names");
    const std::string name = read_string(doc, "/architectures/0");
    for (const auto& a : kArchitectures)
      if (name == a.architecture) return a;
    throw doc.error_at("/architectures/0", "unsupported architecture \"" + name + "\"" + did_you_mean(name, names) +
                                               "; parasim imports " + quoted_list(names));
  }
  if (const auto it = root.find("model_type"); it != root.end() && !it->is_null()) {
    const std::string type = read_string(doc, "/model_type");
    std::vector<std::string> types;
    for (const auto& a : kArchitectures) {
      if (type == a.model_type) return a;
      if (types.empty() || types.back() != a.model_type) types.emplace_back(a.model_type);
    }
    throw doc.error_at("/model_type", "unsupported model_type \"" + type + "\"" + did_you_mean(type, types) + "; parasim imports " +
                                          quoted_list(types));
  }
  throw doc.error_at("/architectures", "missing required field \"architectures\" (or \"model_type\"): parasim imports " + quoted_list(names));
}

// What every decoder imported here shares with Llama: pre-norm RMSNorm, rotary positions, SwiGLU
// experts and MLPs, no biases, no dropout, untied LM head unless told otherwise. max_position_embeddings
// is required unless the architecture's config class gives a default (`default_positions` > 0).
void import_decoder_shape(const Fields& f, TransformerConfig& c, std::int64_t default_positions = 0) {
  c.hidden = f.size("hidden_size");
  c.layers = f.size("num_hidden_layers", kMaxLayers);
  c.heads = f.size("num_attention_heads");
  c.vocab = f.size("vocab_size");
  c.seq_len = default_positions > 0 ? f.size_or("max_position_embeddings", default_positions) : f.size("max_position_embeddings");
  c.norm = NormKind::RMSNorm;
  c.mlp = MlpKind::SwiGLU;
  c.bias = false;
  c.tied_embeddings = f.boolean_or("tie_word_embeddings", false);
  c.dropout = false;  // attention_dropout is 0 in the released configs; no residual dropout
}

// Grouped-query attention: the query heads split evenly over the key-value heads.
void check_grouped_heads(const Fields& f, const TransformerConfig& c) {
  if (c.heads % c.effective_kv_heads() != 0)
    throw f.error("num_key_value_heads", "num_key_value_heads (" + std::to_string(c.effective_kv_heads()) +
                                             ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
}

void check_top_k(const Fields& f, const TransformerConfig& c, const std::string& experts_key) {
  if (c.experts_per_token > c.experts)
    throw f.error("num_experts_per_tok", "num_experts_per_tok (" + std::to_string(c.experts_per_token) + ") exceeds " + experts_key +
                                             " (" + std::to_string(c.experts) + ")");
}

// transformers' Qwen2MoeConfig and Qwen3MoeConfig: block l is an MoE block when l is not in
// mlp_only_layers and (l + 1) % decoder_sparse_step == 0, else a dense MLP of intermediate_size.
// Qwen2-MoE: biases on q, k and v, a shared expert of shared_expert_intermediate_size with a sigmoid
// gate. Qwen3-MoE: an RMSNorm over the head dim of q and k (q_norm, k_norm), no shared expert.
void import_qwen_moe(const Fields& f, Family family, TransformerConfig& c) {
  import_decoder_shape(f, c);
  c.ffn_hidden = f.size("intermediate_size");
  c.kv_heads = f.size_or("num_key_value_heads", c.heads);
  c.head_dim = f.size_or("head_dim", 0);
  c.experts = f.size("num_experts");
  c.moe_ffn_hidden = f.size("moe_intermediate_size");
  c.experts_per_token = f.size_or("num_experts_per_tok", family == Family::Qwen2Moe ? 4 : 8);
  check_top_k(f, c, "num_experts");
  const std::int64_t step = f.size_or("decoder_sparse_step", 1, kMaxLayers);
  c.moe_every = step;
  c.moe_phase = step - 1;
  if (!f.array_or_empty("mlp_only_layers").empty())
    throw f.error("mlp_only_layers", "parasim models dense blocks only as first_k_dense_replace or decoder_sparse_step place them; "
                                     "an mlp_only_layers list is not supported");
  if (family == Family::Qwen2Moe) {
    c.qkv_bias = true;
    c.shared_ffn_hidden = f.size("shared_expert_intermediate_size");
    c.shared_expert_gate = true;
  } else {
    c.qk_norm = true;
    c.attention_bias = f.boolean_or("attention_bias", false);
  }
  check_grouped_heads(f, c);
}

// DeepSeek-V2 and -V3 (their modeling_deepseek.py, and transformers' DeepseekV2/V3 classes):
// multi-head latent attention (q_lora_rank null: queries projected directly, as in V2-Lite), blocks
// below first_k_dense_replace dense with intermediate_size, then an MoE block every moe_layer_freq-th
// (l % moe_layer_freq == 0): n_routed_experts of moe_intermediate_size beside n_shared_experts shared
// ones (one MLP of n_shared_experts × moe_intermediate_size). The aux-loss-free router of V3
// (topk_method "noaux_tc") keeps a bias per expert (e_score_correction_bias). The multi-token
// prediction module (num_nextn_predict_layers) is not counted, as transformers does not build it:
// DeepSeek-V3's 671B excludes it, the 685B of the checkpoint includes it.
void import_deepseek(const Fields& f, Family family, TransformerConfig& c) {
  import_decoder_shape(f, c);
  c.ffn_hidden = f.size("intermediate_size");
  c.experts = f.size("n_routed_experts");
  c.moe_ffn_hidden = f.size("moe_intermediate_size");
  c.experts_per_token = f.size("num_experts_per_tok");
  check_top_k(f, c, "n_routed_experts");
  c.first_dense_layers = f.count_or("first_k_dense_replace", 0, kMaxLayers);
  c.shared_ffn_hidden = f.count_or("n_shared_experts", 0, kMaxLayers) * c.moe_ffn_hidden;
  c.moe_every = f.size_or("moe_layer_freq", 1, kMaxLayers);
  c.router_bias = f.string_or("topk_method", family == Family::DeepseekV3 ? "noaux_tc" : "greedy") == "noaux_tc";
  c.q_lora_rank = f.size_or("q_lora_rank", 0);
  c.kv_lora_rank = f.size("kv_lora_rank");
  c.rope_head_dim = f.size("qk_rope_head_dim");
  c.head_dim = f.size("qk_nope_head_dim") + c.rope_head_dim;
  c.v_head_dim = f.size("v_head_dim");
  c.kv_heads = c.heads;  // every head gets its keys and values from the latent; num_key_value_heads sizes no weight
  c.attention_bias = f.boolean_or("attention_bias", false);
  if (c.first_dense_layers >= c.layers)
    throw f.error("first_k_dense_replace", "first_k_dense_replace (" + std::to_string(c.first_dense_layers) +
                                               ") leaves no MoE block in the " + std::to_string(c.layers) + " layers");
}

// gpt-oss (transformers' GptOssConfig): every block an MoE block of num_local_experts experts of
// intermediate_size with biases, a router with a bias, biases on q, k, v and o (attention_bias), a
// learned sink logit per head, and attention alternating between a sliding window of sliding_window
// keys (even blocks) and full causal attention (odd blocks), as layer_types lists. Not modelled: the
// clamp of the SwiGLU (swiglu_limit) and its (up + 1) term, a few FLOPs per element, and the MXFP4
// storage of the released experts (training runs in bf16).
void import_gpt_oss(const Fields& f, TransformerConfig& c) {
  import_decoder_shape(f, c);
  c.ffn_hidden = f.size("intermediate_size");
  c.kv_heads = f.size_or("num_key_value_heads", c.heads);
  c.head_dim = f.size_or("head_dim", 64);
  c.experts = f.size("num_local_experts");
  c.experts_per_token = f.size_or("num_experts_per_tok", 4);
  check_top_k(f, c, "num_local_experts");
  c.attention_bias = f.boolean_or("attention_bias", true);
  c.router_bias = true;
  c.expert_bias = true;
  c.attention_sinks = true;
  c.sliding_window = f.size_or("sliding_window", 128);
  c.sliding_every = 2;
  // layer_types must be the alternation parasim models: sliding on even blocks, full on odd ones.
  const auto types = f.array_or_empty("layer_types");
  if (!types.empty()) {
    if (static_cast<std::int64_t>(types.size()) != c.layers)
      throw f.error("layer_types", "lists " + std::to_string(types.size()) + " layers, but num_hidden_layers is " + std::to_string(c.layers));
    for (std::size_t i = 0; i < types.size(); ++i) {
      const std::string expected = i % 2 == 0 ? "sliding_attention" : "full_attention";
      if (types[i] != expected)
        throw f.error_at("/layer_types/" + std::to_string(i),
                         "found " + describe_json_value(types[i]) + ", expected \"" + expected +
                             "\": parasim models gpt-oss's alternation of sliding and full attention, starting with sliding");
    }
  }
  check_grouped_heads(f, c);
}

// The model's name: "_name_or_path" when the config records it, else the folder of a "config.json"
// (as checkpoints are laid out), else the file name without ".json".
std::string model_name(const JsonDocument& doc) {
  if (const auto it = doc.root().find("_name_or_path"); it != doc.root().end() && it->is_string() && !it->get<std::string>().empty())
    return it->get<std::string>();
  const std::filesystem::path path(doc.file());
  if (path.filename() == "config.json" && path.has_parent_path() && !path.parent_path().filename().empty())
    return path.parent_path().filename().string();
  const std::string stem = path.stem().string();
  return stem.empty() ? "hf-model" : stem;
}

std::optional<DType> checkpoint_dtype(const JsonDocument& doc, const Fields& f) {
  for (const std::string key : {"torch_dtype", "dtype"}) {
    const auto* v = f.find(key);
    if (!v) continue;
    const std::string s = read_string(doc, f.pointer(key));
    if (s == "float16") return DType::F16;
    if (s == "bfloat16") return DType::BF16;
    if (s == "float32") return DType::F32;
    throw f.error(key, "found \"" + s + "\", expected \"float16\", \"bfloat16\" or \"float32\"");
  }
  return std::nullopt;
}

}  // namespace

bool is_hf_config(const nlohmann::json& root) {
  return root.is_object() && (root.contains("architectures") || root.contains("model_type"));
}

const std::vector<std::string>& hf_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& a : kArchitectures) v.emplace_back(a.architecture);
    return v;
  }();
  return names;
}

TransformerConfig transformer_config_from_hf(const JsonDocument& doc) {
  const Architecture& arch = find_architecture(doc);
  const Fields f(doc, arch.architecture);
  TransformerConfig c;
  c.name = model_name(doc);

  if (arch.family == Family::Gpt2) {
    // transformers' GPT2Config; GPT-2 ties the LM head to the token embedding by default.
    c.hidden = f.size("n_embd");
    c.layers = f.size("n_layer", kMaxLayers);
    c.heads = f.size("n_head");
    c.vocab = f.size("vocab_size");
    c.max_positions = f.size("n_positions");
    c.ffn_hidden = f.size_or("n_inner", 4 * c.hidden);
    c.tied_embeddings = f.boolean_or("tie_word_embeddings", true);
    c.dropout = f.probability_or("attn_pdrop", 0.1) > 0 || f.probability_or("resid_pdrop", 0.1) > 0 ||
                f.probability_or("embd_pdrop", 0.1) > 0;
  } else if (arch.family == Family::Bert) {
    // transformers' BertConfig: post-norm encoder, learned absolute positions, segment embeddings, pooler.
    c.hidden = f.size("hidden_size");
    c.layers = f.size("num_hidden_layers", kMaxLayers);
    c.heads = f.size("num_attention_heads");
    c.ffn_hidden = f.size("intermediate_size");
    c.vocab = f.size("vocab_size");
    c.max_positions = f.size("max_position_embeddings");
    c.token_types = f.size_or("type_vocab_size", 2);
    c.encoder = true;
    c.pooler = true;
    c.tied_embeddings = false;
    c.dropout = f.probability_or("hidden_dropout_prob", 0.1) > 0 || f.probability_or("attention_probs_dropout_prob", 0.1) > 0;
    f.require_value("position_embedding_type", "absolute", "relative position embeddings add parameters parasim does not model");
  } else if (arch.family == Family::Qwen2Moe || arch.family == Family::Qwen3Moe) {
    import_qwen_moe(f, arch.family, c);
  } else if (arch.family == Family::DeepseekV2 || arch.family == Family::DeepseekV3) {
    import_deepseek(f, arch.family, c);
  } else if (arch.family == Family::GptOss) {
    import_gpt_oss(f, c);
  } else if (arch.family == Family::Nemotron) {
    // transformers' NemotronConfig (Nemotron-4, Minitron): pre-norm LayerNorm1P (a LayerNorm with
    // weight and bias, applied as weight + 1), a squared-ReLU MLP of up and down projections (no gate),
    // grouped-query attention, partial rotary positions (no parameters), no biases, untied head.
    import_decoder_shape(f, c, 4096);  // NemotronConfig's default max_position_embeddings
    c.ffn_hidden = f.size("intermediate_size");
    c.kv_heads = f.size_or("num_key_value_heads", c.heads);
    c.head_dim = f.size_or("head_dim", 0);
    c.norm = NormKind::LayerNorm;
    c.mlp = MlpKind::SquaredRelu;
    f.require_value("hidden_act", "relu2", "Nemotron's MLP is modelled as squared ReLU");
    f.require_value("attention_bias", false, "biases on the attention projections are not modelled for this architecture");
    f.require_value("mlp_bias", false, "biases on the MLP projections are not modelled for this architecture");
    check_grouped_heads(f, c);
  } else {
    // transformers' LlamaConfig and its relatives: pre-norm RMSNorm, rotary positions, SwiGLU MLP,
    // grouped-query attention, no biases (Qwen2: on q, k and v), untied LM head unless told otherwise.
    // transformers' defaults for max_position_embeddings: Llama 2048, Mistral and Mixtral 4096·32, Qwen2 32768.
    import_decoder_shape(f, c, arch.family == Family::Llama ? 2048 : arch.family == Family::Qwen2 ? 32768 : 4096 * 32);
    c.ffn_hidden = f.size("intermediate_size");
    c.kv_heads = f.size_or("num_key_value_heads", c.heads);
    c.head_dim = f.size_or("head_dim", 0);
    c.qkv_bias = arch.family == Family::Qwen2;
    f.require_value("attention_bias", false, "biases on the attention projections are not modelled for this architecture");
    f.require_value("mlp_bias", false, "biases on the MLP projections are not modelled for this architecture");
    if (arch.family == Family::Mixtral) {
      c.experts = f.size("num_local_experts");
      c.experts_per_token = f.size_or("num_experts_per_tok", 2);
      check_top_k(f, c, "num_local_experts");
    }
    check_grouped_heads(f, c);
  }
  if (arch.family == Family::Gpt2 || arch.family == Family::Bert) c.seq_len = c.max_positions;
  if (c.head_dim == 0 && c.hidden % c.heads != 0) {
    const std::string heads_key = arch.family == Family::Gpt2 ? "n_head" : "num_attention_heads";
    throw f.error(heads_key, heads_key + " (" + std::to_string(c.heads) + ") must divide the hidden size (" + std::to_string(c.hidden) +
                                 ") when no head_dim is given");
  }
  if (auto dtype = checkpoint_dtype(doc, f)) c.dtype = *dtype;
  return c;
}

Graph build_hf_model(const JsonDocument& doc, const ModelOptions& options) {
  TransformerConfig c = transformer_config_from_hf(doc);
  auto fail = [&](const std::string& problem) { return InputError(doc.file(), 0, 0, "", "model \"" + c.name + "\": " + problem); };
  for (auto [option, set] : {std::pair{"image_size", options.image_size.has_value()},
                             {"num_classes", options.num_classes.has_value()},
                             {"in_channels", options.in_channels.has_value()}})
    if (set) throw fail(std::string("option ") + option + " does not apply to a transformer (it applies to CNN and MLP presets)");
  if (options.batch < 1) throw fail("batch must be >= 1, found " + std::to_string(options.batch));
  c.batch = options.batch;
  if (options.seq_len) c.seq_len = *options.seq_len;
  if (options.dtype) c.dtype = *options.dtype;
  if (auto problem = validate(c)) throw fail(*problem);
  return build_transformer(c);
}

}  // namespace parasim::models
