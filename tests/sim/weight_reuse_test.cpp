// Operands out of cache (sim/weight_reuse): the price of a pass whose operands were last touched far
// back in its device's compute stream, derived by hand on a step of three tasks.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "sim/cost_model.hpp"
#include "sim/weight_reuse.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

/// Device "chip" reading weights warm at 1 GB/s, at full speed up to 4 MB of other bytes between two
/// touches and at half speed from 16 MB (log-linear between), writing convolutions' patch matrices.
sim::Profile reuse_profile() {
  sim::Profile p = testing::flat_profile(1e12, 1e12);
  auto& chip = p.devices.at("chip");
  chip.weight_reuse_bytes_per_s = 1e9;
  chip.weight_reuse_efficiency = sim::EfficiencyCurve{{{4e6, 1.0}, {16e6, 0.5}}};
  chip.convolution = "im2col-gemm";
  return p;
}

/// One operator of 1,000,000 fp32 weights (a 1000 × 1000 × 1000 GEMM fed by the graph's input, its
/// output 1,000,000 floats, 8 MB moved forward and 16 MB backward), its forward, its backward and the
/// optimizer step (SGD with momentum, 1,000,000 parameters), in that order on one device.
struct OneLayer {
  sim::StepWork step;
  sim::TaskGraph g;
  strategies::Plan plan;
};

OneLayer one_layer(bool convolution) {
  OneLayer c;
  sim::OpWork w;
  w.cls = models::OpClass::Gemm;
  w.dtype = models::DType::F32;
  w.has_backward = true;
  w.bytes = 8e6;
  w.bwd_bytes = 16e6;
  w.gemm_m = w.gemm_n = w.gemm_k = 1000;
  w.weight_elements = 1e6;
  w.convolution = convolution;
  w.conv_window = convolution ? 9 : 1;
  c.step.op_work = {w};
  c.step.first_producer = {SIZE_MAX};
  c.step.ops = {sim::OpPass{0, sim::Pass::Forward}, sim::OpPass{0, sim::Pass::Backward}};
  c.step.computes = {sim::ComputeWork{0, 1, -1}, sim::ComputeWork{1, 2, -1}, sim::ComputeWork{0, 0, 0}};
  c.step.stage_updated = {1e6};
  c.g.devices = 1;
  c.g.streams = {sim::Stream::Compute};
  c.g.kind.assign(3, sim::TaskKind::Compute);
  c.g.stream.assign(3, 0);
  c.g.owner.assign(3, 0);
  c.g.duration_ps.assign(3, 0);
  c.g.category.assign(3, sim::Category{});
  c.g.micro_batch = {0, 0, -1};
  c.g.label = {0, 1, 2};
  c.g.labels = {"forward", "backward", "optimizer"};
  c.g.label_work = {0, 1, 2};
  c.g.dep_begin = {0, 0, 0, 0};
  c.g.queue_begin = {0, 3};
  c.g.queue = {0, 1, 2};
  c.plan.micro_batches = 1;
  c.plan.optimizer = strategies::Optimizer::SGDMomentum;
  c.plan.precision = models::DType::F32;
  c.plan.grad_dtype = models::DType::F32;
  return c;
}

/// Each task's price, in seconds.
std::vector<double> prices(const OneLayer& c, const sim::Profile& profile, std::int64_t devices_per_node = 1) {
  sim::Cluster cluster = testing::flat_cluster(1);
  cluster.devices_per_node = devices_per_node;
  std::vector<double> out(3, 0.0);
  sim::for_each_weight_reuse(c.g, c.step, c.plan, cluster, profile, [&](sim::TaskId t, std::uint32_t, double s) { out[t] += s; });
  return out;
}

}  // namespace

TEST_CASE("weight reuse: the price of bytes by the distance since they were last touched", "[sim][weight-reuse]") {
  const sim::Profile p = reuse_profile();
  const sim::DeviceProfile& chip = p.device("chip");
  // 4 MB at 1 GB/s is 4 ms warm. Within 4 MB: efficiency 1, nothing more. From 16 MB: 0.5, so
  // 4 ms · (1/0.5 − 1) = 4 ms more. At 8 MB, half way in log2 from 4 to 16 MB: 0.75, 4 ms · 1/3.
  CHECK(sim::weight_reuse_seconds(chip, 4e6, 3e6) == 0);
  CHECK_THAT(sim::weight_reuse_seconds(chip, 4e6, 1e9), WithinRel(4e-3, 1e-12));
  CHECK_THAT(sim::weight_reuse_seconds(chip, 4e6, 8e6), WithinRel(4e-3 / 3, 1e-12));
  // Without backward figures a gradient's write costs what the read does.
  CHECK_THAT(sim::weight_gradient_reuse_seconds(chip, 4e6, 1e9), WithinRel(4e-3, 1e-12));
  // With them: the backward pair at 0.5 GB/s warm and 0.25 of that at every distance, 8 ms · (4 − 1)
  // = 24 ms more, less the read's 4 ms: 20 ms.
  sim::DeviceProfile with_backward = chip;
  with_backward.weight_reuse_backward_bytes_per_s = 0.5e9;
  with_backward.weight_reuse_backward_efficiency = sim::EfficiencyCurve{{{1.0, 0.25}}};
  CHECK_THAT(sim::weight_gradient_reuse_seconds(with_backward, 4e6, 1e9), WithinRel(20e-3, 1e-12));
  // A device without the figures (a GPU's bundled profile) pays nothing.
  CHECK(sim::weight_reuse_seconds(testing::flat_profile(1e12, 1e12).device("chip"), 4e6, 1e9) == 0);
}

