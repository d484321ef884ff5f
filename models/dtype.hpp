#pragma once
/// Element types of tensors and their sizes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::models {

enum class DType { F32, TF32, F16, BF16, FP8, I32, I64, U8 };

/// Bytes per element.
[[nodiscard]] constexpr std::int64_t bytes_of(DType t) {
  switch (t) {
    case DType::F32: case DType::TF32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::FP8: case DType::U8: return 1;
    case DType::I64: return 8;
  }
  return 4;
}

/// Whether training in `precision` is mixed precision: 16-bit (or fp8 GEMMs over bf16) weights and
/// gradients beside fp32 master weights in the optimizer. fp32 and tf32 training are not: tf32 is a
/// tensor-core math mode over fp32 tensors (PyTorch's allow_tf32; NVIDIA's A100 whitepaper, "TF32"),
/// so its weights and gradients are fp32 and the optimizer updates them in place.
[[nodiscard]] constexpr bool mixed_precision(DType precision) {
  return precision == DType::F16 || precision == DType::BF16 || precision == DType::FP8;
}

/// The dtype a training run in `precision` keeps its weights in (fp8 training's are bf16).
[[nodiscard]] constexpr DType weight_dtype(DType precision) {
  return mixed_precision(precision) ? (precision == DType::F16 ? DType::F16 : DType::BF16) : DType::F32;
}

/// "fp32", "tf32", "fp16", "bf16", "fp8", "int32", "int64", "uint8".
[[nodiscard]] std::string_view to_string(DType t);
[[nodiscard]] std::optional<DType> dtype_from_string(std::string_view s);
[[nodiscard]] const std::vector<std::string>& dtype_names();

}  // namespace parasim::models
