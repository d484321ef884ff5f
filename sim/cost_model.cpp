#include "sim/cost_model.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace parasim::sim {

double gemm_peak_flops(const DeviceProfile& device, models::DType dtype) {
  using models::DType;
  auto find = [&](DType t) -> double {
    auto it = device.peak_flops_per_s.find(t);
    return it == device.peak_flops_per_s.end() ? 0.0 : it->second;
  };
  double peak = find(dtype);
  if (peak == 0 && dtype == DType::F16) peak = find(DType::BF16);
  if (peak == 0 && dtype == DType::BF16) peak = find(DType::F16);
  if (peak == 0 && dtype == DType::TF32) peak = find(DType::F32);
  if (peak == 0) throw PlanError("the " + device.name + " profile gives no peak FLOP/s for " + std::string(models::to_string(dtype)));
  return peak;
}

double kernel_seconds(const DeviceProfile& device, models::OpClass cls, models::DType dtype, double flops, double bytes, double gemm_flops,
                      int kernels) {
  double compute_s = 0;
  if (flops > 0) {
    if (cls == models::OpClass::Gemm) {
      compute_s = flops / (gemm_peak_flops(device, dtype) * device.gemm_efficiency.at(std::max(gemm_flops, 1.0)));
    } else {
      // Element-wise arithmetic runs on the vector units at the fp32 peak.
      auto it = device.peak_flops_per_s.find(models::DType::F32);
      const double vector_peak = it != device.peak_flops_per_s.end() ? it->second : gemm_peak_flops(device, dtype);
      compute_s = flops / vector_peak;
    }
  }
  const double memory_s =
      bytes > 0 ? bytes / (device.memory_bandwidth_bytes_per_s * device.memory_efficiency.at(std::max(bytes / kernels, 1.0))) : 0.0;
  return std::max(compute_s, memory_s) + kernels * device.kernel_launch_overhead_s;
}

OpCost op_cost(const DeviceProfile& device, const OpWork& w) {
  OpCost c;
  if (w.is_input) return c;
  c.fwd_s = kernel_seconds(device, w.cls, w.dtype, w.fwd_flops, w.bytes, w.gemm_flops, w.gemms);
  // Backward reads the output gradient and the saved inputs and writes the input gradients (and the
  // weight gradients): about twice the forward traffic.
  if (w.has_backward) c.bwd_s = kernel_seconds(device, w.cls, w.dtype, w.bwd_flops, 2 * w.bytes, w.gemm_flops, w.bwd_kernels);
  return c;
}

double optimizer_bytes_per_parameter(strategies::Optimizer optimizer, models::DType precision) {
  const bool mixed = precision != models::DType::F32;
  const double grad = mixed ? 2 : 4;
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
