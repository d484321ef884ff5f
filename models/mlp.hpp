#pragma once
/// Multi-layer perceptrons as in the seed's JAX MNIST example: for each pair of consecutive layer
/// sizes a linear layer with bias, ReLU after every one but the last, then log-softmax and the
/// negative log-likelihood of the label (a softmax cross-entropy).
///
/// Dim names: b batch, i input features, o output features (of each linear layer), o again for the
/// classes at the loss. Layers: one per linear layer ("fc.0", "fc.1", ...); the input sits in the
/// first, the loss in the last.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/graph.hpp"

namespace parasim::models {

struct MlpConfig {
  std::string name = "mlp";
  /// Features per layer, input first and classes last: [784, 512, 512, 10] has three linear layers.
  std::vector<std::int64_t> sizes{784, 512, 512, 10};
  std::int64_t batch = 1;
  DType dtype = DType::F32;  ///< the JAX example trains in fp32

  bool operator==(const MlpConfig&) const = default;
};

/// Largest layer size accepted (inclusive).
inline constexpr std::int64_t kMaxMlpWidth = 1LL << 24;

/// The first problem with a config, naming the field, or nothing.
[[nodiscard]] std::optional<std::string> validate(const MlpConfig& c);

/// Builds the training graph of one batch. Precondition: validate(c) found nothing.
[[nodiscard]] Graph build_mlp(const MlpConfig& c);

}  // namespace parasim::models
