#pragma once
/// ResNet and Wide-ResNet graphs as torchvision builds them (torchvision.models.resnet: BasicBlock and
/// Bottleneck, the "v1.5" Bottleneck with its stride on the 3×3 convolution, a 1×1 convolution + batch
/// norm on the shortcut where the shape changes, convolutions without bias, batch-norm weight and bias
/// as parameters and running statistics as buffers). Parameter counts equal torchvision's. Any square
/// image size works: convolution and pooling outputs follow PyTorch's ⌊(H + 2·pad − kernel)/stride⌋ + 1.
///
/// Dim names (the plans in strategies/ shard by these): b batch (every graph's batch dim);
///   conv2d: co output channels, oh/ow output rows and columns, ci input channels, kh/kw the kernel
///     window (not splittable), ih/iw the input rows and columns where the window is not one-to-one
///     (extent dims);
///   batch norm, ReLU, residual add: c channels, hh/ww rows and columns (a norm's reduced hh/ww are not
///     splittable; b is, with per-replica batch statistics as PyTorch DDP without SyncBatchNorm);
///   max pool: c, oh, ow, kh, kw and the extent dims ih, iw;
///   head: c features (pooled channels), o classes.
/// Layers: "stem" (input, conv1, bn1, relu, maxpool), one per residual block ("layer1.0", ...,
/// "layer4.2"), "head" (adaptive average pool, fc, loss), so pipeline stages can be cut at blocks.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "models/graph.hpp"

namespace parasim::models {

enum class ResNetBlock { Basic, Bottleneck };

struct ResNetConfig {
  std::string name = "resnet50";
  ResNetBlock block = ResNetBlock::Bottleneck;
  std::array<std::int64_t, 4> blocks{3, 4, 6, 3};  ///< residual blocks in layer1 … layer4
  /// torchvision's width_per_group: a Bottleneck's inner width is planes·width_per_group/64; 128 for
  /// Wide ResNet-*-2. BasicBlock supports only 64, as in torchvision.
  std::int64_t width_per_group = 64;
  std::int64_t image_size = 224;  ///< pixels per side of a square image
  std::int64_t in_channels = 3;
  std::int64_t num_classes = 1000;
  std::int64_t batch = 1;
  DType dtype = DType::F16;  ///< activations and weights (mixed-precision training)

  bool operator==(const ResNetConfig&) const = default;
};

/// Limits of the options (inclusive): sizes beyond these describe no real model and would only risk
/// overflowing the counts.
inline constexpr std::int64_t kMaxImageSize = 65536, kMaxChannels = 65536, kMaxClasses = 1LL << 31;

/// The first problem with a config, naming the field ("image_size must be between 1 and 65536, found
/// 0"), or nothing.
[[nodiscard]] std::optional<std::string> validate(const ResNetConfig& c);

/// Builds the training graph of one batch. Precondition: validate(c) found nothing.
[[nodiscard]] Graph build_resnet(const ResNetConfig& c);

}  // namespace parasim::models
