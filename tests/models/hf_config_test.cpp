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
  // Minitron-8B-Base (NemotronForCausalLM: squared-ReLU MLP without gate, LayerNorm with bias, 48
  // heads of 128 over h 4096, 8 KV heads, untied): 2·256000·4096 embeddings and head + 32·(4096·6144
  // + 2·4096·1024 + 6144·4096 + 2·4096·16384 + 2·2·4096) + 2·4096 = 8,271,699,968.
  CHECK(from_file("minitron-8b-base").param_count() == 8'271'699'968);
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
  const TransformerConfig minitron =
      transformer_config_from_hf(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/minitron-8b-base/config.json"));
  CHECK(minitron.mlp == MlpKind::SquaredRelu);  // hidden_act relu2
  CHECK(minitron.norm == NormKind::LayerNorm);
  CHECK(minitron.head_dim == 128);
  CHECK(minitron.kv_heads == 8);
  CHECK(minitron.seq_len == 4096);
  CHECK(import_error(R"({"architectures": ["NemotronForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "intermediate_size": 256, "vocab_size": 100, "hidden_act": "gelu"})") ==
        "config.json:2:84: at /hidden_act: found string \"gelu\", but parasim supports only \"relu2\": Nemotron's MLP is modelled as "
        "squared ReLU");
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
  SECTION("more layers than any model may have (models::kMaxLayers, the scenario schema's limit too)") {
    CHECK(import_error(R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_layer": 4097, "n_head": 4, "vocab_size": 100,
  "n_positions": 32})") == "config.json:1:65: at /n_layer: found integer 4097, expected an integer <= 4096");
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
          "\"Qwen2MoeForCausalLM\", \"Qwen3MoeForCausalLM\", \"DeepseekV2ForCausalLM\", \"DeepseekV3ForCausalLM\", "
          "\"GptOssForCausalLM\", \"NemotronForCausalLM\", \"GPT2LMHeadModel\", \"BertModel\" or \"BertForMaskedLM\"");
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

namespace {

// A released config's graph with the embedding's parameters, for the vendors' "active" figures that
// leave the input embedding out.
std::int64_t embedding_params(const Graph& g) {
  for (OpId id = 0; id < g.op_count(); ++id)
    if (g.op(id).name == "embed_tokens") return g.layer_param_count(0);
  return 0;
}

}  // namespace

TEST_CASE("hf config: MoE models as trained now give their model cards' parameter counts", "[models][hf_config][moe]") {
  // Counts by the tensors transformers instantiates for each config (tests/data/models/hf/README.md
  // names each config's Hugging Face repository). H hidden, V vocabulary, L layers, E routed experts,
  // k experts per token; every lm_head here is untied (V·H), every final norm H.
  SECTION("Qwen2-57B-A14B (Qwen2MoeForCausalLM): shared expert with a sigmoid gate, q/k/v biases") {
    // Per layer: attention 3584·3584·2 + 2·3584·512 + 3584 + 2·512 (q/k/v biases), two norms 2·3584,
    // router 3584·64, shared expert 3·3584·20480 and its gate 3584, experts 64·3·3584·2560; 28 layers,
    // embeddings and head 2·151936·3584, final norm 3584: 57,408,658,944, the "57B" of the name (the
    // Open LLM Leaderboard lists 57.409B). Active: 8 of the 64 experts, 14,249,270,784 ("A14B").
    const Graph g = from_file("qwen2-57b-a14b");
    CHECK(g.param_count() == 57'408'658'944);
    CHECK(active_param_count(g) == 57'408'658'944 - 28LL * 56 * 3 * 3584 * 2560);
    CHECK(active_param_count(g) == 14'249'270'784);
  }
  SECTION("Qwen3-30B-A3B and Qwen3-235B-A22B (Qwen3MoeForCausalLM): q/k norms, head_dim 128") {
    // The model card: "30.5B in total and 3.3B activated", "Non-Embedding: 29.9B". Per layer: attention
    // 2048·4096·2 + 2·2048·512, q_norm and k_norm 2·128, two norms 2·2048, router 2048·128, experts
    // 128·3·2048·768; 48 layers; V 151936.
    const Graph small = from_file("qwen3-30b-a3b");
    CHECK(small.param_count() == 30'532'122'624);
    CHECK(small.param_count() - 2 * 151936LL * 2048 == 29'909'792'768);  // non-embedding: 29.9B
    CHECK(active_param_count(small) == 3'353'032'704);                    // 3.3B activated
    // "235B in total and 22B activated", "Non-Embedding: 234B"; 94 layers of hidden 4096, 64 query and
    // 4 key/value heads of 128, 128 experts of 1536, 8 per token.
    const Graph large = from_file("qwen3-235b-a22b");
    CHECK(large.param_count() == 235'093'634'560);
    CHECK(large.param_count() - 2 * 151936LL * 4096 == 233'848'974'848);
    CHECK(active_param_count(large) == 22'190'763'520);
  }
  SECTION("DeepSeek-V2-Lite (DeepseekV2ForCausalLM): MLA without a query latent, 2 shared experts, 1 dense layer") {
    // Attention per layer: q_proj 2048·16·192, kv_a_proj_with_mqa 2048·(512 + 64), kv_a_layernorm 512,
    // kv_b_proj 512·16·(128 + 128), o_proj 16·128·2048; layer 0 a dense MLP 3·2048·10944, layers 1–26
    // router 2048·64, shared experts 3·2048·2·1408 and 64 experts of 3·2048·1408. The card: "15.7B
    // total parameters, of which 2.4B are activated" (the activated figure without the input embedding).
    const Graph g = from_file("deepseek-v2-lite");
    CHECK(g.param_count() == 15'706'484'224);
    CHECK(active_param_count(g) == 2'661'150'208);
    CHECK(active_param_count(g) - embedding_params(g) == 2'451'435'008);
  }
  SECTION("DeepSeek-V3 (DeepseekV3ForCausalLM): MLA with a query latent, 256 experts, top-8, 3 dense layers") {
    // The card's 671B total and 37B activated count the 61 main layers; the multi-token-prediction
    // module (11.5B unique, in the checkpoint's 685B) is not built, as transformers does not build it.
    // README_WEIGHTS.md: 36.6B activated including the 0.9B output head (not the input embedding).
    const Graph g = from_file("deepseek-v3");
    CHECK(g.param_count() == 671'026'419'200);
    CHECK(active_param_count(g) == 37'552'297'472);
    CHECK(active_param_count(g) - embedding_params(g) == 36'625'618'432);
  }
  SECTION("gpt-oss-20b and gpt-oss-120b (GptOssForCausalLM): biases, sinks, router bias") {
    // The gpt-oss model card (arXiv 2508.10925), Table 1: 120b 116.83B total, 5.13B active; 20b 20.91B
    // and 3.61B; active counts the unembedding but not the embedding. Per layer: q/k/v/o with biases
    // 2880·4096 + 4096 + 2·(2880·512 + 512) + 4096·2880 + 2880, sinks 64, two norms, router 2880·E + E,
    // experts E·(2880·5760 + 5760 + 2880·2880 + 2880).
    const Graph large = from_file("gpt-oss-120b");
    CHECK(large.param_count() == 116'829'156'672);
    CHECK(active_param_count(large) - embedding_params(large) == 5'132'849'472);
    const Graph small = from_file("gpt-oss-20b");
    CHECK(small.param_count() == 20'914'757'184);
    CHECK(active_param_count(small) - embedding_params(small) == 3'608'307'264);
  }
  SECTION("Mixtral-8x7B: 46.7B total, 12.9B active (Mistral AI's release post)") {
    const Graph g = from_file("mixtral-8x7b");
    CHECK(active_param_count(g) == 12'879'925'248);
  }
}

TEST_CASE("hf config: the MoE and attention fields map onto the transformer", "[models][hf_config][moe]") {
  auto config = [](const std::string& model) {
    return transformer_config_from_hf(JsonDocument::read_file(std::string(PARASIM_TEST_DATA_DIR) + "/models/hf/" + model + "/config.json"));
  };
  const TransformerConfig v3 = config("deepseek-v3");
  CHECK(v3.mla());
  CHECK(v3.q_lora_rank == 1536);
  CHECK(v3.kv_lora_rank == 512);
  CHECK(v3.head_dim == 192);  // qk_nope_head_dim 128 + qk_rope_head_dim 64: the head dim the attention kernel sees
  CHECK(v3.rope_head_dim == 64);
  CHECK(v3.v_head_dim == 128);
  CHECK(v3.experts == 256);
  CHECK(v3.experts_per_token == 8);
  CHECK(v3.moe_ffn_hidden == 2048);
  CHECK(v3.shared_ffn_hidden == 2048);  // 1 shared expert of moe_intermediate_size
  CHECK(v3.first_dense_layers == 3);
  CHECK(v3.router_bias);  // topk_method noaux_tc: e_score_correction_bias
  CHECK_FALSE(v3.moe_block(2));
  CHECK(v3.moe_block(3));
  const TransformerConfig lite = config("deepseek-v2-lite");
  CHECK(lite.q_lora_rank == 0);  // q_lora_rank null: queries projected directly
  CHECK(lite.shared_ffn_hidden == 2 * 1408);
  CHECK_FALSE(lite.router_bias);
  const TransformerConfig qwen2 = config("qwen2-57b-a14b");
  CHECK(qwen2.shared_ffn_hidden == 20480);
  CHECK(qwen2.shared_expert_gate);
  CHECK(qwen2.qkv_bias);
  CHECK(qwen2.moe_every == 1);
  const TransformerConfig qwen3 = config("qwen3-30b-a3b");
  CHECK(qwen3.qk_norm);
  CHECK(qwen3.head_dim == 128);
  CHECK(qwen3.shared_ffn_hidden == 0);
  const TransformerConfig oss = config("gpt-oss-20b");
  CHECK(oss.sliding_window == 128);
  CHECK(oss.sliding_block(0));
  CHECK_FALSE(oss.sliding_block(1));
  CHECK(oss.attention_sinks);
  CHECK(oss.attention_bias);
  CHECK(oss.expert_bias);
}

TEST_CASE("hf config: MoE configs parasim cannot represent are located InputErrors", "[models][hf_config][moe]") {
  const std::string qwen = R"({"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64, "num_experts": 4,
  "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64, )";
  SECTION("an mlp_only_layers list") {
    CHECK(import_error(qwen + R"("mlp_only_layers": [1]})") ==
          "config.json:3:90: at /mlp_only_layers: parasim models dense blocks only as first_k_dense_replace or decoder_sparse_step "
          "place them; an mlp_only_layers list is not supported");
  }
  SECTION("more experts per token than experts") {
    CHECK(import_error(qwen + R"("num_experts_per_tok": 5})") ==
          "config.json:3:94: at /num_experts_per_tok: num_experts_per_tok (5) exceeds num_experts (4)");
  }
  SECTION("gpt-oss layer types that do not alternate") {
    CHECK(import_error(R"({"architectures": ["GptOssForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "intermediate_size": 64, "vocab_size": 100, "max_position_embeddings": 64, "num_local_experts": 4,
  "layer_types": ["full_attention", "full_attention"]})") ==
          "config.json:3:19: at /layer_types/0: found string \"full_attention\", expected \"sliding_attention\": parasim models "
          "gpt-oss's alternation of sliding and full attention, starting with sliding");
  }
  SECTION("DeepSeek with every layer dense") {
    CHECK(import_error(R"({"architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 64, "n_routed_experts": 4,
  "moe_intermediate_size": 32, "num_experts_per_tok": 2, "kv_lora_rank": 16, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
  "v_head_dim": 16, "first_k_dense_replace": 2})") ==
          "config.json:4:46: at /first_k_dense_replace: first_k_dense_replace (2) leaves no MoE block in the 2 layers");
  }
}
