// The memory model (strategies/memory): bytes per parameter by optimizer and precision, ZeRO
// sharding, Korthikanti et al. 2022 activation memory, and the per-stage peak under a schedule.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "common/json_document.hpp"
#include "models/hf_config.hpp"
#include "models/mlp.hpp"
#include "models/transformer.hpp"
#include "strategies/memory.hpp"
#include "strategies/plan.hpp"
#include "tests/models/llama3_70b_block.hpp"

using namespace parasim;
using namespace parasim::strategies;
using Catch::Matchers::WithinRel;

namespace {

/// A small GPT: 64 hidden, 4 heads (head dim 16), MLP 256, vocabulary 128, sequence 32, tied embeddings,
/// no position table. Per block 12h² + 13h = 49,152 + 832 = 49,984 parameters.
models::TransformerConfig small_gpt(std::int64_t layers, std::int64_t batch) {
  models::TransformerConfig c;
  c.attention = models::AttentionKind::Eager;  // Korthikanti et al. 2022 count eager attention
  c.name = "small-gpt";
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = batch;
  return c;
}

Plan plan_for(const models::Graph& g, const TrainingSpec& training, const PlanSpec& spec, std::int64_t devices) {
  const auto problem = check_plan(g, training, spec, devices);
  INFO((problem ? problem->pointer + ": " + problem->message : std::string("plan ok")));
  REQUIRE_FALSE(problem);
  return make_plan(g, training, spec, devices);
}

}  // namespace

TEST_CASE("memory: bytes per parameter of weights, gradients and optimizer state", "[strategies][memory]") {
  using models::DType;
  struct Row {
    DType precision;
    Optimizer optimizer;
    double weights, gradients, optimizer_state;
  };
  const auto row = GENERATE(
      // Mixed-precision Adam: fp16 weights 2 + fp16 gradients 2 + fp32 master, momentum, variance 12 = 16
      // (Rajbhandari et al. 2020 §3.1); AdamW keeps the same state.
      Row{DType::F16, Optimizer::Adam, 2, 2, 12}, Row{DType::BF16, Optimizer::AdamW, 2, 2, 12},
      // fp32 Adam: 4 + 4 + momentum and variance 8 = 16. tf32 is a math mode over fp32 tensors: the same.
      Row{DType::F32, Optimizer::Adam, 4, 4, 8}, Row{DType::TF32, Optimizer::Adam, 4, 4, 8},
      // SGD with momentum: mixed 2 + 2 + master 4 + momentum 4; fp32 4 + 4 + momentum 4.
      Row{DType::F16, Optimizer::SGDMomentum, 2, 2, 8}, Row{DType::F32, Optimizer::SGDMomentum, 4, 4, 4},
      // Plain SGD: mixed keeps only the fp32 master (4); fp32 keeps nothing.
      Row{DType::F16, Optimizer::SGD, 2, 2, 4}, Row{DType::F32, Optimizer::SGD, 4, 4, 0});
  INFO(models::to_string(row.precision) << " " << to_string(row.optimizer));
  const BytesPerParameter b = bytes_per_parameter(row.precision, row.optimizer);
  CHECK(b.weights == row.weights);
  CHECK(b.gradients == row.gradients);
  CHECK(b.optimizer == row.optimizer_state);
}

