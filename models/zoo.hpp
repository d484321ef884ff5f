#pragma once
/// The model zoo: named presets (as data) for every builder, and the single entry point that turns a
/// name and a few options into a Graph.
///
/// Presets: the transformers (gpt2 … mixtral-8x7b), torchvision's ResNets and Wide-ResNets under
/// torchvision's names (resnet18, resnet34, resnet50, resnet101, resnet152, wide_resnet50_2,
/// wide_resnet101_2) and the seed's MNIST MLP (mlp-mnist: 784-512-512-10).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/graph.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"

namespace parasim::models {

/// Options that every preset accepts; unset ones keep the preset's own value. An option that does not
/// apply to the preset's family is an error, not silently ignored.
struct ModelOptions {
  std::int64_t batch = 1;
  std::optional<std::int64_t> seq_len;      ///< transformers
  std::optional<std::int64_t> image_size;   ///< CNNs (square images); MLPs (inputs = in_channels·image_size²)
  std::optional<std::int64_t> num_classes;  ///< CNNs and MLPs
  std::optional<std::int64_t> in_channels;  ///< CNNs and MLPs
  std::optional<DType> dtype;               ///< activation/weight dtype; preset default otherwise
  std::optional<AttentionKind> attention;   ///< transformers: fused (the default) or eager
  bool operator==(const ModelOptions&) const = default;
};

/// Every preset name, in a stable order: transformers, then CNNs, then MLPs.
[[nodiscard]] std::vector<std::string> model_names();

/// The preset of that name in one family, or nothing (also nothing for a name of another family).
[[nodiscard]] std::optional<TransformerConfig> transformer_preset(std::string_view name);
[[nodiscard]] std::optional<ResNetConfig> resnet_preset(std::string_view name);
[[nodiscard]] std::optional<MlpConfig> mlp_preset(std::string_view name);

/// Builds a preset. Throws InputError (naming `origin` as the file, or "<command line>", and the
/// pointer it is given) with "did you mean" when the name is unknown, or when an option is out of
/// range for the preset or does not apply to its family.
[[nodiscard]] Graph build_named_model(std::string_view name, const ModelOptions& options, const std::string& origin = {},
                                      const std::string& pointer = {});

}  // namespace parasim::models
