#pragma once
/// The loader's augmentation of one decoded image into the tensor a device receives: a random
/// crop of 7/8 of the shorter side, a random horizontal flip, a bilinear resize to the output side,
/// and torchvision's ImageNet normalisation, as fp32 channel by channel (C × S × S). Seeded per
/// sample and epoch, so a run gives the same tensors whatever the thread count.
#include <cstdint>

#include "data/dataset.hpp"

namespace parasim::data {

/// ImageNet's per-channel mean and standard deviation (torchvision's models' documentation,
/// "transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])").
inline constexpr float kImageMean[3] = {0.485f, 0.456f, 0.406f};
inline constexpr float kImageStd[3] = {0.229f, 0.224f, 0.225f};

/// A sample's seed in an epoch: SplitMix64 of the run's seed, the epoch and the sample (Steele et
/// al. 2014, "Fast splittable pseudorandom number generators").
[[nodiscard]] std::uint64_t sample_seed(std::uint64_t seed, std::int64_t epoch, std::int64_t sample);

/// Writes 3 × side × side floats to `out`. Precondition: the image has at least one pixel.
void augment(const Image& image, std::int64_t side, std::uint64_t seed, float* out);

}  // namespace parasim::data
