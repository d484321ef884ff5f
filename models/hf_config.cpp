#include "models/hf_config.hpp"

#include <filesystem>

#include "common/did_you_mean.hpp"
#include "common/json_reader.hpp"

namespace parasim::models {
namespace {

enum class Family { Llama, Mistral, Mixtral, Qwen2, Gpt2, Bert };

struct Architecture {
  const char* architecture;
  const char* model_type;
  Family family;
};

constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", "llama", Family::Llama},       {"MistralForCausalLM", "mistral", Family::Mistral},
    {"MixtralForCausalLM", "mixtral", Family::Mixtral}, {"Qwen2ForCausalLM", "qwen2", Family::Qwen2},
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
  InputError error(const std::string& key, const std::string& message) const { return doc_.error_at(pointer(key), message); }

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

// The most layers a config may give: far above any released model (126 for Llama-3-405B).
constexpr std::int64_t kMaxLayers = 4096;

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
  } else {
    // transformers' LlamaConfig and its relatives: pre-norm RMSNorm, rotary positions, SwiGLU MLP,
    // grouped-query attention, no biases (Qwen2: on q, k and v), untied LM head unless told otherwise.
    c.hidden = f.size("hidden_size");
    c.layers = f.size("num_hidden_layers", kMaxLayers);
    c.heads = f.size("num_attention_heads");
    c.ffn_hidden = f.size("intermediate_size");
    c.vocab = f.size("vocab_size");
    c.kv_heads = f.size_or("num_key_value_heads", c.heads);
    c.head_dim = f.size_or("head_dim", 0);
    // transformers' defaults for max_position_embeddings: Llama 2048, Mistral and Mixtral 4096·32, Qwen2 32768.
    const std::int64_t default_positions = arch.family == Family::Llama ? 2048 : arch.family == Family::Qwen2 ? 32768 : 4096 * 32;
    c.seq_len = f.size_or("max_position_embeddings", default_positions);
    c.norm = NormKind::RMSNorm;
    c.mlp = MlpKind::SwiGLU;
    c.bias = false;
    c.qkv_bias = arch.family == Family::Qwen2;
    c.tied_embeddings = f.boolean_or("tie_word_embeddings", false);
    c.dropout = false;  // these models apply no residual or embedding dropout; attention_dropout is 0 in released configs
    f.require_value("attention_bias", false, "biases on the attention projections are not modelled for this architecture");
    f.require_value("mlp_bias", false, "biases on the MLP projections are not modelled for this architecture");
    if (arch.family == Family::Mixtral) {
      c.experts = f.size("num_local_experts");
      c.experts_per_token = f.size_or("num_experts_per_tok", 2);
      if (c.experts_per_token > c.experts)
        throw f.error("num_experts_per_tok", "num_experts_per_tok (" + std::to_string(c.experts_per_token) +
                                                 ") exceeds num_local_experts (" + std::to_string(c.experts) + ")");
    }
    if (c.heads % c.effective_kv_heads() != 0)
      throw f.error("num_key_value_heads", "num_key_value_heads (" + std::to_string(c.effective_kv_heads()) +
                                               ") must divide num_attention_heads (" + std::to_string(c.heads) + ")");
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
