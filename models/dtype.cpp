#include "models/dtype.hpp"

namespace parasim::models {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::F32: return "fp32";
    case DType::TF32: return "tf32";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
    case DType::FP8: return "fp8";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::U8: return "uint8";
  }
  return "fp32";
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names{"fp32", "tf32", "fp16", "bf16", "fp8", "int32", "int64", "uint8"};
  return names;
}

std::optional<DType> dtype_from_string(std::string_view s) {
  for (DType t : {DType::F32, DType::TF32, DType::F16, DType::BF16, DType::FP8, DType::I32, DType::I64, DType::U8})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

}  // namespace parasim::models
