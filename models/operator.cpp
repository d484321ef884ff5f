#include "models/operator.hpp"

#include "common/error.hpp"

namespace parasim::models {
namespace {
struct KindName {
  OpKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {OpKind::Input, "input"},         {OpKind::Conv2d, "conv2d"},       {OpKind::BatchNorm, "batch_norm"},
    {OpKind::LayerNorm, "layer_norm"}, {OpKind::RMSNorm, "rms_norm"},    {OpKind::Activation, "activation"},
    {OpKind::Pool, "pool"},           {OpKind::Linear, "linear"},       {OpKind::Matmul, "matmul"},
    {OpKind::Softmax, "softmax"},     {OpKind::Embedding, "embedding"}, {OpKind::Add, "add"},
    {OpKind::Dropout, "dropout"},     {OpKind::MoERouter, "moe_router"}, {OpKind::MoEExperts, "moe_experts"},
    {OpKind::Loss, "loss"},           {OpKind::Cast, "cast"},           {OpKind::Attention, "attention"},
};
}  // namespace

std::string_view to_string(OpKind k) {
  for (const auto& kn : kKindNames)
    if (kn.kind == k) return kn.name;
  return "input";
}

const std::vector<std::string>& op_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& kn : kKindNames) v.emplace_back(kn.name);
    return v;
  }();
  return names;
}

bool op_kind_from_string(std::string_view s, OpKind& out) {
  for (const auto& kn : kKindNames) {
    if (s == kn.name) {
      out = kn.kind;
      return true;
    }
  }
  return false;
}

OpClass op_class(OpKind k) {
  switch (k) {
    case OpKind::Conv2d:
    case OpKind::Linear:
    case OpKind::Matmul:
    case OpKind::MoEExperts:
    case OpKind::MoERouter: return OpClass::Gemm;
    case OpKind::Attention: return OpClass::Attention;
    default: return OpClass::MemoryBound;
  }
}

const Dim* Operator::find_dim(std::string_view dim_name) const {
  for (const auto& d : dims)
    if (d.name == dim_name) return &d;
  for (const auto& d : extent_dims)
    if (d.name == dim_name) return &d;
  return nullptr;
}

std::int64_t Operator::dim_size(std::string_view dim_name) const {
  const Dim* d = find_dim(dim_name);
  PARASIM_CHECK(d != nullptr, "operator " + name + " has no dim " + std::string(dim_name));
  return d->size;
}

double Operator::points() const {
  double p = 1;
  for (const auto& d : dims) p *= static_cast<double>(d.size);
  return p;
}

double Operator::elements(const TensorSpec& t) const {
  double e = 1;
  for (const auto& d : t.dims) e *= static_cast<double>(dim_size(d));
  return e;
}

double Operator::fwd_bytes_read() const {
  double bytes = 0;
  for (const auto& in : inputs) bytes += elements(in) * static_cast<double>(bytes_of(in.dtype));
  if (kind == OpKind::Embedding) {
    bytes += elements(output) * static_cast<double>(bytes_of(output.dtype));
  } else {
    for (const auto& w : weights) bytes += elements(w.spec) * static_cast<double>(bytes_of(w.spec.dtype));
  }
  return bytes;
}

double Operator::fwd_bytes_written() const { return elements(output) * static_cast<double>(bytes_of(output.dtype)); }

std::int64_t Operator::param_count() const {
  std::int64_t n = 0;
  for (const auto& w : weights) {
    std::int64_t e = 1;
    for (const auto& d : w.spec.dims) e *= dim_size(d);
    n += e;
  }
  return n;
}

double Operator::saved_bytes() const {
  double bytes = 0;
  for (int slot : saved_inputs)
    bytes += elements(inputs.at(static_cast<std::size_t>(slot))) * static_cast<double>(bytes_of(inputs[slot].dtype));
  if (saved_output) bytes += fwd_bytes_written();
  bytes += saved_mask_bytes_per_element * elements(output);
  return bytes;
}

}  // namespace parasim::models