TEST_CASE("memory: ZeRO stages 0–3 shard optimizer state, gradients and weights over dp", "[strategies][memory]") {
  // MLP 8 → 16 → 4 with biases: 8·16 + 16 = 144 and 16·4 + 4 = 68 parameters, 212 in all. dp = 2 on
  // two devices, mixed-precision Adam (16 bytes per parameter before sharding: 424 + 424 + 2544).
  models::MlpConfig mc;
  mc.sizes = {8, 16, 4};
  mc.batch = 2;  // micro-batch 1 × dp 2
  mc.dtype = models::DType::F16;
  const models::Graph g = models::build_mlp(mc);
  REQUIRE(g.param_count() == 212);
  TrainingSpec training;
  training.global_batch = 2;
  training.micro_batch = 1;

  struct Row {
    int zero;
    double weights, gradients, optimizer, buffers;
  };
  const auto row = GENERATE(
      // ZeRO-0: everything replicated. Buffers: two gradient buckets of min(25 MiB, 424 B) = 848.
      Row{0, 424, 424, 2544, 848},
      // ZeRO-1: optimizer state / 2 = 1272.
      Row{1, 424, 424, 1272, 848},
      // ZeRO-2: gradients / 2 = 212 too; a bucket holds at most the full gradients 212·2 = 424 → 848.
      Row{2, 424, 212, 1272, 848},
      // ZeRO-3 (FSDP2, the MLP's default implementation, PyTorch): weights / 2 = 212 too; buffers
      // hold two copies of the largest layer's gathered weights, 2 · 144 · 2 B = 576, and its
      // unsharded gradients for the per-layer reduce-scatter, double-buffered, 2 · 144 · 2 B = 576:
      // 1152 (no gradient bucket beyond that).
      Row{3, 212, 212, 1272, 1152});
  INFO("zero " << row.zero);
  PlanSpec spec;
  spec.zero = row.zero;
  const Plan plan = plan_for(g, training, spec, 2);
  REQUIRE(plan.dp() == 2);
  const auto stages = memory_per_stage(g, plan);
  REQUIRE(stages.size() == 1);
  const auto& m = stages[0].memory;
  CHECK(stages[0].parameters == 212);
  CHECK(m.weights_bytes == row.weights);
  CHECK(m.gradients_bytes == row.gradients);
  CHECK(m.optimizer_bytes == row.optimizer);
  CHECK(m.buffers_bytes == row.buffers);
}

TEST_CASE("memory: FSDP is ZeRO-3, and fp32 Adam is 16 bytes per parameter too", "[strategies][memory]") {
  models::MlpConfig mc;
  mc.sizes = {8, 16, 4};
  mc.batch = 2;
  const models::Graph g = models::build_mlp(mc);  // 212 parameters (above)
  TrainingSpec training;
  training.global_batch = 2;
  SECTION("fsdp") {
    PlanSpec spec;
    spec.fsdp = true;
    const Plan plan = plan_for(g, training, spec, 2);
    CHECK(plan.zero == 3);
    const auto m = memory_per_stage(g, plan)[0].memory;
    // (2 + 2 + 12) · 212 / 2 = 1696.
    CHECK(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes == 1696);
  }
  SECTION("fp32 Adam, no ZeRO") {
    training.precision = models::DType::F32;
    const Plan plan = plan_for(g, training, PlanSpec{}, 2);
    const auto m = memory_per_stage(g, plan)[0].memory;
    // 4·212 = 848 weights, 848 gradients, 8·212 = 1696 optimizer state: 16 · 212 = 3392.
    CHECK(m.weights_bytes == 848);
    CHECK(m.gradients_bytes == 848);
    CHECK(m.optimizer_bytes == 1696);
  }
  SECTION("SGD with momentum, mixed precision") {
    training.optimizer = Optimizer::SGDMomentum;
    const Plan plan = plan_for(g, training, PlanSpec{}, 2);
    // (2 + 2 + 8) · 212 = 2544.
    const auto m = memory_per_stage(g, plan)[0].memory;
    CHECK(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes == 2544);
  }
}

TEST_CASE("memory: Korthikanti et al. 2022 Table 2 for GPT-3 175B (s 2048, b 1, h 12288, a 96, t 8)", "[strategies][memory]") {
  const std::int64_t s = 2048, b = 1, h = 12288, a = 96, t = 8;
  // s·b·h = 2048 · 12288 = 25,165,824; 5·a·s/h = 5 · 96 · 2048 / 12288 = 80.
  SECTION("no parallelism: sbh(34 + 5as/h)") {
    // 25,165,824 · (34 + 80) = 2,868,903,936 B (= 34sbh 855,638,016 + 5as²b 2,013,265,920).
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, 1, false, Recompute::None) == 2'868'903'936.0);
  }
  SECTION("tensor parallel: sbh(10 + 24/t + 5as/(ht))") {
    // 25,165,824 · (10 + 3 + 10) = 25,165,824 · 23 = 578,813,952 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, false, Recompute::None) == 578'813'952.0);
  }
  SECTION("tensor + sequence parallel: sbh/t · (34 + 5as/h)") {
    // 25,165,824 / 8 · 114 = 3,145,728 · 114 = 358,612,992 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, true, Recompute::None) == 358'612'992.0);
  }
  SECTION("tensor parallel + selective recompute: sbh(10 + 24/t)") {
    // 25,165,824 · 13 = 327,155,712 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, false, Recompute::Selective) == 327'155'712.0);
  }
  SECTION("tensor + sequence parallel + selective recompute: sbh · 34/t") {
    // 3,145,728 · 34 = 106,954,752 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, true, Recompute::Selective) == 106'954'752.0);
  }
  SECTION("no parallelism + selective recompute: 34·sbh") {
    // 25,165,824 · 34 = 855,638,016 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, 1, false, Recompute::Selective) == 855'638'016.0);
  }
  SECTION("full recompute: 2·sbh (the layer input), / t with sequence parallel") {
    // 2 · 25,165,824 = 50,331,648 B; with sequence parallel 50,331,648 / 8 = 6,291,456 B.
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, false, Recompute::Full) == 50'331'648.0);
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, 1, false, Recompute::Full) == 50'331'648.0);
    CHECK(korthikanti_layer_activation_bytes(s, b, h, a, t, true, Recompute::Full) == 6'291'456.0);
  }
}

