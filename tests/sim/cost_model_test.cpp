// The cost model's newer operator classes against hand derivations: fused attention timed on its own
// curve, and fp8 GEMMs with their quantization kernels.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/ops.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "sim/cost_model.hpp"
#include "sim/profile.hpp"
#include "sim/work/op_work.hpp"
#include "strategies/memory.hpp"
#include "tests/models/llama3_70b_block.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

sim::EfficiencyCurve flat(double e) { return sim::EfficiencyCurve{{{1, e}}}; }

/// A chip of 1e12 FLOP/s in every dtype (2e12 in fp8), 1e12 B/s of memory at full efficiency, no
/// launch overhead; GEMMs at 0.5 of peak (fp8: 0.25), attention at 0.4 forward and 0.2 backward with
/// the default implementation "fast", 0.25 and 0.125 with "slow".
sim::DeviceProfile chip() {
  sim::DeviceProfile d;
  d.name = "chip";
  d.peak_flops_per_s = {{models::DType::BF16, 1e12}, {models::DType::F32, 1e12}, {models::DType::FP8, 2e12}};
  d.memory_bandwidth_bytes_per_s = 1e12;
  d.memory_capacity_bytes = 1e12;
  d.gemm_efficiency = flat(0.5);
  d.gemm_efficiency_by_dtype[models::DType::FP8] = flat(0.25);
  d.memory_efficiency = flat(1);
  sim::AttentionEfficiency a;
  a.implementation = "fast";
  a.dtype = models::DType::BF16;
  a.head_dim = 64;
  a.causal = true;
  a.forward = flat(0.4);
  a.backward = flat(0.2);
  d.attention_efficiency.push_back(a);
  // A second, slower implementation: listed second, so not the default.
  a.implementation = "slow";
  a.forward = flat(0.25);
  a.backward = flat(0.125);
  d.attention_efficiency.push_back(a);
  return d;
}

}  // namespace

TEST_CASE("cost model: a fused attention runs its executed FLOPs at its own curve", "[sim][cost]") {
  // One head (a = 1, d = 64), b 1, s 1024, causal: forward 4·s²·d / 2 = 4 · 1024² · 64 / 2 =
  // 134,217,728 FLOPs at 0.4 · 1e12 = 335.5 µs; backward 2.5 × that = 335,544,320 FLOPs at 0.2 · 1e12 =
  // 1677.7 µs. Its bytes (Q, K, V, output: 4 · 1024 · 64 · 2 = 524,288 B) take 0.5 µs: compute-bound.
  models::Operator o = models::ops::make("attn", models::OpKind::Attention,
                                         {models::ops::dim("b", 1), models::ops::dim("g", 1), models::ops::dim("r", 1),
                                          models::ops::dim("q", 1024), models::ops::dim("k", 1024, false), models::ops::dim("d", 64)},
                                         {{"b", "q", "g", "r", "d"}, {"b", "k", "g", "d"}, {"b", "k", "g", "d"}}, {"b", "q", "g", "r", "d"},
                                         models::DType::BF16);
  o.variant = "causal";
  o.gemm_batch = {"b", "g", "r"};
  o.gemm_m = {"q"};
  o.gemm_n = {"k"};
  o.gemm_k = {"d"};
  o.flops_per_point = 4 * models::ops::kCausalAttentionShare;
  o.bwd_flops_factor = 2.5;
  const sim::OpWork w = sim::op_work(o, strategies::DeviceMesh{}, strategies::OpSharding{}, models::DType::BF16);
  CHECK(w.fwd_flops == 134'217'728.0);
  CHECK(w.causal);
  const sim::OpCost c = sim::op_cost(chip(), w);
  CHECK_THAT(c.fwd_s, WithinRel(134'217'728.0 / 0.4e12, 1e-12));
  CHECK_THAT(c.bwd_s, WithinRel(335'544'320.0 / 0.2e12, 1e-12));
  // A head dim between listed ones reads the nearest; fp16 reads the bf16 curve.
  CHECK(sim::attention_efficiency(chip(), "", models::DType::F16, 128, 4096, true, false) == 0.4);
  // No curve for the dtype: nothing (the kernel then runs on the GEMM curve).
  CHECK_FALSE(sim::attention_efficiency(chip(), "", models::DType::F32, 64, 4096, true, false).has_value());

  // The run's implementation picks its own curves: "slow" runs the same FLOPs at 0.25 forward
  // (134,217,728 / 0.25e12 = 536.9 µs) and 0.125 backward (335,544,320 / 0.125e12 = 2684.4 µs).
  sim::OpWork slow = w;
  slow.attention_kernel = "slow";
  const sim::OpCost cs = sim::op_cost(chip(), slow);
  CHECK_THAT(cs.fwd_s, WithinRel(134'217'728.0 / 0.25e12, 1e-12));
  CHECK_THAT(cs.bwd_s, WithinRel(335'544'320.0 / 0.125e12, 1e-12));
  CHECK(sim::attention_efficiency(chip(), "fast", models::DType::BF16, 64, 4096, true, true) == 0.2);
  // An implementation the device has no curves for: nothing.
  CHECK_FALSE(sim::attention_efficiency(chip(), "other", models::DType::BF16, 64, 4096, true, false).has_value());
  CHECK(chip().attention_kernels() == std::vector<std::string>{"fast", "slow"});
}

