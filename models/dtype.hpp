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

/// "fp32", "tf32", "fp16", "bf16", "fp8", "int32", "int64", "uint8".
[[nodiscard]] std::string_view to_string(DType t);
[[nodiscard]] std::optional<DType> dtype_from_string(std::string_view s);
[[nodiscard]] const std::vector<std::string>& dtype_names();

}  // namespace parasim::models