TEST_CASE("memory: the block formula is Korthikanti's for GPT and follows the block's shape otherwise", "[strategies][memory]") {
  // GPT-3 175B's block (s 2048, b 1, h 12288, a 96, d 128, f 4h, dropout, eager): every plan of
  // Korthikanti et al. 2022, Table 2, as the case above checks them.
  models::TransformerShape gpt;
  gpt.seq_len = 2048;
  gpt.hidden = 12288;
  gpt.heads = gpt.kv_heads = 96;
  gpt.head_dim = 128;
  gpt.ffn_hidden = 4 * 12288;
  gpt.dropout = true;
  gpt.attention = models::AttentionKind::Eager;
  for (std::int64_t t : {1, 8})
    for (bool sp : {false, true})
      for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        if (t == 1 && sp) continue;
        CAPTURE(t, sp, static_cast<int>(r));
        CHECK(layer_activation_bytes(gpt, 1, t, sp, r) == korthikanti_layer_activation_bytes(2048, 1, 12288, 96, t, sp, r));
      }
  // Fused attention drops the 5as/h term whatever the recompute, and keeps the fp32 log-sum-exp,
  // 4·a bytes per token: with tp 8 and sequence parallel, sbh/8 · 34 + s·b·4a/8 =
  // 3,145,728 · 34 + 2048 · 384 / 8 = 106,954,752 + 98,304 = 107,053,056 B.
  models::TransformerShape fused = gpt;
  fused.attention = models::AttentionKind::Fused;
  CHECK(layer_activation_bytes(fused, 1, 8, true, Recompute::None) == 107'053'056.0);
  CHECK(layer_activation_bytes(fused, 1, 8, true, Recompute::Selective) == 107'053'056.0);
  // Llama-3-70B's block (h 8192, a 64, g 8, d 128, SwiGLU f 28672, no dropout, fused), s 8192, b 1,
  // tp 8 with sequence parallel. Per token: replicated 4h + 2h + 2h = 65,536 → /8 = 8,192; split over
  // tp: Q 2ad 16,384, K and V 4gd 4,096, output 2ad 16,384, log-sum-exp 4a 256, SwiGLU 6f 172,032:
  // 209,152 → /8 = 26,144. (8,192 + 26,144) · 8192 tokens = 281,280,512 B.
  const models::TransformerShape llama = testing::llama3_70b_block(8192);
  CHECK(layer_activation_bytes(llama, 1, 8, true, Recompute::None) == 281'280'512.0);
}

