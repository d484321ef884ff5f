#pragma once
/// The model zoo: named presets (as data) for every builder, and the single entry point that turns a
/// name and a few options into a Graph.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/graph.hpp"
#include "models/transformer.hpp"

namespace parasim::models {

/// Options that every preset accepts; unset ones keep the preset's own value.
struct ModelOptions {
  std::int64_t batch = 1;
  std::optional<std::int64_t> seq_len;      ///< transformers
  std::optional<std::int64_t> image_size;   ///< CNNs (square images)
  std::optional<std::int64_t> num_classes;  ///< CNNs and MLPs
  std::optional<std::int64_t> in_channels;  ///< CNNs
  std::optional<DType> dtype;               ///< activation/weight dtype; preset default otherwise
  bool operator==(const ModelOptions&) const = default;
};

/// Every preset name, in a stable order.
[[nodiscard]] std::vector<std::string> model_names();

/// The transformer preset of that name, or nothing (also nothing for a CNN or MLP name).
[[nodiscard]] std::optional<TransformerConfig> transformer_preset(std::string_view name);

/// Builds a preset. Throws InputError (naming `origin` as the file, or "<command line>", and the
/// pointer it is given) with "did you mean" when the name is unknown, or when an option is out of
/// range for the preset.
[[nodiscard]] Graph build_named_model(std::string_view name, const ModelOptions& options, const std::string& origin = {},
                                      const std::string& pointer = {});

}  // namespace parasim::models
