// Transformer graphs against the closed forms they must reproduce: Narayanan et al. 2021 (training FLOPs)
// and Korthikanti et al. 2022 (saved activations per layer).
#include <catch2/catch.hpp>

#include <cmath>

#include "models/transformer.hpp"
#include "models/zoo.hpp"

using namespace parasim::models;
using Catch::Matchers::WithinRel;

namespace {
Graph preset(const std::string& name, std::int64_t batch, std::int64_t seq_len, AttentionKind attention = AttentionKind::Fused) {
  ModelOptions options;
  options.attention = attention;
  options.batch = batch;
  options.seq_len = seq_len;
  return build_named_model(name, options);
}
}  // namespace

TEST_CASE("transformer: GPT-3 175B step FLOPs within 1% of Narayanan et al. 2021", "[models][transformer]") {
  // Narayanan et al. 2021, eq. (3) without activation recomputation (3 passes instead of 4):
  // F = 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
  const double B = 2, s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  // Model FLOPs count the full s² attention and backward twice forward, fused or eager.
  for (AttentionKind attention : {AttentionKind::Fused, AttentionKind::Eager}) {
    const Graph g = preset("gpt3-175b", 2, 2048, attention);
    CHECK_THAT(g.model_flops(), WithinRel(expected, 0.01));
  }
  // Eager attention executes exactly the model FLOPs.
  const Graph eager = preset("gpt3-175b", 2, 2048, AttentionKind::Eager);
  CHECK(eager.fwd_flops() + eager.bwd_flops() == eager.model_flops());
}