TEST_CASE("memory: the graph of a GPT layer saves exactly 34·sbh + 5·a·s²·b bytes", "[strategies][memory]") {
  // s 32, b 2, h 64, a 4: sbh = 4096; 34 · 4096 = 139,264 and 5 · 4 · 32² · 2 = 40,960: 180,224 B —
  // Korthikanti's count with no parallelism (QKV input 2, Q and K 4, softmax output 2as²b, its dropout
  // mask as²b and output 2as²b, V 2, projection input 2, dropout mask 1; MLP input 2, GELU input 8,
  // GELU output 8, dropout mask 1; two norm inputs 4; in units of sbh).
  const models::Graph g = models::build_transformer(small_gpt(2, 2));
  CHECK(g.layer_saved_activation_bytes(1) == 180'224.0);
  CHECK(korthikanti_layer_activation_bytes(32, 2, 64, 4, 1, false, Recompute::None) == 180'224.0);
}

TEST_CASE("memory: a stage's activations are the per-layer figure times the micro-batches in flight", "[strategies][memory][pipeline]") {
  // Small GPT with 4 blocks on pp 4 × tp 2 (8 devices), micro-batch 2, 8 micro-batches, 1F1B. One
  // block per stage; the embeddings join stage 0, the head stage 3. 1F1B: stage i holds 4 − i.
  // s 32, b 2, h 64, a 4, t 2: sbh = 4096, 5as/h = 10.
  const models::Graph g = models::build_transformer(small_gpt(4, 2));
  TrainingSpec training;
  training.global_batch = 16;
  training.micro_batch = 2;
  PlanSpec spec;
  spec.pp = 4;
  spec.tp = 2;
  SECTION("tensor parallel: 27·sbh per layer") {
    const Plan plan = plan_for(g, training, spec, 8);
    const auto st = memory_per_stage(g, plan);
    REQUIRE(st.size() == 4);
    for (std::int64_t i = 0; i < 4; ++i) CHECK(st[static_cast<std::size_t>(i)].in_flight == 4 - i);
    // sbh(10 + 24/2 + 10/2) = 27 · 4096 = 110,592 B per block and micro-batch.
    const double layer = korthikanti_layer_activation_bytes(32, 2, 64, 4, 2, false, Recompute::None);
    REQUIRE(layer == 110'592.0);
    // Stages 1 and 2: one block, 3 and 2 micro-batches in flight.
    CHECK(st[1].memory.activations_bytes == 3 * 110'592.0);
    CHECK(st[2].memory.activations_bytes == 2 * 110'592.0);
    // Stage 0 also keeps the embedding dropout's mask, 1 B per element of [b, s, h]: sbh = 4096 B;
    // 4 in flight: 4 · (4096 + 110,592) = 458,752 B.
    CHECK(st[0].memory.activations_bytes == 458'752.0);
    // Stage 3 also keeps the final norm's input (2sbh = 8192), the LM head's input (8192) and the
    // vocabulary-parallel logits the loss saves, in fp32 (the cross-entropy runs in fp32):
    // 4 · b · s · v/t = 4 · 2 · 32 · 64 = 16,384; 1 in flight: 110,592 + 32,768 = 143,360 B.
    CHECK(st[3].memory.activations_bytes == 143'360.0);
  }
  SECTION("tensor + sequence parallel: 22·sbh per layer") {
    spec.sequence_parallel = true;
    const Plan plan = plan_for(g, training, spec, 8);
    const auto st = memory_per_stage(g, plan);
    // sbh/2 · (34 + 10) = 22 · 4096 = 90,112 B.
    CHECK(st[1].memory.activations_bytes == 3 * 90'112.0);
    CHECK(st[2].memory.activations_bytes == 2 * 90'112.0);
  }
  SECTION("tensor parallel + selective recompute: sbh(10 + 24/t) per layer") {
    spec.recompute = Recompute::Selective;
    const Plan plan = plan_for(g, training, spec, 8);
    const auto st = memory_per_stage(g, plan);
    // sbh(10 + 12) = 22 · 4096 = 90,112 B. (t = 2: 24/t = 12.)
    CHECK(st[1].memory.activations_bytes == 3 * 90'112.0);
    CHECK(st[2].memory.activations_bytes == 2 * 90'112.0);
  }
  SECTION("full recompute: 2·sbh per layer kept, plus one layer rematerialised") {
    spec.recompute = Recompute::Full;
    const Plan plan = plan_for(g, training, spec, 8);
    const auto st = memory_per_stage(g, plan);
    // Kept: 2sbh = 8192 B per block and micro-batch; backward rematerialises one block's full
    // activations (27sbh = 110,592) at a time on top. Stage 1: 3 · 8192 + 110,592 = 135,168 B;
    // stage 2: 2 · 8192 + 110,592 = 126,976 B.
    CHECK(st[1].memory.activations_bytes == 135'168.0);
    CHECK(st[2].memory.activations_bytes == 126'976.0);
  }
  SECTION("GPipe holds all 8 micro-batches on every stage") {
    spec.schedule = Schedule::GPipe;
    const Plan plan = plan_for(g, training, spec, 8);
    const auto st = memory_per_stage(g, plan);
    CHECK(st[1].in_flight == 8);
    CHECK(st[1].memory.activations_bytes == 8 * 110'592.0);
  }
}

TEST_CASE("memory: interleaved 1F1B — stage 0 holds p·v + p − 1 chunk-micro-batches", "[strategies][memory][pipeline]") {
  // Small GPT with 8 blocks, pp 2, v 2: chunks of 2 blocks (chunk c on stage c mod 2), 4 micro-batches
  // of 1. Stage 0 warms up with (2 − 1)·2 + (2 − 1)·2 = 4 forwards and holds p·v + p − 1 = 5. Its
  // chunks 0 (embeddings + 2 blocks) and 2 (2 blocks) alternate in groups of p = 2 micro-batches; the
  // order is F(0,c0) F(1,c0) F(0,c2) F(1,c2) F(2,c0) B(0,c2) F(3,c0) ...: five passes are live after
  // F(2,c0) (chunk 0 three, chunk 2 two) and again after F(3,c0) (chunk 0 four, chunk 2 one).
  const models::Graph g = models::build_transformer(small_gpt(8, 1));
  TrainingSpec training;
  training.global_batch = 4;
  PlanSpec spec;
  spec.pp = 2;
  spec.schedule = Schedule::Interleaved1F1B;
  spec.virtual_stages = 2;
  const Plan plan = plan_for(g, training, spec, 2);
  const auto st = memory_per_stage(g, plan);
  CHECK(st[0].in_flight == 5);
  // s 32, b 1, h 64, a 4, t 1: sbh = 2048, per block sbh(34 + 10) = 44 · 2048 = 90,112 B; the embedding
  // dropout mask sbh = 2048 B. Chunk 0: 2 · 90,112 + 2048 = 182,272; chunk 2: 180,224.
  // Chunk 0 is the heavier, so the peak is four of it and one of chunk 2:
  // 4 · 182,272 + 180,224 = 729,088 + 180,224 = 909,312 B (three and two: 907,264 B).
  CHECK(st[0].memory.activations_bytes == 909'312.0);
}

TEST_CASE("memory: with pipeline parallelism the last stage keeps its own copy of a tied embedding", "[strategies][memory]") {
  // Megatron-LM (and DeepSpeed's TiedLayerSpec) give the last stage a copy of the word embeddings for
  // the tied LM head, whose gradients are all-reduced with the first stage's. Small GPT, 2 blocks,
  // pp 2: stage 0 = embeddings (v·h = 128 · 64 = 8192) + block 0 (49,984) = 58,176 parameters;
  // stage 1 = block 1 (49,984) + final norm (2h = 128) + the tied head (8192) = 58,304.
  const models::Graph g = models::build_transformer(small_gpt(2, 1));
  TrainingSpec training;
  training.global_batch = 2;
  PlanSpec spec;
  spec.pp = 2;
  const Plan plan = plan_for(g, training, spec, 2);
  const auto st = memory_per_stage(g, plan);
  CHECK(st[0].parameters == 58'176);
  CHECK(st[1].parameters == 58'304);
  // Mixed-precision Adam: 16 B per parameter.
  CHECK(st[1].memory.weights_bytes + st[1].memory.gradients_bytes + st[1].memory.optimizer_bytes == 16 * 58'304.0);
}

TEST_CASE("memory: fp32 gradients take 4 bytes per parameter", "[strategies][memory]") {
  // Megatron-LM keeps bf16 training's gradients in fp32 (training.grad_precision "fp32"): the weights
  // stay 2 B and Adam's state 12 B, the gradient buffer grows from 2 to 4 B per parameter.
  strategies::Plan plan;
  plan.precision = models::DType::BF16;
  plan.optimizer = strategies::Optimizer::Adam;
  plan.grad_dtype = models::DType::F16;
  const strategies::BytesPerParameter half = strategies::bytes_per_parameter(plan);
  CHECK(half.weights == 2);
  CHECK(half.gradients == 2);
  CHECK(half.optimizer == 12);
  plan.grad_dtype = models::DType::F32;
  const strategies::BytesPerParameter wide = strategies::bytes_per_parameter(plan);
  CHECK(wide.weights == 2);
  CHECK(wide.gradients == 4);
  CHECK(wide.optimizer == 12);
}

TEST_CASE("memory: MoE blocks as trained now — latent attention, fine-grained and shared experts, imbalance", "[strategies][memory][moe]") {
  // DeepSeek-V2-Lite's blocks (its Hugging Face config): h 2048, 16 heads, latent attention with no
  // query latent, key/value latent l 512, query/key head dim d 192 of which rope ρ 64, value head dim
  // u 128; block 0 dense with SwiGLU f 10944, the others 64 experts of f_e 1408, top-6, and 2 shared
  // experts (f_s 2816); fused attention, bf16, s 2048, b 1, t 1. Per token:
  //   replicated: two norm inputs 4h, the attention and MLP inputs 2h + 2h = 8h = 16,384;
  //   latents: the down-projection's output 2(l + ρ) = 1,152 and the up-projection's input 2l = 1,024: 2,176;
  //   attention: Q 2ad 6,144, keys' no-rope part and values 2a(d − ρ + u) 8,192, output 2au 4,096,
  //     log-sum-exp 4a 64: 18,496;
  //   dense block: SwiGLU 6f = 65,664 → 102,720 per token, · 2048 = 210,370,560 B;
  //   MoE block: 6 copies of 4h + 6f_e = 16,640 → 99,840; router output 2e 128; shared 6f_s 16,896:
  //     116,864 → 153,920 per token, · 2048 = 315,228,160 B.
  const models::Graph g = models::build_hf_model(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/deepseek-v2-lite/config.json"),
                                                 [] {
                                                   models::ModelOptions o;
                                                   o.seq_len = 2048;
                                                   return o;
                                                 }());
  const models::TransformerShape& shape = *g.transformer();
  CHECK(layer_activation_bytes(shape, 1, 1, false, Recompute::None, models::DType::BF16, 1, CpComm::P2P, 0) == 210'370'560.0);
  CHECK(layer_activation_bytes(shape, 1, 1, false, Recompute::None, models::DType::BF16, 1, CpComm::P2P, 1) == 315'228'160.0);
  // The graph keeps exactly these tensors (capacity 2048·6/64 = 192 tokens per expert, exact).
  CHECK(g.layer_saved_activation_bytes(1) == 210'370'560.0);
  CHECK(g.layer_saved_activation_bytes(2) == 315'228'160.0);
  // The busiest expert-parallel rank at imbalance 1.5 keeps 1.5 × the routed copies: 149,760 in place
  // of 99,840, 203,840 per token, · 2048 = 417,464,320 B.
  CHECK(layer_activation_bytes(shape, 1, 1, false, Recompute::None, models::DType::BF16, 1, CpComm::P2P, 1, 1.5) == 417'464'320.0);
}

TEST_CASE("memory: expert weights are sharded over ep, shared experts and attention are not", "[strategies][memory][moe]") {
  // DeepSeek-V2-Lite at seq 256 on 8 devices, dp 8 with ep 8: each device holds 64/8 = 8 routed
  // experts per MoE block and everything else whole. Parameters per device: the total 15,706,484,224
  // less 7/8 of the routed experts, 26 blocks · 64 · 3·2048·1408: 26 · 56 · 8,650,752 =
  // 12,595,494,912 → 3,110,989,312.
  models::ModelOptions options;
  options.seq_len = 256;
  options.batch = 8;
  const models::Graph g =
      models::build_hf_model(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/hf/deepseek-v2-lite/config.json"), options);
  PlanSpec spec;
  spec.ep = 8;
  TrainingSpec training;
  training.global_batch = 8;
  training.micro_batch = 1;
  training.precision = models::DType::BF16;
  REQUIRE_FALSE(check_plan(g, training, spec, 8));
  const auto stages = memory_per_stage(g, make_plan(g, training, spec, 8));
  REQUIRE(stages.size() == 1);
  CHECK(stages[0].parameters == 3'110'989'312.0);
  // Mixed-precision Adam: 2 + 2 + 12 bytes per parameter held, no ZeRO.
  CHECK(stages[0].memory.weights_bytes == 2 * 3'110'989'312.0);
  CHECK(stages[0].memory.optimizer_bytes == 12 * 3'110'989'312.0);
}
