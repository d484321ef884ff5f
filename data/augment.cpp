#include "data/augment.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"

namespace parasim::data {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t sample_seed(std::uint64_t seed, std::int64_t epoch, std::int64_t sample) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(epoch)) ^ static_cast<std::uint64_t>(sample));
}

void augment(const Image& image, std::int64_t side, std::uint64_t seed, float* out) {
  PARASIM_CHECK(image.width > 0 && image.height > 0 && side > 0, "an image to augment");
  const std::uint64_t r1 = splitmix64(seed), r2 = splitmix64(r1), r3 = splitmix64(r2);
  // The crop: a square of 7/8 of the shorter side at a random place, flipped half the time.
  const int crop = std::max(1, std::min(image.width, image.height) * 7 / 8);
  const int x0 = static_cast<int>(r1 % static_cast<std::uint64_t>(image.width - crop + 1));
  const int y0 = static_cast<int>(r2 % static_cast<std::uint64_t>(image.height - crop + 1));
  const bool flip = (r3 & 1) != 0;
  const auto s = static_cast<std::size_t>(side);
  const float scale = static_cast<float>(crop) / static_cast<float>(side);
  // Bilinear, sampling at pixel centres (OpenCV's INTER_LINEAR convention). The columns' source
  // pixels and weights are the same on every row: found once. Each channel's plane is written in
  // order, a row at a time.
  struct Column {
    std::size_t left = 0, right = 0;  ///< byte offsets in a source row
    float weight = 0;                 ///< of the right pixel
  };
  thread_local std::vector<Column> columns;
  columns.resize(s);
  for (std::size_t ox = 0; ox < s; ++ox) {
    const std::size_t tx = flip ? s - 1 - ox : ox;
    const float fx = std::clamp((static_cast<float>(tx) + 0.5f) * scale - 0.5f, 0.0f, static_cast<float>(crop - 1));
    const int ix = static_cast<int>(fx);
    columns[ox] = {static_cast<std::size_t>(x0 + ix) * 3, static_cast<std::size_t>(x0 + std::min(ix + 1, crop - 1)) * 3, fx - static_cast<float>(ix)};
  }
  const auto row_bytes = static_cast<std::size_t>(image.width) * 3;
  for (std::size_t oy = 0; oy < s; ++oy) {
    const float fy = std::clamp((static_cast<float>(oy) + 0.5f) * scale - 0.5f, 0.0f, static_cast<float>(crop - 1));
    const int iy = static_cast<int>(fy);
    const float wy = fy - static_cast<float>(iy);
    const std::uint8_t* top = image.rgb.data() + static_cast<std::size_t>(y0 + iy) * row_bytes;
    const std::uint8_t* bottom = image.rgb.data() + static_cast<std::size_t>(y0 + std::min(iy + 1, crop - 1)) * row_bytes;
    for (std::size_t c = 0; c < 3; ++c) {
      // (v / 255 − mean) / std as one multiply and add.
      const float gain = 1.0f / (255.0f * kImageStd[c]), offset = -kImageMean[c] / kImageStd[c];
      float* row = out + c * s * s + oy * s;
      for (std::size_t ox = 0; ox < s; ++ox) {
        const Column& k = columns[ox];
        const float upper = static_cast<float>(top[k.left + c]) + k.weight * static_cast<float>(top[k.right + c] - top[k.left + c]);
        const float lower = static_cast<float>(bottom[k.left + c]) + k.weight * static_cast<float>(bottom[k.right + c] - bottom[k.left + c]);
        row[ox] = (upper + wy * (lower - upper)) * gain + offset;
      }
    }
  }
}

}  // namespace parasim::data