TEST_CASE("cost model: an fp8 linear layer runs its GEMMs in fp8 and pays for its casts", "[sim][cost]") {
  // x [b 1, s 1024, h 1024] · W [1024, 1024], no bias, in fp8 training with 4 micro-batches.
  const models::Operator o = models::ops::linear("fc", {models::ops::dim("b", 1), models::ops::dim("s", 1024)},
                                                 {models::ops::dim("h", 1024)}, {models::ops::dim("n", 1024)}, false, models::DType::BF16);
  const sim::OpWork w = sim::op_work(o, strategies::DeviceMesh{}, strategies::OpSharding{}, models::DType::FP8, 4);
  CHECK(w.dtype == models::DType::FP8);
  // Casts: the input (1024² elements) and a quarter of the weight's (1024², once per 4 micro-batches)
  // at 4 B each forward; the output gradient's 1024² at 4 B backward.
  CHECK(w.quantize_fwd_bytes == 4.0 * 1024 * 1024 + 4.0 * 1024 * 1024 / 4);
  CHECK(w.quantize_bwd_bytes == 4.0 * 1024 * 1024);
  // Forward: 2 · 1024³ = 2,147,483,648 FLOPs at 0.25 · 2e12 = 0.5e12 FLOP/s: 4,295 µs; its bytes (x, W, y:
  // 3 · 1024² · 2 = 6,291,456 B, 6.3 µs) do not bind; the casts add 5,242,880 B / 1e12 B/s = 5.24 µs.
  const sim::OpCost c = sim::op_cost(chip(), w);
  CHECK_THAT(c.fwd_s, WithinRel(2'147'483'648.0 / 0.5e12 + 5'242'880.0 / 1e12, 1e-12));
  // Norms, attention and element-wise operators stay in bf16.
  models::Operator norm = o;
  norm.kind = models::OpKind::LayerNorm;
  CHECK(sim::compute_dtype(norm, models::DType::FP8) == models::DType::BF16);
  CHECK(sim::compute_dtype(o, models::DType::BF16) == models::DType::BF16);
}

TEST_CASE("memory: fp8 training saves the linear layers' inputs in fp8", "[sim][cost][memory]") {
  // Llama-3-70B's block (as in memory_test), s 8192, b 1, tp 8, sequence parallel, fused attention. In
  // bf16: (8,192 + 26,144) · 8192 = 281,280,512 B. In fp8 the QKV and MLP inputs take h each (replicated
  // 4h + h + h = 49,152 → /8 = 6,144), the output projection keeps an fp8 copy (ad = 8,192) and the
  // down projection's input is f (28,672) instead of 2f: split 209,152 + 8,192 − 28,672 = 188,672 →
  // /8 = 23,584. (6,144 + 23,584) · 8192 = 243,531,776 B.
  const models::TransformerShape llama = testing::llama3_70b_block(8192);
  CHECK(strategies::layer_activation_bytes(llama, 1, 8, true, strategies::Recompute::None, models::DType::FP8) == 243'531'776.0);
}

TEST_CASE("op work: the language-model loss counts Megatron's cross-entropy passes, a cast's gradient its own bytes", "[sim][cost]") {
  // A 1-block GPT, vocabulary v 128, sequence s 32, batch 1, fp16: the logits are s·v = 4096 elements.
  // The cast reads them in fp16 (8,192 B) and writes fp32 (16,384 B): 24,576 B; its gradient is cast
  // back, the same 24,576 B. The loss over the fp32 logits (E = 16,384 B) makes 8 passes forward (max;
  // subtract, exp and divide in place; sum) and writes s fp32 losses (128 B): 8E + 128 = 131,200 B;
  // backward 2 passes (multiply in place by the loss gradient): 32,768 B.
  models::TransformerConfig c;
  c.layers = 1;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = 1;
  c.dtype = models::DType::F16;
  const models::Graph g = models::build_transformer(c);
  auto work_of = [&](const std::string& name) {
    for (models::OpId i = 0; i < g.op_count(); ++i)
      if (g.op(i).name == name) return sim::op_work(g.op(i), strategies::DeviceMesh{}, strategies::OpSharding{}, models::DType::F16);
    FAIL("no operator " << name);
    return sim::OpWork{};
  };
  const sim::OpWork cast = work_of("logits_fp32");
  CHECK(cast.bytes == 24'576.0);
  CHECK(cast.bwd_bytes == 24'576.0);
  const sim::OpWork loss = work_of("loss");
  CHECK(loss.bytes == 131'200.0);
  CHECK(loss.bwd_bytes == 32'768.0);
}

TEST_CASE("cost model: a convolution runs as the device's library runs it, Winograd or im2col + GEMM", "[sim][cost_model]") {
  // ResNet-50 at batch 1. layer1.0.conv2: 3x3, stride 1, 64 → 64 channels on 56x56: direct FLOPs
  // 2 · 56 · 56 · 64 · 64 · 9 = 115,605,504; backward twice that. Its work keeps them, whatever the
  // device; it is a Winograd shape. layer2.0.conv2 (v1.5: stride 2, 56 → 28) and a 1x1 are not.
  models::ResNetConfig c;  // ResNet-50 by default
  c.batch = 1;
  const models::Graph g = models::build_resnet(c);
  auto work_of = [&](const std::string& name, models::DType precision) {
    for (models::OpId i = 0; i < g.op_count(); ++i)
      if (g.op(i).name == name) return sim::op_work(g.op(i), strategies::DeviceMesh{}, strategies::OpSharding{}, precision);
    FAIL("no operator " << name);
    return sim::OpWork{};
  };
  const double direct = 2.0 * 56 * 56 * 64 * 64 * 9;
  const sim::OpWork fp32 = work_of("layer1.0.conv2", models::DType::F32);
  CHECK(fp32.fwd_flops == direct);
  CHECK(fp32.bwd_flops == 2 * direct);
  CHECK((fp32.convolution && fp32.winograd_shape));
  CHECK_FALSE(work_of("layer2.0.conv2", models::DType::F32).winograd_shape);
  CHECK_FALSE(work_of("layer1.0.conv1", models::DType::F32).winograd_shape);
  // Its GEMM: m = 56 · 56 output pixels, k = 64 · 3 · 3 patch values, n = 64 channels.
  CHECK(fp32.gemm_m == 56.0 * 56);
  CHECK(fp32.gemm_k == 64.0 * 9);
  CHECK(fp32.gemm_n == 64);

  // A device of 1 TFLOP/s fp32 at every size, 100 GB/s, no launch cost. The forward moves
  // 4 · (56·56·64 + 64·64·9 + 56·56·64) = 1,753,088 B (17.5 µs), less than its arithmetic.
  sim::DeviceProfile d;
  d.name = "test";
  d.peak_flops_per_s = {{models::DType::F32, 1e12}, {models::DType::F16, 4e12}};
  d.gemm_efficiency.points = {{1, 1.0}};
  d.memory_bandwidth_bytes_per_s = 1e11;
  d.memory_efficiency.points = {{1, 1.0}};
  // Winograd (the default): F(2x2, 3x3) takes 16 multiplications per 2x2 tile where the direct form
  // takes 36 (Lavin & Gray 2016), so fp32 runs 115,605,504 / 2.25 FLOPs: 51.38 µs forward, twice
  // backward. fp16 runs on tensor cores as an implicit GEMM: direct FLOPs at 4 TFLOP/s, 28.9 µs.
  CHECK(d.convolution == "winograd");
  const sim::OpCost winograd = sim::op_cost(d, fp32);
  CHECK_THAT(winograd.fwd_s, WithinRel(direct / 2.25 / 1e12, 1e-12));
  CHECK_THAT(winograd.bwd_s, WithinRel(2 * direct / 2.25 / 1e12, 1e-12));
  CHECK_THAT(sim::op_cost(d, work_of("layer1.0.conv2", models::DType::F16)).fwd_s, WithinRel(direct / 4e12, 1e-12));
  // A stride-2 convolution stays direct: 2 · 28 · 28 · 128 · 128 · 9 FLOPs at 1 TFLOP/s.
  CHECK_THAT(sim::op_cost(d, work_of("layer2.0.conv2", models::DType::F32)).fwd_s, WithinRel(2.0 * 28 * 28 * 128 * 128 * 9 / 1e12, 1e-12));
  // im2col + GEMM: direct FLOPs, plus the patch matrix, 3136 · 576 · 4 = 7,225,344 B, written and read
  // forward (read and written: 2 passes, 144.5 µs) and five passes backward (im2col again, then col2im
  // reads the gradient's patches and adds them into the image: 361.3 µs).
  d.convolution = "im2col-gemm";
  const sim::OpCost im2col = sim::op_cost(d, fp32);
  const double patch = 3136.0 * 576 * 4;
  CHECK_THAT(im2col.fwd_s, WithinRel(direct / 1e12 + 2 * patch / 1e11, 1e-12));
  CHECK_THAT(im2col.bwd_s, WithinRel(2 * direct / 1e12 + 5 * patch / 1e11, 1e-12));
  CHECK(fp32.conv_window == 9);
  // Each pass runs at the memory curve's speed for what it keeps in play, the patch matrix and the
  // 3x3 image, a ninth of it: 7,225,344 · 10/9 = 8,028,160 B. A curve at full speed up to 8.1 MB and
  // half from 16.2 MB leaves the figures above as they are; read at the bytes moved (14.5 MB forward,
  // 36.1 MB backward) it would have priced the passes at 0.58 and 0.5 of the speed.
  d.memory_efficiency.points = {{8.1e6, 1.0}, {16.2e6, 0.5}};
  const sim::OpCost cached = sim::op_cost(d, fp32);
  CHECK_THAT(cached.fwd_s, WithinRel(im2col.fwd_s, 1e-12));
  CHECK_THAT(cached.bwd_s, WithinRel(im2col.bwd_s, 1e-12));
  // A 1x1 convolution's image is as large as its patch matrix (window 1): layer1.0.conv1 (64 → 64
  // on 56x56) keeps 2 · 3136 · 64 · 4 = 1,605,632 B in play. A curve at full speed up to 1 MB and
  // half from 1.5 MB runs its two passes of 802,816 B at 50 GB/s (with a ninth-sized image, 0.89 MB
  // in play, they would run at full speed).
  const sim::OpWork one = work_of("layer1.0.conv1", models::DType::F32);
  CHECK(one.conv_window == 1);
  const double direct_1x1 = 2.0 * 3136 * 64 * 64, patch_1x1 = 3136.0 * 64 * 4;
  d.memory_efficiency.points = {{1e6, 1.0}, {1.5e6, 0.5}};
  CHECK_THAT(sim::op_cost(d, one).fwd_s, WithinRel(direct_1x1 / 1e12 + 2 * patch_1x1 / 5e10, 1e-12));
}

TEST_CASE("a GEMM thin in its rows prices its backward pair at the pair's own measured factor", "[sim][cost]") {
  // An 8 × 1024 × 1024 fp32 layer (m = 8 rows, k = n = 1024): F = 2 · 8 · 1024 · 1024 = 16,777,216
  // FLOPs forward, 2F backward (dX and dW, two kernels). Its 4 MiB weight and 32 KiB activations
  // at 1 TB/s take 4.3 µs (twice that backward), less than the arithmetic below.
  sim::OpWork w;
  w.cls = models::OpClass::Gemm;
  w.dtype = models::DType::F32;
  w.has_backward = true;
  w.gemm_m = 8;
  w.gemm_n = w.gemm_k = 1024;
  w.fwd_flops = w.gemm_flops = 2.0 * 8 * 1024 * 1024;
  w.bwd_flops = 2 * w.fwd_flops;
  w.bwd_kernels = 2;
  w.bytes = 4.0 * (8 * 1024 + 1024 * 1024 + 8 * 1024);
  w.bwd_bytes = 2 * w.bytes;
  // A device of 1 TFLOP/s at every size, 1 TB/s, no launch cost; thin factors at 8: the orientations'
  // average 0.5 and m's own 0.5 (forward), 1 at 1024.
  sim::DeviceProfile d;
  d.name = "test";
  d.peak_flops_per_s = {{models::DType::F32, 1e12}};
  d.gemm_efficiency.points = {{1, 1.0}};
  d.memory_bandwidth_bytes_per_s = 1e12;
  d.memory_efficiency.points = {{1, 1.0}};
  d.gemm_thin_efficiency.points = {{8, 0.5}, {1024, 1.0}};
  d.gemm_thin_efficiency_by_dim[0].points = d.gemm_thin_efficiency_by_dim[1].points = d.gemm_thin_efficiency_by_dim[2].points = {{8, 0.5}, {1024, 1.0}};
  // Without a backward curve the pair runs at the average: 2F / (1 TFLOP/s · 0.5) = 67.1 µs.
  const double f = 16'777'216.0;
  CHECK_THAT(sim::op_cost(d, w).bwd_s, WithinRel(2 * f / 0.5e12, 1e-12));
  // The pair measured at 0.25 of the square curve with m = 8: 2F / 0.25 TFLOP/s = 134.2 µs; the
  // forward keeps m's factor, F / 0.5 TFLOP/s = 33.6 µs. Halfway to 1024 in log2 (m = 90.5), 0.625.
  d.gemm_thin_backward_efficiency.points = {{8, 0.25}, {1024, 1.0}};
  const sim::OpCost c = sim::op_cost(d, w);
  CHECK_THAT(c.fwd_s, WithinRel(f / 0.5e12, 1e-12));
  CHECK_THAT(c.bwd_s, WithinRel(2 * f / 0.25e12, 1e-12));
  sim::OpWork wider = w;
  wider.gemm_m = std::sqrt(8.0 * 1024);
  CHECK_THAT(sim::op_cost(d, wider).bwd_s, WithinRel(2 * f / 0.625e12, 1e-12));
  // Thin in k instead (the rows are 1024): the backward curve is not the pair's; the average serves.
  sim::OpWork thin_k = w;
  thin_k.gemm_m = 1024;
  thin_k.gemm_k = 8;
  CHECK_THAT(sim::op_cost(d, thin_k).bwd_s, WithinRel(2 * f / 0.5e12, 1e-12));
  // The factor itself: the pair's curve at thin rows, the average at another thin dim, 1 on a device
  // without thin curves.
  CHECK(sim::gemm_thin_backward_factor(d, 8, 1024, 1024) == 0.25);
  CHECK(sim::gemm_thin_backward_factor(d, 1024, 1024, 8) == 0.5);
  CHECK(sim::gemm_thin_backward_factor(sim::DeviceProfile{}, 8, 1024, 1024) == 1.0);
}
