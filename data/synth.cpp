#include "data/synth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "data/augment.hpp"

namespace parasim::data {
namespace {

namespace fs = std::filesystem;

InputError write_error(const std::string& path, const std::string& why) { return InputError(path, 0, 0, "", "cannot write it: " + why); }

double uniform(std::uint64_t& state) {
  state = sample_seed(state, 0, 0);
  return static_cast<double>(state >> 11) * 0x1.0p-53;
}

/// Writes `bytes` to `path` through a temporary name beside it.
void write_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw write_error(tmp, "cannot create it");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw write_error(tmp, "a write failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw write_error(path, ec.message());
}

}  // namespace

Image synthetic_image(std::int64_t image_size, std::uint64_t seed, std::int64_t i) {
  std::uint64_t state = sample_seed(seed, -1, i);
  const double angle = uniform(state) * 6.283185307179586, frequency = 0.05 + 0.3 * uniform(state);
  double colour[3], phase[3];
  for (int c = 0; c < 3; ++c) {
    colour[c] = 40 + 80 * uniform(state);
    phase[c] = uniform(state) * 6.283185307179586;
  }
  Image img;
  img.width = img.height = static_cast<int>(image_size);
  img.rgb.resize(static_cast<std::size_t>(image_size * image_size * 3));
  const double ca = std::cos(angle), sa = std::sin(angle);
  for (std::int64_t y = 0; y < image_size; ++y)
    for (std::int64_t x = 0; x < image_size; ++x) {
      const double t = frequency * (ca * static_cast<double>(x) + sa * static_cast<double>(y));
      for (int c = 0; c < 3; ++c) {
        const double v = 128 + colour[c] * std::sin(t + phase[c]) + 24 * (uniform(state) - 0.5);
        img.rgb[static_cast<std::size_t>((y * image_size + x) * 3 + c)] = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  return img;
}

SynthResult synthesize(const std::string& dir, const SynthOptions& o) {
  PARASIM_CHECK(o.samples >= 1 && o.image_size >= 1 && o.classes >= 1 && o.classes <= 256 && o.samples_per_shard >= 1, "checked synth options");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw write_error(dir, ec.message());
  SynthResult result;
  auto label_of = [&](std::int64_t i) { return i % o.classes; };
  if (o.format == DatasetFormat::CifarBin) {
    // CIFAR-100's record: coarse label, fine label, then the red, green and blue planes.
    const auto s = static_cast<std::size_t>(o.image_size), plane = s * s;
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(o.samples) * (2 + 3 * plane));
    for (std::int64_t i = 0; i < o.samples; ++i) {
      const Image img = synthetic_image(o.image_size, o.seed, i);
      bytes.push_back(static_cast<char>(label_of(i) / 5));
      bytes.push_back(static_cast<char>(label_of(i)));
      for (std::size_t c = 0; c < 3; ++c)
        for (std::size_t p = 0; p < plane; ++p) bytes.push_back(static_cast<char>(img.rgb[p * 3 + c]));
    }
    const std::string path = (fs::path(dir) / "train.bin").string();
    write_file(path, bytes);
    result.files.push_back(path);
    result.bytes += static_cast<double>(bytes.size());
  } else {
    const CodecPlugin& codec = codec_plugin();
    for (std::int64_t first = 0, shard = 0; first < o.samples; first += o.samples_per_shard, ++shard) {
      const std::int64_t end = std::min(o.samples, first + o.samples_per_shard);
      std::vector<std::vector<unsigned char>> jpegs;
      std::vector<std::string> labels, names;
      for (std::int64_t i = first; i < end; ++i) {
        const Image img = synthetic_image(o.image_size, o.seed, i);
        std::string why;
        auto& jpeg = jpegs.emplace_back();
        if (!codec.encode_jpeg(img.rgb.data(), img.width, img.height, o.quality, jpeg, why)) throw write_error(dir, why);
        labels.push_back(std::to_string(label_of(i)));
      }
      std::vector<TarInput> inputs;
      for (std::int64_t i = first; i < end; ++i) {
        char key[32];
        std::snprintf(key, sizeof key, "%06lld", static_cast<long long>(i));
        names.push_back(std::string(key) + ".jpg");
        names.push_back(std::string(key) + ".cls");
      }
      for (std::int64_t k = 0; k < end - first; ++k) {
        const auto& jpeg = jpegs[static_cast<std::size_t>(k)];
        const auto& label = labels[static_cast<std::size_t>(k)];
        inputs.push_back({names[static_cast<std::size_t>(2 * k)], jpeg.data(), jpeg.size()});
        inputs.push_back({names[static_cast<std::size_t>(2 * k + 1)], reinterpret_cast<const unsigned char*>(label.data()), label.size()});
      }
      char name[32];
      std::snprintf(name, sizeof name, "shard-%06lld.tar", static_cast<long long>(shard));
      const std::string path = (fs::path(dir) / name).string(), tmp = path + ".partial";
      std::string why;
      if (!codec.write_tar(tmp.c_str(), inputs.data(), inputs.size(), why)) throw write_error(tmp, why);
      fs::rename(tmp, path, ec);
      if (ec) throw write_error(path, ec.message());
      result.files.push_back(path);
      result.bytes += static_cast<double>(fs::file_size(path));
    }
  }
  const std::string manifest = "{\n  \"format\": \"" + std::string(to_string(o.format)) + "\",\n  \"samples\": " + std::to_string(o.samples) +
                               ",\n  \"image_size\": " + std::to_string(o.image_size) + ",\n  \"classes\": " + std::to_string(o.classes) + "\n}\n";
  const std::string manifest_path = (fs::path(dir) / "dataset.json").string();
  write_file(manifest_path, manifest);
  result.files.push_back(manifest_path);
  return result;
}

}  // namespace parasim::data
