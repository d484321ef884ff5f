// Transformer graphs against the closed forms they must reproduce: Narayanan et al. 2021 (training FLOPs)
// and Korthikanti et al. 2022 (saved activations per layer).
#include <catch2/catch.hpp>

#include <cmath>

#include "models/transformer.hpp"
#include "models/zoo.hpp"

using namespace parasim::models;
using Catch::Matchers::WithinRel;

namespace {
Graph preset(const std::string& name, std::int64_t batch, std::int64_t seq_len) {
  ModelOptions options;
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
  const Graph g = preset("gpt3-175b", 2, 2048);
  CHECK_THAT(g.fwd_flops() + g.bwd_flops(), WithinRel(expected, 0.01));
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
  const Graph g = preset(name, static_cast<std::int64_t>(b), static_cast<std::int64_t>(s));
  REQUIRE(g.layers()[1].name == "layers.0");
  CHECK(g.layer_saved_activation_bytes(1) == 34 * s * b * h + 5 * a * s * s * b);
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