TEST_CASE("weight reuse: a convolution's patch matrix passes, where the device writes one", "[sim][weight-reuse]") {
  sim::OpWork w;
  w.dtype = models::DType::F32;
  w.convolution = true;
  w.gemm_batch = 2;
  w.gemm_m = 256;
  w.gemm_k = 576;
  sim::DeviceProfile d = reuse_profile().device("chip");
  // 2 · 256 · 576 floats, 1,179,648 B: forward two passes (im2col reads and writes it), backward
  // five (im2col again, col2im three).
  CHECK(sim::patch_matrix_bytes(d, w, false) == 2 * 1179648.0);
  CHECK(sim::patch_matrix_bytes(d, w, true) == 5 * 1179648.0);
  d.convolution = "winograd";
  CHECK(sim::patch_matrix_bytes(d, w, true) == 0);
  d.convolution = "im2col-gemm";
  w.convolution = false;
  CHECK(sim::patch_matrix_bytes(d, w, false) == 0);
}

TEST_CASE("weight reuse: each operand pays for the bytes its device moved since it last touched it", "[sim][weight-reuse]") {
  const sim::Profile p = reuse_profile();
  REQUIRE(sim::optimizer_bytes_per_parameter(strategies::Optimizer::SGDMomentum, models::DType::F32, models::DType::F32) == 20);
  SECTION("a matrix product") {
    // The first walk stands for the step before: the forward moves 8 MB (output touched at 8 MB,
    // weights at 8 MB); the backward 16 MB and its 4 MB gradient (output gradient, weights and
    // gradient at 28 MB); the optimizer 20 B a parameter, 20 MB (weights and gradient at 48 MB).
    // Second walk, from 48 MB. The forward writes its 4 MB output, last touched at 8 MB, 40 MB ago:
    // 4 ms; its weights were touched 0 B ago: nothing. Now at 56 MB. The backward reads its output's
    // 4 MB gradient, touched at 28 MB, 28 MB ago: 4 ms; its weights 0 B ago: nothing; it writes its
    // gradient, touched by the optimizer at 48 MB, 8 MB ago: 4 ms / 3. The optimizer pays nothing.
    const std::vector<double> s = prices(one_layer(false), p);
    CHECK_THAT(s[0], WithinRel(4e-3, 1e-12));
    CHECK_THAT(s[1], WithinRel(4e-3 + 4e-3 / 3, 1e-12));
    CHECK(s[2] == 0);
  }
  SECTION("a convolution: its patch matrix moves bytes too") {
    // The same operator as a convolution of 1000 · 1000 patch elements, 4 MB: the forward moves 8 MB
    // more, the backward 20 MB more. First walk: forward to 16 MB, backward to 56 MB, optimizer to
    // 76 MB. Second: the forward's output 60 MB ago (4 ms), to 92 MB; the backward's output gradient
    // 36 MB ago (4 ms), its gradient 16 MB ago, at half speed: 4 ms, where the product paid 4 ms / 3.
    const std::vector<double> s = prices(one_layer(true), p);
    CHECK_THAT(s[0], WithinRel(4e-3, 1e-12));
    CHECK_THAT(s[1], WithinRel(8e-3, 1e-12));
  }
  SECTION("the devices of a node share its cache") {
    // Two devices to the node: every distance doubles, and the gradient's 8 MB becomes 16 MB.
    const std::vector<double> s = prices(one_layer(false), p, 2);
    CHECK_THAT(s[1], WithinRel(8e-3, 1e-12));
  }
  SECTION("without the figures, nothing") {
    const std::vector<double> s = prices(one_layer(false), testing::flat_profile(1e12, 1e12));
    CHECK(s == std::vector<double>(3, 0.0));
  }
}