TEST_CASE("transformer: a causal fused attention executes half the scores and recomputes them in backward", "[models][transformer]") {
  // Per layer and micro-batch the attention core's model FLOPs are 3 · 4·b·a·s²·d (full s², backward
  // twice forward). A causal fused kernel executes half the score blocks: forward 4·b·a·s²·d / 2, and
  // its backward 2.5 × that (five matmuls, the scores recomputed) — flash-attention's FLOP count.
  // gpt2: b 4, s 1024, a 12, d 64: 4·b·a·s²·d = 4 · 4 · 12 · 1024² · 64 = 12,884,901,888.
  const Graph fused = preset("gpt2", 4, 1024, AttentionKind::Fused);
  const Graph eager = preset("gpt2", 4, 1024, AttentionKind::Eager);
  const double core = 4.0 * 4 * 12 * 1024 * 1024 * 64;
  REQUIRE(core == 12'884'901'888.0);
  const double layers = 12;
  // Hardware FLOPs: the eager core's 3·core (scores and context, forward + backward) plus its softmax
  // and dropout element-wise FLOPs give way to the fused kernel's 3.5 · core / 2.
  double eager_core = 0, fused_core = 0;
  for (OpId id = 0; id < eager.op_count(); ++id) {
    const auto& o = eager.op(id);
    if (o.find_dim("q") != nullptr && o.layer >= 1 && o.layer <= 12) eager_core += o.fwd_flops() + o.bwd_flops();
  }
  for (OpId id = 0; id < fused.op_count(); ++id) {
    const auto& o = fused.op(id);
    if (o.kind == OpKind::Attention) {
      CHECK(o.fwd_flops() == core / 2);
      CHECK(o.bwd_flops() == 2.5 * core / 2);
      CHECK(o.model_flops() == 3 * core);
      fused_core += o.fwd_flops() + o.bwd_flops();
    }
  }
  CHECK(fused_core == layers * 3.5 * core / 2);
  // The two graphs differ only in the core: the same model FLOPs but for the eager softmax's and
  // dropout's element-wise FLOPs ((5 + 1) · 2 per score against the matmuls' 3 · 2 · 2 · d = 768:
  // 0.2% of the core, under 1% of the model) and fewer executed ones.
  CHECK_THAT(fused.model_flops(), WithinRel(eager.model_flops(), 0.01));
  CHECK(fused.fwd_flops() + fused.bwd_flops() - fused_core == eager.fwd_flops() + eager.bwd_flops() - eager_core);
}

TEST_CASE("transformer: saved activations of a GPT layer equal Korthikanti et al. 2022", "[models][transformer]") {
  // Korthikanti et al. 2022, eq. (1): 34·s·b·h + 5·a·s²·b bytes per layer, fp16, with dropout, no
  // recomputation, no parallelism.
  const auto [name, b, s, h, a] = GENERATE(table<const char*, double, double, double, double>({
      {"gpt3-175b", 1, 2048, 12288, 96},
      {"gpt2", 4, 1024, 768, 12},
      {"gpt3-1.3b", 2, 512, 2048, 16},
  }));
  CAPTURE(name);
  const Graph g = preset(name, static_cast<std::int64_t>(b), static_cast<std::int64_t>(s), AttentionKind::Eager);
  REQUIRE(g.layers()[1].name == "layers.0");
  CHECK(g.layer_saved_activation_bytes(1) == 34 * s * b * h + 5 * a * s * s * b);
  // Fused attention keeps no scores: the 5·a·s²·b term gives way to the fp32 log-sum-exp of every
  // query row, 4·a·s·b bytes.
  const Graph fused = preset(name, static_cast<std::int64_t>(b), static_cast<std::int64_t>(s), AttentionKind::Fused);
  CHECK(fused.layer_saved_activation_bytes(1) == 34 * s * b * h + 4 * a * s * b);
  // Every block is alike.
  CHECK(g.layer_saved_activation_bytes(2) == g.layer_saved_activation_bytes(1));
}

TEST_CASE("transformer: qkv_bias adds biases to q, k and v only", "[models][transformer]") {
  TransformerConfig c = *transformer_preset("llama-2-7b");
  c.seq_len = 16;
  const std::int64_t without = build_transformer(c).param_count();
  c.qkv_bias = true;
  const Graph g = build_transformer(c);
  CHECK_FALSE(g.validate());
  // Per layer: q has heads·head_dim = 4096 outputs, k and v kv_heads·head_dim = 4096 each.
  CHECK(g.param_count() - without == 32 * (4096 + 2 * 4096));
}

TEST_CASE("transformer: every preset is a valid graph", "[models][transformer]") {
  for (const auto& name : model_names()) {
    if (!transformer_preset(name)) continue;
    CAPTURE(name);
    const Graph g = preset(name, 2, 32);
    CHECK(g.validate() == std::nullopt);
  }
}

TEST_CASE("transformer: Mixtral's routed experts", "[models][transformer]") {
  const Graph g = preset("mixtral-8x7b", 1, 64);
  REQUIRE_FALSE(g.validate());
  // Jiang et al. 2024 / the Hugging Face config: 46,702,792,704 parameters. Per layer: attention
  // 4096·(4096 + 2·1024) + 4096·4096, router 4096·8, experts 8·3·4096·14336, two RMSNorms 2·4096;
  // 32 layers + embeddings and head 2·32000·4096 + final norm 4096.
  CHECK(g.param_count() == 32 * (4096LL * 6144 + 4096LL * 4096 + 4096LL * 8 + 8LL * 3 * 4096 * 14336 + 2 * 4096) +
                               2LL * 32000 * 4096 + 4096);
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Operator& o = g.op(id);
    if (o.name != "layers.0.moe.experts") continue;
    // 64 tokens × top-2 over 8 experts: capacity 16 tokens per expert; 3 GEMMs of 16·4096·14336 MACs each.
    CHECK(o.dim_size("c") == 16);
    CHECK(o.fwd_flops() == 2.0 * 3 * 8 * 16 * 4096 * 14336);
  }
}

namespace {

// A small DeepSeek-style model, every feature of MoE as trained now at hand-countable sizes: hidden h
// 64, 4 heads, multi-head latent attention with a query latent m 32, a key/value latent l 16, query/key
// head dim d 24 of which rope ρ 8, value head dim u 16; block 0 dense (MLP 128), block 1 MoE with 8
// experts of width f_e 32, top-2, and a shared expert of width f_s 32; vocabulary 100, sequence 16,
// one sequence, causal fused attention, bf16.
TransformerConfig small_deepseek() {
  TransformerConfig c;
  c.name = "small-deepseek";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.head_dim = 24;
  c.ffn_hidden = 128;
  c.vocab = 100;
  c.seq_len = 16;
  c.norm = NormKind::RMSNorm;
  c.mlp = MlpKind::SwiGLU;
  c.bias = false;
  c.tied_embeddings = false;
  c.dropout = false;
  c.experts = 8;
  c.experts_per_token = 2;
  c.moe_ffn_hidden = 32;
  c.shared_ffn_hidden = 32;
  c.first_dense_layers = 1;
  c.q_lora_rank = 32;
  c.kv_lora_rank = 16;
  c.rope_head_dim = 8;
  c.v_head_dim = 16;
  c.dtype = DType::BF16;
  return c;
}

const Operator& op_named(const Graph& g, const std::string& name) {
  for (OpId id = 0; id < g.op_count(); ++id)
    if (g.op(id).name == name) return g.op(id);
  FAIL("no operator " << name);
  return g.op(0);
}

}  // namespace

