#include "sim/work/op_work.hpp"

#include "models/ops.hpp"

#include <algorithm>

#include "strategies/local_shape.hpp"

namespace parasim::sim {

models::DType compute_dtype(const models::Operator& op, models::DType precision) {
  if (precision != models::DType::FP8) return precision;
  return models::fp8_gemm(op.kind) ? models::DType::FP8 : models::DType::BF16;
}

namespace {

/// A 3×3 kernel at stride 1: the output keeps the input's height and width (padding 1).
bool winograd_shape(const models::Operator& op) {
  const auto size = [&](const char* d) -> std::int64_t {
    const models::Dim* dim = op.find_dim(d);
    return dim ? dim->size : -1;
  };
  return size("kh") == 3 && size("kw") == 3 && size("ih") == size("oh") && size("iw") == size("ow") && size("oh") > 0;
}

}  // namespace

OpWork op_work(const models::Operator& op, const strategies::DeviceMesh& mesh, const strategies::OpSharding& sharding,
               models::DType precision, std::int64_t micro_batches, double expert_imbalance) {
  using strategies::local_dim_size;
  using strategies::local_elements;
  OpWork w;
  w.dtype = compute_dtype(op, precision);
  // Token routing (MoE dispatch and combine) gathers and weights tokens: memory-bound, although its kind
  // (MoERouter) is the router's, a GEMM. Timed as a GEMM with no GEMM dims it would be one kernel
  // launch per 2 FLOPs.
  w.cls = op.routing ? models::OpClass::MemoryBound : models::op_class(op.kind);
  w.exponential = op.kind == models::OpKind::Softmax || op.kind == models::OpKind::Loss;
  if (op.kind == models::OpKind::Input) {
    w.is_input = true;
    return w;
  }
  // The busiest expert-parallel rank's routed experts see `load` times the balanced tokens.
  const double load = op.kind == models::OpKind::MoEExperts ? expert_imbalance : 1.0;
  const double points = strategies::local_points(mesh, sharding, op) * load;
  w.fwd_flops = op.flops_per_point * points;
  w.bwd_flops = op.bwd_flops_factor * w.fwd_flops;
  w.convolution = op.kind == models::OpKind::Conv2d;
  w.winograd_shape = w.convolution && winograd_shape(op);
  if (w.convolution) {
    const auto size = [&](std::string_view dim) { const models::Dim* d = op.find_dim(dim); return d ? d->size : std::int64_t{1}; };
    w.conv_window = static_cast<double>(std::max<std::int64_t>(1, size("kh") * size("kw")));
  }

  double bytes = 0;
  for (const auto& in : op.inputs) bytes += local_elements(mesh, sharding, op, in) * static_cast<double>(models::bytes_of(in.dtype)) * load;
  const double out_bytes = local_elements(mesh, sharding, op, op.output) * static_cast<double>(models::bytes_of(op.output.dtype)) * load;
  if (op.kind == models::OpKind::Embedding) {
    bytes += out_bytes;
  } else {
    for (const auto& wt : op.weights)
      bytes += local_elements(mesh, sharding, op, wt.spec) * static_cast<double>(models::bytes_of(wt.spec.dtype));
  }
  bytes += out_bytes;
  w.bytes = bytes;
  w.bwd_bytes = op.kind == models::OpKind::Cast ? bytes : 2 * bytes;
  if (op.kind == models::OpKind::Loss && op.variant == models::ops::kVocabParallelCrossEntropy) {
    const double logits = bytes - out_bytes;
    w.bytes = models::ops::kVocabParallelCrossEntropyFwdPasses * logits + out_bytes;
    w.bwd_bytes = models::ops::kVocabParallelCrossEntropyBwdPasses * logits;
  }

  if (w.cls == models::OpClass::Gemm || w.cls == models::OpClass::Attention) {
    auto extent = [&](const std::vector<std::string>& dims) {
      double e = 1;
      for (const auto& d : dims) e *= static_cast<double>(local_dim_size(mesh, sharding, op, d));
      return e;
    };
    double size = 2;
    for (const auto* dims : {&op.gemm_batch, &op.gemm_m, &op.gemm_n, &op.gemm_k})
      for (const auto& d : *dims) size *= static_cast<double>(local_dim_size(mesh, sharding, op, d));
    size *= load;  // an expert's GEMMs grow along m, its tokens
    w.gemm_batch = extent(op.gemm_batch);
    w.gemm_m = extent(op.gemm_m) * load;
    w.gemm_n = extent(op.gemm_n);
    w.gemm_k = extent(op.gemm_k);
    w.gemm_flops = size;
    w.causal = w.cls == models::OpClass::Attention && op.variant == "causal";
    // Fused multi-GEMM operators (the MoE experts: gate, up, down) count one kernel per GEMM.
    w.gemms = std::max(1, static_cast<int>(w.fwd_flops / std::max(size, 1.0) + 0.5));
  }
  w.has_backward = op.bwd_flops_factor > 0 || w.cls == models::OpClass::MemoryBound;
  // A GEMM's backward is two GEMMs of the forward's size (data and weight gradient).
  if (w.cls == models::OpClass::Attention) w.gemms = 1;  // one kernel however many matmuls it fuses
  w.bwd_kernels = w.cls == models::OpClass::Gemm ? w.gemms * std::max(1, static_cast<int>(op.bwd_flops_factor + 0.5)) : 1;
  w.weights = static_cast<int>(op.weights.size());
  for (const auto& wt : op.weights) w.weight_elements += local_elements(mesh, sharding, op, wt.spec);
  if (w.dtype == models::DType::FP8) {
    // Each cast reads the bf16 tensor (2 B) and writes its fp8 copy twice, row-wise and transposed
    // (1 + 1 B): Hopper's fp8 GEMMs take only the TN layout, so the weight-gradient and data-gradient
    // GEMMs need the transposed copies (TE docs, "Performance considerations"): 4 B per element.
    double inputs = 0;
    for (const auto& in : op.inputs) inputs += local_elements(mesh, sharding, op, in) * load;
    const double outputs = local_elements(mesh, sharding, op, op.output) * load;
    w.quantize_fwd_bytes = 4 * inputs + 4 * w.weight_elements / static_cast<double>(std::max<std::int64_t>(micro_batches, 1));
    w.quantize_bwd_bytes = 4 * outputs;
  }
  return w;
}

}  // namespace parasim::sim
