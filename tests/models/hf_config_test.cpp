// Hugging Face config.json import: the published parameter counts from the published configs, and
// located errors for bad configs.
#include <catch2/catch.hpp>

#include <string>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "models/hf_config.hpp"

using namespace parasim;
using namespace parasim::models;

namespace {

Graph from_file(const std::string& model, std::int64_t seq_len = 64) {
  ModelOptions options;
  options.seq_len = seq_len;
  return build_hf_model(JsonDocument::read_file(std::string(PARASIM_TEST_DATA_DIR) + "/models/hf/" + model + "/config.json"), options);
}

// The message (with location) of the InputError that importing `text` as "config.json" throws.
std::string import_error(const std::string& text) {
  try {
    (void)transformer_config_from_hf(JsonDocument::parse(text, "config.json"));
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError thrown");
  return {};
}

}  // namespace

TEST_CASE("hf config: the released configs give the published parameter counts", "[models][hf_config]") {
  // GPT-2 (GPT2LMHeadModel, head tied to the embedding): V·h + P·h + L·(12h² + 13h) + 2h with V 50257,
  // P 1024, L 12, h 768 = 124,439,808, the count of the Hugging Face gpt2 checkpoint.
  CHECK(from_file("gpt2").param_count() == 124'439'808);
  // bert-base-uncased as BertModel (with pooler): (30522 + 512 + 2)·768 + 2·768 embeddings,
  // 12·(4·768² + 4·768 + 2·768·3072 + 3072 + 768 + 4·768) layers, pooler 768² + 768 = 109,482,240.
  CHECK(from_file("bert-base-uncased").param_count() == 109'482'240);
  // Llama-2-7B: 2·32000·4096 + 32·(4·4096² + 3·4096·11008 + 2·4096) + 4096 = 6,738,415,616 (Touvron et al. 2023).
  CHECK(from_file("llama-2-7b").param_count() == 6'738'415'616);
  // Llama-3-8B: 2·128256·4096 + 32·(2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096) + 4096 = 8,030,261,248.
  CHECK(from_file("llama-3-8b").param_count() == 8'030'261'248);
  // Mixtral-8x7B: as Mistral-7B with 8 experts per layer and a 4096×8 router = 46,702,792,704.
  CHECK(from_file("mixtral-8x7b").param_count() == 46'702'792'704);
  // Qwen2-0.5B (tied, biases on q/k/v): 151936·896 + 24·(896·896 + 896 + 2·(896·128 + 128) + 896·896
  // + 3·896·4864 + 2·896) + 896 = 494,032,768.
  CHECK(from_file("qwen2-0.5b").param_count() == 494'032'768);
}

TEST_CASE("hf config: fields map onto the transformer", "[models][hf_config]") {
  const auto doc = JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/llama-3-8b/config.json");
  const TransformerConfig c = transformer_config_from_hf(doc);
  CHECK(c.name == "llama-3-8b");  // the checkpoint folder
  CHECK(c.kv_heads == 8);
  CHECK(c.seq_len == 8192);  // max_position_embeddings
  CHECK(c.dtype == DType::BF16);  // torch_dtype
  CHECK(c.mlp == MlpKind::SwiGLU);
  CHECK_FALSE(c.tied_embeddings);
  const TransformerConfig qwen = transformer_config_from_hf(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/qwen2-0.5b/config.json"));
  CHECK(qwen.qkv_bias);
  CHECK(qwen.tied_embeddings);
  const TransformerConfig gpt2 = transformer_config_from_hf(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/gpt2/config.json"));
  CHECK(gpt2.ffn_hidden == 3072);  // n_inner absent: 4·n_embd
  CHECK(gpt2.dropout);             // attn_pdrop 0.1
}

TEST_CASE("hf config: bad configs are located InputErrors", "[models][hf_config]") {
  SECTION("a missing required field") {
    CHECK(import_error(R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "num_attention_heads": 4,
  "intermediate_size": 64, "vocab_size": 100})") ==
          "config.json:1:1: at /hidden_size: missing required field \"hidden_size\" (LlamaForCausalLM configs must give it)");
  }
  SECTION("a negative field") {
    CHECK(import_error(R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_layer": -1, "n_head": 4, "vocab_size": 100,
  "n_positions": 32})") == "config.json:1:65: at /n_layer: found integer -1, expected an integer >= 1");
  }
  SECTION("a zero field") {
    CHECK(import_error(R"({"model_type": "bert", "hidden_size": 0})") ==
          "config.json:1:39: at /hidden_size: found integer 0, expected an integer >= 1");
  }
  SECTION("a field of the wrong type") {
    CHECK(import_error(R"({"architectures": ["MixtralForCausalLM"], "hidden_size": "4096"})") ==
          "config.json:1:58: at /hidden_size: found string \"4096\", expected an integer");
  }
  SECTION("an unsupported architecture, with a suggestion") {
    CHECK(import_error(R"({"architectures": ["LlamaForCausalLLM"]})") ==
          "config.json:1:20: at /architectures/0: unsupported architecture \"LlamaForCausalLLM\" (did you mean \"LlamaForCausalLM\"?); "
          "parasim imports \"LlamaForCausalLM\", \"MistralForCausalLM\", \"MixtralForCausalLM\", \"Qwen2ForCausalLM\", "
          "\"GPT2LMHeadModel\", \"BertModel\" or \"BertForMaskedLM\"");
  }
  SECTION("a value parasim cannot represent") {
    CHECK(import_error(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "intermediate_size": 128, "vocab_size": 100, "attention_bias": true})") ==
          "config.json:2:66: at /attention_bias: found boolean true, but parasim supports only false: biases on the attention "
          "projections are not modelled for this architecture");
  }
  SECTION("heads that do not divide") {
    CHECK(import_error(R"({"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100})") ==
          "config.json:2:26: at /num_key_value_heads: num_key_value_heads (3) must divide num_attention_heads (4)");
  }
  SECTION("an option that does not apply") {
    ModelOptions options;
    options.num_classes = 10;
    CHECK_THROWS_WITH(build_hf_model(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/gpt2/config.json"), options),
                      PARASIM_TEST_DATA_DIR "/models/hf/gpt2/config.json: model \"gpt2\": option num_classes does not apply to a "
                                            "transformer (it applies to CNN and MLP presets)");
  }
}
