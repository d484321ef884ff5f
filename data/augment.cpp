#include "data/augment.hpp"

#include <algorithm>
#include <cmath>

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
  // Bilinear, sampling at pixel centres (OpenCV's INTER_LINEAR convention).
  for (std::size_t oy = 0; oy < s; ++oy) {
    const float fy = std::clamp((static_cast<float>(oy) + 0.5f) * scale - 0.5f, 0.0f, static_cast<float>(crop - 1));
    const int iy = static_cast<int>(fy);
    const int iy1 = std::min(iy + 1, crop - 1);
    const float wy = fy - static_cast<float>(iy);
    for (std::size_t ox = 0; ox < s; ++ox) {
      const std::size_t tx = flip ? s - 1 - ox : ox;
      const float fx = std::clamp((static_cast<float>(tx) + 0.5f) * scale - 0.5f, 0.0f, static_cast<float>(crop - 1));
      const int ix = static_cast<int>(fx);
      const int ix1 = std::min(ix + 1, crop - 1);
      const float wx = fx - static_cast<float>(ix);
      auto px = [&](int x, int y, int c) {
        return static_cast<float>(image.rgb[(static_cast<std::size_t>(y0 + y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x0 + x)) * 3 +
                                            static_cast<std::size_t>(c)]);
      };
      for (int c = 0; c < 3; ++c) {
        const float v = (1 - wy) * ((1 - wx) * px(ix, iy, c) + wx * px(ix1, iy, c)) + wy * ((1 - wx) * px(ix, iy1, c) + wx * px(ix1, iy1, c));
        out[static_cast<std::size_t>(c) * s * s + oy * s + ox] = (v / 255.0f - kImageMean[c]) / kImageStd[c];
      }
    }
  }
}

}  // namespace parasim::data
