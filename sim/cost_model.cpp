#include "sim/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"

namespace parasim::sim {

std::optional<double> find_gemm_peak_flops(const DeviceProfile& device, models::DType dtype) {
  using models::DType;
  if (auto p = device.peak_for(dtype)) return p;
  if (dtype == DType::F16) return device.peak_for(DType::BF16);
  if (dtype == DType::BF16) return device.peak_for(DType::F16);
  if (dtype == DType::TF32) return device.peak_for(DType::F32);
  return std::nullopt;
}

double gemm_peak_flops(const DeviceProfile& device, models::DType dtype) {
  const auto peak = find_gemm_peak_flops(device, dtype);
  if (!peak) throw PlanError("the " + device.name + " profile gives no peak FLOP/s for " + std::string(models::to_string(dtype)));
  return *peak;
}

double streamed_seconds(double bandwidth_bytes_per_s, const EfficiencyCurve& efficiency, double moved, double in_play) {
  return moved / (bandwidth_bytes_per_s * efficiency.at(std::max(in_play, 1.0)));
}

namespace {

/// kernel_seconds with a GEMM's thin factor given.
double kernel_seconds_at(const DeviceProfile& device, models::OpClass cls, models::DType dtype, double flops, double bytes, double gemm_flops,
                         int kernels, double thin) {
  double compute_s = 0;
  if (flops > 0) {
    if (cls == models::OpClass::Gemm) {
      compute_s = flops / (gemm_peak_flops(device, dtype) * device.gemm_curve(dtype).at(std::max(gemm_flops, 1.0)) * thin);
    } else {
      // Element-wise arithmetic runs on the vector units at the fp32 peak.
      auto it = device.peak_flops_per_s.find(models::DType::F32);
      const double vector_peak = it != device.peak_flops_per_s.end() ? it->second : gemm_peak_flops(device, dtype);
      compute_s = flops / vector_peak;
    }
  }
  const double memory_s = bytes > 0 ? streamed_seconds(device.memory_bandwidth_bytes_per_s, device.memory_efficiency, bytes, bytes / kernels) : 0.0;
  return std::max(compute_s, memory_s) + kernels * device.kernel_launch_overhead_s;
}

/// A memory-bound kernel that moves `moved` bytes (read + written) while keeping `in_play` bytes in
/// use: the memory curve's speed at `in_play`.
double memory_pass_seconds(const DeviceProfile& device, double moved, double in_play) {
  return streamed_seconds(device.memory_bandwidth_bytes_per_s, device.memory_efficiency, moved, in_play) + device.kernel_launch_overhead_s;
}

}  // namespace

namespace {

/// The thin factor averaged over the orientations at a GEMM's smallest dim; 1 without a curve (or a dim).
double average_thin_factor(const DeviceProfile& device, double smallest) {
  return smallest > 0 && !device.gemm_thin_efficiency.points.empty() ? device.gemm_thin_efficiency.at(smallest) : 1.0;
}

}  // namespace

double kernel_seconds(const DeviceProfile& device, models::OpClass cls, models::DType dtype, double flops, double bytes, double gemm_flops,
                      int kernels, double gemm_min_dim) {
  // A thin GEMM (one of m, n, k small) reaches less of the peak than a square one of the same
  // FLOPs: its blocking wastes the register tile and its packing is amortised over fewer FLOPs.
  return kernel_seconds_at(device, cls, dtype, flops, bytes, gemm_flops, kernels, average_thin_factor(device, gemm_min_dim));
}

double patch_matrix_bytes(const DeviceProfile& device, const OpWork& w, bool backward) {
  if (!w.convolution || device.convolution != "im2col-gemm") return 0;
  const double patch_bytes = w.gemm_batch * w.gemm_m * w.gemm_k * static_cast<double>(models::bytes_of(w.dtype));
  return (backward ? 5 : 2) * patch_bytes;  // forward: im2col (2 passes); backward: im2col (2) and col2im (3)
}

double gemm_thin_factor(const DeviceProfile& device, double m, double n, double k) {
  const double smallest = std::min({m, n, k});
  if (!(smallest > 0)) return 1.0;
  const std::size_t dim = m == smallest ? 0 : n == smallest ? 1 : 2;
  if (!device.gemm_thin_efficiency_by_dim[dim].points.empty()) return device.gemm_thin_efficiency_by_dim[dim].at(smallest);
  return average_thin_factor(device, smallest);
}

double gemm_thin_backward_factor(const DeviceProfile& device, double m, double n, double k) {
  if (!device.gemm_thin_backward_efficiency.points.empty() && m > 0 && m <= std::min(n, k)) return device.gemm_thin_backward_efficiency.at(m);
  return average_thin_factor(device, std::min({m, n, k}));
}

double gemm_kernel_seconds(const DeviceProfile& device, models::DType dtype, double flops, double bytes, double gemm_flops, int kernels, double m,
                           double n, double k) {
  return kernel_seconds_at(device, models::OpClass::Gemm, dtype, flops, bytes, gemm_flops, kernels, gemm_thin_factor(device, m, n, k));
}

namespace {

/// The curves of implementation `kernel` (empty: the device's first listed) for `dtype`, fp16 and bf16
/// standing for each other.
std::vector<const AttentionEfficiency*> attention_curves(const DeviceProfile& device, const std::string& kernel, models::DType dtype) {
  using models::DType;
  std::vector<const AttentionEfficiency*> of_dtype;
  if (device.attention_efficiency.empty()) return of_dtype;
  const std::string& implementation = kernel.empty() ? device.attention_efficiency.front().implementation : kernel;
  for (DType t : {dtype, dtype == DType::F16 ? DType::BF16 : dtype == DType::BF16 ? DType::F16 : dtype}) {
    for (const auto& a : device.attention_efficiency)
      if (a.implementation == implementation && a.dtype == t) of_dtype.push_back(&a);
    if (!of_dtype.empty()) break;
  }
  return of_dtype;
}

}  // namespace

bool has_attention_curves(const DeviceProfile& device, const std::string& kernel, models::DType dtype) {
  return !attention_curves(device, kernel, dtype).empty();
}

std::optional<double> attention_efficiency(const DeviceProfile& device, const std::string& kernel, models::DType dtype, double head_dim,
                                           double seq, bool causal, bool backward) {
  const std::vector<const AttentionEfficiency*> of_dtype = attention_curves(device, kernel, dtype);
  if (of_dtype.empty()) return std::nullopt;
  std::vector<const AttentionEfficiency*> of_mask;
  for (const auto* a : of_dtype)
    if (a->causal == causal) of_mask.push_back(a);
  if (of_mask.empty()) of_mask = of_dtype;
  const AttentionEfficiency *below = nullptr, *above = nullptr;
  for (const auto* a : of_mask) {
    const auto d = static_cast<double>(a->head_dim);
    if (d <= head_dim && (!below || d > static_cast<double>(below->head_dim))) below = a;
    if (d >= head_dim && (!above || d < static_cast<double>(above->head_dim))) above = a;
  }
  auto read = [&](const AttentionEfficiency* a) { return (backward ? a->backward : a->forward).at(seq); };
  if (!below) return read(above);
  if (!above || below == above) return read(below);
  const double t = (std::log2(head_dim) - std::log2(static_cast<double>(below->head_dim))) /
                   (std::log2(static_cast<double>(above->head_dim)) - std::log2(static_cast<double>(below->head_dim)));
  return read(below) + t * (read(above) - read(below));
}

namespace {

/// A fused attention kernel: its executed FLOPs at the attention curve's efficiency, or, on a device
/// with no such curve, at the GEMM curve's for the size of its two matmuls (as eager attention runs them).
double attention_seconds(const DeviceProfile& device, const OpWork& w, double flops, double bytes, bool backward) {
  const auto eff = attention_efficiency(device, w.attention_kernel, w.dtype, w.gemm_k, w.gemm_n, w.causal, backward);
  const double compute_s = flops / (gemm_peak_flops(device, w.dtype) * (eff ? *eff : device.gemm_curve(w.dtype).at(std::max(w.gemm_flops, 1.0))));
  const double memory_s = bytes > 0 ? bytes / (device.memory_bandwidth_bytes_per_s * device.memory_efficiency.at(bytes)) : 0.0;
  return std::max(compute_s, memory_s) + device.kernel_launch_overhead_s;
}

}  // namespace

OpCost op_cost(const DeviceProfile& device, const OpWork& w) {
  OpCost c;
  if (w.is_input) return c;
  if (w.cls == models::OpClass::Attention) {
    c.fwd_s = attention_seconds(device, w, w.fwd_flops, w.bytes, false);
    // Backward reads Q, K, V, the output and its gradient and writes three gradients: about twice the
    // forward's traffic, as for every operator here.
    c.bwd_s = attention_seconds(device, w, w.bwd_flops, w.bwd_bytes, true);
    return c;
  }
  double fwd_flops = w.fwd_flops, bwd_flops = w.bwd_flops;
  double patch_fwd_s = 0, patch_bwd_s = 0;
  if (w.convolution && device.convolution == "winograd" && w.winograd_shape && w.dtype == models::DType::F32) {
    // A 3×3, stride-1 convolution in fp32 runs as a Winograd convolution, cuDNN's and oneDNN's choice
    // where no tensor core takes fp32 (tf32, fp16 and bf16 run implicit GEMMs on tensor cores):
    // F(2×2, 3×3) computes a 2×2 output tile with 16 multiplications where the direct form takes 36
    // (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016, §4), 2.25× fewer —
    // the least of cuDNN's tile sizes; Baidu's DeepBench measured fp32 3×3 convolutions on V100 at an
    // "effective" 21–37 TFLOP/s, above the 15.7 TFLOP/s peak (results/train/DeepBench_NV_V100.xlsx).
    constexpr double kWinogradMultiplyReduction = 36.0 / 16.0;
    fwd_flops /= kWinogradMultiplyReduction;
    bwd_flops /= kWinogradMultiplyReduction;
  } else if (w.convolution && device.convolution == "im2col-gemm") {
    // Every convolution as its direct FLOPs in one GEMM over an explicit patch matrix of batch·m·k
    // elements (Chellapilla et al., "High Performance Convolutional Neural Networks for Document
    // Processing", 2006; Caffe's im2col), in bytes moved as the memory curve counts them (read +
    // written): forward, im2col reads the image's patches and writes them (two passes of the patch
    // matrix's bytes); backward, im2col again for the weight gradient, then col2im reads the data
    // gradient's patch matrix and adds it into the image (read and written): three passes.
    // Each kernel runs at the memory curve's speed for the bytes it keeps in play, the patch matrix
    // and the image (1/window of it), not for the bytes it moves: im2col reads each image element
    // up to `window` times, from the cache after the first. (The curve's stream passes move each
    // byte of their buffers once, so for them the two are the same.)
    const double patch_bytes = patch_matrix_bytes(device, w, false) / 2;
    const double in_play = patch_bytes * (1 + 1 / std::max(1.0, w.conv_window));
    const double im2col_s = memory_pass_seconds(device, 2 * patch_bytes, in_play),
                 col2im_s = memory_pass_seconds(device, patch_matrix_bytes(device, w, true) - 2 * patch_bytes, in_play);
    patch_fwd_s = im2col_s;
    patch_bwd_s = im2col_s + col2im_s;
  }
  // The forward's GEMMs are untransposed (exec/kernels.cpp): their own orientation's thin factor. The
  // backward's two (dX = dY·Wᵀ, dW = Xᵀ·dY) transpose an operand each: gemm_thin_backward_factor.
  c.fwd_s = (w.cls == models::OpClass::Gemm ? gemm_kernel_seconds(device, w.dtype, fwd_flops, w.bytes, w.gemm_flops, w.gemms, w.gemm_m, w.gemm_n, w.gemm_k)
                                            : kernel_seconds(device, w.cls, w.dtype, fwd_flops, w.bytes, w.gemm_flops, w.gemms)) +
            patch_fwd_s;
  // A softmax's or cross-entropy's exponentials at the device's measured softmax rate, where it has
  // one (a CPU's, far below its fp32 peak); the backward has none.
  if (w.exponential && device.softmax_flops_per_s > 0)
    c.fwd_s = std::max(c.fwd_s, w.fwd_flops / device.softmax_flops_per_s + w.gemms * device.kernel_launch_overhead_s);
  // fp8 GEMMs: the casts to fp8 run as their own memory-bound kernels.
  if (w.quantize_fwd_bytes > 0)
    c.fwd_s += kernel_seconds(device, models::OpClass::MemoryBound, models::DType::BF16, 0, w.quantize_fwd_bytes, 0, 1);
  // Backward reads the output gradient and the saved inputs and writes the input gradients (and the
  // weight gradients): about twice the forward traffic, at the backward pair's thin factor.
  if (w.has_backward)
    c.bwd_s = (w.cls == models::OpClass::Gemm
                   ? kernel_seconds_at(device, w.cls, w.dtype, bwd_flops, w.bwd_bytes, w.gemm_flops, w.bwd_kernels,
                                       gemm_thin_backward_factor(device, w.gemm_m, w.gemm_n, w.gemm_k))
                   : kernel_seconds(device, w.cls, w.dtype, bwd_flops, w.bwd_bytes, w.gemm_flops, w.bwd_kernels)) +
              patch_bwd_s;
  if (w.quantize_bwd_bytes > 0)
    c.bwd_s += kernel_seconds(device, models::OpClass::MemoryBound, models::DType::BF16, 0, w.quantize_bwd_bytes, 0, 1);
  return c;
}

double optimizer_bytes_per_parameter(strategies::Optimizer optimizer, models::DType precision, models::DType grad_dtype) {
  const bool mixed = models::mixed_precision(precision);
  const double grad = static_cast<double>(models::bytes_of(grad_dtype));
  const double weights_out = mixed ? 2 : 0;  // the fp16/bf16 copy written back
  switch (optimizer) {
    case strategies::Optimizer::Adam:
    case strategies::Optimizer::AdamW: return grad + 12 + 12 + weights_out;  // read master, m, v; write them back
    case strategies::Optimizer::SGDMomentum: return grad + 8 + 8 + weights_out;
    case strategies::Optimizer::SGD: return grad + 4 + 4 + weights_out;
    case strategies::Optimizer::Adafactor: return grad + 8 + 8 + weights_out;  // master + factored moments (≈ 1 state)
  }
  return 28;
}

}  // namespace parasim::sim