TEST_CASE("transformer: an MoE block with latent attention and a shared expert, FLOPs by hand", "[models][transformer][moe]") {
  const TransformerConfig c = small_deepseek();
  REQUIRE_FALSE(validate(c));
  const Graph g = build_transformer(c);
  REQUIRE_FALSE(g.validate());
  // Forward FLOPs per token of block 1 (graph layer 2), 2 per multiply-add:
  //   q_a_proj 2·64·32 = 4,096; q_b_proj 2·32·4·24 = 6,144; kv_a_proj_with_mqa 2·64·(16 + 8) = 3,072;
  //   kv_b_proj 2·16·4·(16 + 16) = 4,096; o_proj 2·4·16·64 = 8,192                       → 25,600
  //   causal fused attention: per key (2·24 + 2·16)·4 heads, half of the 16 keys on average:
  //     80 · 4 · 16 / 2 = 2,560                                                            → 28,160
  //   RMSNorms 4 per element: input and post-attention 2·64, q_a_layernorm 32, kv_a_layernorm 16:
  //     4 · 176 = 704; residual adds 2·64 = 128                                            → 28,992
  //   router 2·64·8 = 1,024; experts k · 3 GEMMs · 2·64·32 = 2 · 12,288 = 24,576 (capacity 16·2/8
  //     = 4 tokens per expert, exact); combine 2k per element 4·64 = 256                  → 54,848
  //   shared expert: gate and up 2 · 2·64·32 = 8,192, SwiGLU 6·32 = 192, down 2·32·64 = 4,096;
  //     its add 64                                                                          → 67,392
  CHECK(g.layer_fwd_flops(2) == 16 * 67'392.0);
  // Parameters of block 1: q_a 64·32, q_a_layernorm 32, q_b 32·4·24, kv_a 64·24, kv_a_layernorm 16,
  // kv_b 16·4·32, o 4·16·64, two norms 2·64, router 64·8, experts 8·3·64·32, shared 3·64·32
  // = 2,048 + 32 + 3,072 + 1,536 + 16 + 2,048 + 4,096 + 128 + 512 + 49,152 + 6,144 = 68,784.
  CHECK(g.layer_param_count(2) == 68'784);
  // Block 0 is dense: the same attention, and SwiGLU 3·64·128 in place of the MoE: 68,784 − 512 −
  // 49,152 − 6,144 + 24,576 = 37,552.
  CHECK(g.layer_param_count(1) == 37'552);
  // Active: 2 of the 8 experts: 68,784 − 6 · 3·64·32 = 32,208 for block 1.
  CHECK(active_param_count(g) == g.param_count() - 6 * 3 * 64 * 32);
}

TEST_CASE("transformer: latent attention's shapes and the head dim its kernel sees", "[models][transformer][moe]") {
  const Graph g = build_transformer(small_deepseek());
  const Operator& attention = op_named(g, "layers.1.attn.core_attention");
  // Q [b, q, g, r, d]: 4 heads of d = 24 (no-rope 16 + rope 8); the kernel's head dim (its GEMM k).
  CHECK(attention.dim_size("d") == 24);
  CHECK(attention.gemm_k == std::vector<std::string>{"d"});
  CHECK(attention.dim_size("g") == 4);
  // Keys' no-rope part and values of every head from the latent: w = 16 + 16; the down-projection's
  // output j = l + ρ = 24 carries the shared rotary key; the output has the value head dim u = 16.
  CHECK(attention.inputs[1].dims == std::vector<std::string>{"b", "k", "g", "w"});
  CHECK(attention.dim_size("w") == 32);
  CHECK(attention.inputs[2].dims == std::vector<std::string>{"b", "k", "j"});
  CHECK(attention.dim_size("j") == 24);
  CHECK(attention.output.dims == std::vector<std::string>{"b", "q", "g", "r", "u"});
  // Model FLOPs per point: 3 × (2 + 2·16/24) = 10, against 3 × 4 = 12 for equal head dims.
  CHECK_THAT(attention.model_flops_per_point, WithinRel(10.0, 1e-12));
  // Eager latent attention reads the same tensors through its scores and context matmuls: Q·Kᵀ over d
  // (2·24 per score and head), P·V over u (2·16), over all 16 × 16 scores: 4 heads · 256 · 80 = 81,920.
  TransformerConfig eager = small_deepseek();
  eager.attention = AttentionKind::Eager;
  const Graph e = build_transformer(eager);
  REQUIRE_FALSE(e.validate());
  CHECK(op_named(e, "layers.1.attn.scores").fwd_flops() + op_named(e, "layers.1.attn.context").fwd_flops() == 81'920.0);
  const Operator& kv_b = op_named(g, "layers.1.attn.kv_b_proj");
  CHECK(kv_b.weights[0].spec.dims == std::vector<std::string>{"l", "g", "w"});
  CHECK(op_named(g, "layers.1.attn.q_b_proj").dim_size("m") == 32);
}

TEST_CASE("transformer: shared experts and the Qwen2-MoE sigmoid gate", "[models][transformer][moe]") {
  TransformerConfig c = small_deepseek();
  c.shared_expert_gate = true;
  const Graph g = build_transformer(c);
  REQUIRE_FALSE(g.validate());
  // The shared expert is a SwiGLU MLP of f_s = 32 on the same input as the router; its gate h → 1.
  CHECK(op_named(g, "layers.1.moe.shared_expert.gate_proj").dim_size("f") == 32);
  CHECK(op_named(g, "layers.1.moe.shared_expert_gate").weights[0].spec.dims == std::vector<std::string>{"h", "o"});
  // routed + sigmoid(gate)·shared: 2 FLOPs per element; its backward 1.5× (the shared output's
  // gradient 1 FLOP, the gate's a dot product of 2), keeping the shared output and the gate.
  const Operator& sum = op_named(g, "layers.1.moe.shared_add");
  CHECK(sum.fwd_flops() == 16 * 64 * 2.0);
  CHECK(sum.saved_inputs == std::vector<int>{1, 2});
  // The gate adds h = 64 parameters to the MoE block.
  CHECK(g.layer_param_count(2) == 68'784 + 64);
}

TEST_CASE("transformer: a sliding window executes only the scores inside it", "[models][transformer][moe]") {
  TransformerConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 100;
  c.seq_len = 16;
  c.sliding_window = 4;
  c.sliding_every = 2;  // blocks 0 sliding, 1 full (gpt-oss)
  const Graph g = build_transformer(c);
  // Σ_q min(q + 1, 4) over 16 queries = 1 + 2 + 3 + 13 · 4 = 58 of the 256 scores.
  CHECK(sliding_window_share(16, 4) == 58.0 / 256);
  const Operator& sliding = op_named(g, "layers.0.attn.core_attention");
  const Operator& full = op_named(g, "layers.1.attn.core_attention");
  // 4 FLOPs per executed score and head dim element; the full causal block executes half of them.
  CHECK(sliding.flops_per_point == 4 * 58.0 / 256);
  CHECK(full.flops_per_point == 4 * 0.5);
  // Model FLOPs count twice the executed share, as they count the causal half as the whole: 12·2·58/256.
  CHECK(sliding.model_flops_per_point == 12 * 2 * 58.0 / 256);
  CHECK(full.model_flops_per_point == 12);
  // A window as long as the sequence is causal attention itself.
  CHECK(sliding_window_share(16, 16) == 136.0 / 256);
}

TEST_CASE("transformer: bad MoE and latent-attention shapes are named", "[models][transformer][moe]") {
  TransformerConfig c = small_deepseek();
  c.first_dense_layers = 2;
  CHECK(validate(c) == "first_dense_layers (2), moe_every (1) and moe_phase (0) leave every one of the 2 blocks dense");
  c = small_deepseek();
  c.rope_head_dim = 24;
  CHECK(validate(c) == "rope_head_dim (24) must be below head_dim (24)");
  c = small_deepseek();
  c.kv_heads = 2;
  CHECK(validate(c) == "kv_heads must equal heads with multi-head latent attention: every head gets its keys and values from the latent");
  c = small_deepseek();
  c.experts = 0;
  CHECK(validate(c) == "moe_ffn_hidden needs experts > 0 (a mixture-of-experts model)");
  c = small_deepseek();
  c.shared_ffn_hidden = 0;
  c.shared_expert_gate = true;
  CHECK(validate(c) == "shared_expert_gate needs a shared expert (shared_ffn_hidden > 0)");
  c = small_deepseek();
  c.moe_every = 2;
  c.moe_phase = 2;
  CHECK(validate(c) == "moe_phase (2) must be below moe_every (2)");
}
