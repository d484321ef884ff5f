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
