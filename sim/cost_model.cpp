#include "sim/cost_model.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "strategies/local_shape.hpp"

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

OpCost op_cost(const DeviceProfile& device, const models::Operator& op, const strategies::DeviceMesh& mesh,
               const strategies::OpSharding& sharding, models::DType precision) {
  using strategies::local_dim_size;
  using strategies::local_elements;
  OpCost c;
  if (op.kind == models::OpKind::Input) return c;
  const double points = strategies::local_points(mesh, sharding, op);
  c.fwd_flops = op.flops_per_point * points;
  c.bwd_flops = op.bwd_flops_factor * c.fwd_flops;

  // Bytes moved by the forward kernel(s): activation inputs, weights (an embedding reads only the rows
  // it looks up), and the output, in their local (sharded) sizes.
  double bytes = 0;
  for (const auto& in : op.inputs) bytes += local_elements(mesh, sharding, op, in) * static_cast<double>(models::bytes_of(in.dtype));
  const double out_bytes = local_elements(mesh, sharding, op, op.output) * static_cast<double>(models::bytes_of(op.output.dtype));
  if (op.kind == models::OpKind::Embedding) {
    bytes += out_bytes;
  } else {
    for (const auto& w : op.weights)
      bytes += local_elements(mesh, sharding, op, w.spec) * static_cast<double>(models::bytes_of(w.spec.dtype));
  }
  bytes += out_bytes;

  const models::OpClass cls = models::op_class(op.kind);
  double gemm_flops = 0;
  int gemms = 1;
  if (cls == models::OpClass::Gemm) {
    double size = 2;
    for (const auto* dims : {&op.gemm_batch, &op.gemm_m, &op.gemm_n, &op.gemm_k})
      for (const auto& d : *dims) size *= static_cast<double>(local_dim_size(mesh, sharding, op, d));
    gemm_flops = size;
    // Fused multi-GEMM operators (the MoE experts: gate, up, down) count one kernel per GEMM.
    gemms = std::max(1, static_cast<int>(c.fwd_flops / std::max(size, 1.0) + 0.5));
  }
  c.fwd_s = kernel_seconds(device, cls, precision, c.fwd_flops, bytes, gemm_flops, gemms);
  if (op.bwd_flops_factor > 0 || cls == models::OpClass::MemoryBound) {
    // Backward reads the output gradient and the saved inputs and writes the input gradients (and the
    // weight gradients): about twice the forward traffic. A GEMM's backward is two GEMMs of the
    // forward's size (data and weight gradient).
    const int bwd_kernels = cls == models::OpClass::Gemm ? gemms * std::max(1, static_cast<int>(op.bwd_flops_factor + 0.5)) : 1;
    c.bwd_s = kernel_seconds(device, cls, precision, c.bwd_flops, 2 * bytes, gemm_flops, bwd_kernels);
  }
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
