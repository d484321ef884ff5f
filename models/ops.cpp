#include "models/ops.hpp"

namespace parasim::models::ops {

Dim dim(std::string name, std::int64_t size, bool splittable) { return Dim{std::move(name), size, splittable}; }

std::vector<std::string> names(const std::vector<Dim>& dims) {
  std::vector<std::string> out;
  out.reserve(dims.size());
  for (const auto& d : dims) out.push_back(d.name);
  return out;
}

Operator make(std::string name, OpKind kind, std::vector<Dim> dims, std::vector<std::vector<std::string>> inputs,
              std::vector<std::string> output, DType dtype) {
  Operator o;
  o.name = std::move(name);
  o.kind = kind;
  o.dims = std::move(dims);
  for (auto& in : inputs) o.inputs.push_back(TensorSpec{std::move(in), dtype});
  o.output = TensorSpec{std::move(output), dtype};
  return o;
}

Operator linear(std::string name, const std::vector<Dim>& batch, const std::vector<Dim>& in, const std::vector<Dim>& out, bool bias,
                DType dtype, std::string weight_name) {
  std::vector<Dim> dims = batch;
  dims.insert(dims.end(), in.begin(), in.end());
  dims.insert(dims.end(), out.begin(), out.end());
  const auto bn = names(batch), kn = names(in), nn = names(out);
  std::vector<std::string> x = bn, y = bn, w = kn;
  x.insert(x.end(), kn.begin(), kn.end());
  y.insert(y.end(), nn.begin(), nn.end());
  w.insert(w.end(), nn.begin(), nn.end());
  Operator o = make(name, OpKind::Linear, std::move(dims), {x}, y, dtype);
  o.weights.push_back(Weight{weight_name.empty() ? name + ".weight" : std::move(weight_name), TensorSpec{w, dtype}});
  if (bias) o.weights.push_back(Weight{name + ".bias", TensorSpec{nn, dtype}});
  o.gemm_m = bn;
  o.gemm_k = kn;
  o.gemm_n = nn;
  o.flops_per_point = 2;
  o.bwd_flops_factor = 2;
  o.saved_inputs = {0};
  return o;
}

Operator cast_to_fp32(std::string name, const std::vector<Dim>& dims, DType from) {
  Operator o = make(std::move(name), OpKind::Cast, dims, {names(dims)}, names(dims), from);
  o.output.dtype = DType::F32;
  o.flops_per_point = 0;
  o.bwd_flops_factor = 0;  // the gradient is cast back: traffic, no arithmetic
  return o;
}

Operator loss(std::string name, const std::vector<Dim>& batch, const Dim& classes, DType dtype) {
  std::vector<Dim> dims = batch;
  dims.push_back(classes);
  std::vector<std::string> logits = names(batch);
  logits.push_back(classes.name);
  Operator o = make(std::move(name), OpKind::Loss, std::move(dims), {logits}, names(batch), dtype);
  o.output.dtype = DType::F32;
  o.flops_per_point = kLossFlops;
  o.bwd_flops_factor = 1;
  o.saved_inputs = {0};
  return o;
}

}  // namespace parasim::models::ops