namespace {

/// reuse_profile's chip with a memory bandwidth of 4 GB/s at every size, and the memory-bound pass
/// measured warm at 4 GB/s: written cold at full speed within 4 MB and at a quarter from 16 MB, read
/// cold at half from 16 MB (log-linear between).
sim::Profile memory_reuse_profile() {
  sim::Profile p = reuse_profile();
  auto& chip = p.devices.at("chip");
  chip.memory_bandwidth_bytes_per_s = 4e9;
  chip.memory_reuse_bytes_per_s = 4e9;
  chip.memory_reuse_efficiency = sim::EfficiencyCurve{{{4e6, 1.0}, {16e6, 0.25}}};
  chip.memory_reuse_read_efficiency = sim::EfficiencyCurve{{{4e6, 1.0}, {16e6, 0.5}}};
  return p;
}

/// one_layer's operator as a memory-bound one (a norm's or an embedding's place): the same bytes,
/// the same 1,000,000 weights, no matrix product.
OneLayer memory_bound_layer() {
  OneLayer c = one_layer(false);
  c.step.op_work[0].cls = models::OpClass::MemoryBound;
  return c;
}

}  // namespace

TEST_CASE("memory reuse: an element-wise operand is priced as the calibrated pass with it cold", "[sim][weight-reuse]") {
  const sim::Profile p = memory_reuse_profile();
  const sim::DeviceProfile& chip = p.device("chip");
  // 1 MB written 1 GB after it was last touched: the pass over 2 MB with it cold runs at a quarter
  // of 4 GB/s, 2 ms, against 0.5 ms warm: 1.5 ms more. Read: at half, 1 ms, 0.5 ms more. Within
  // 4 MB: nothing.
  CHECK_THAT(sim::memory_reuse_seconds(chip, 1e6, 2e6, 1e9, true), WithinRel(1.5e-3, 1e-12));
  CHECK_THAT(sim::memory_reuse_seconds(chip, 1e6, 2e6, 1e9, false), WithinRel(0.5e-3, 1e-12));
  CHECK(sim::memory_reuse_seconds(chip, 1e6, 2e6, 3e6, true) == 0);
  // A pass the memory curve already prices at a fifth of the bandwidth (64 MB in play) takes 2.5 ms
  // for those 2 MB warm, slower than cold: nothing more.
  sim::DeviceProfile slow = chip;
  slow.memory_efficiency = sim::EfficiencyCurve{{{1e6, 1.0}, {64e6, 0.2}}};
  CHECK(sim::memory_reuse_seconds(slow, 1e6, 64e6, 1e9, true) == 0);
  // Without the figures, nothing.
  CHECK(sim::memory_reuse_seconds(reuse_profile().device("chip"), 1e6, 2e6, 1e9, true) == 0);
}

TEST_CASE("memory reuse: a memory-bound pass pays for its operands, not for a weight it reads as part of its bytes", "[sim][weight-reuse]") {
  // The walk of the matrix product's test: its output last touched 40 MB before the forward, its
  // output gradient 28 MB before the backward (the backward's operand 16 MB / 8 = 2,000,000 floats,
  // 8 MB), its weight gradient 8 MB before it.
  SECTION("with the weight figures only") {
    // Forward: the 4 MB output at half speed, 4 ms. Backward: the 8 MB operand at half speed, 8 ms;
    // the weight gradient the matrix product paid 4 ms / 3 for is the pass's own bytes: nothing.
    const std::vector<double> s = prices(memory_bound_layer(), reuse_profile());
    CHECK_THAT(s[0], WithinRel(4e-3, 1e-12));
    CHECK_THAT(s[1], WithinRel(8e-3, 1e-12));
  }
  SECTION("with the memory pass's figures") {
    // Forward: the 4 MB output written 40 MB after it was last touched: 8 MB at a quarter of 4 GB/s,
    // 8 ms, less 2 ms warm: 6 ms. Backward: the 8 MB operand read 28 MB after: 16 MB at half speed,
    // 8 ms, less 4 ms warm: 4 ms.
    const std::vector<double> s = prices(memory_bound_layer(), memory_reuse_profile());
    CHECK_THAT(s[0], WithinRel(6e-3, 1e-12));
    CHECK_THAT(s[1], WithinRel(4e-3, 1e-12));
    CHECK(s[2] == 0);
    // The memory pass's figures alone price the same: the weight figures play no part here.
    sim::Profile memory_only = memory_reuse_profile();
    memory_only.devices.at("chip").weight_reuse_bytes_per_s = 0;
    memory_only.devices.at("chip").weight_reuse_efficiency = {};
    CHECK(prices(memory_bound_layer(), memory_only) == s);
  }
  SECTION("a matrix product keeps the weight figures") {
    const std::vector<double> s = prices(one_layer(false), memory_reuse_profile());
    CHECK_THAT(s[1], WithinRel(4e-3 + 4e-3 / 3, 1e-12));
  }
}
