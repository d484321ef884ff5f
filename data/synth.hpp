#pragma once
/// `parasim data synth`: a dataset of any size for tests and benchmarks, in either format the real
/// loader reads (data/dataset.hpp), the same bytes from the same seed.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace parasim::data {

struct SynthOptions {
  DatasetFormat format = DatasetFormat::CifarBin;
  std::int64_t samples = 1000;
  std::int64_t image_size = 32;
  std::int64_t classes = 100;
  std::uint64_t seed = 1;
  std::int64_t samples_per_shard = 1000;  ///< jpeg-tar: samples in each tar shard
  int quality = 90;                        ///< jpeg-tar: the JPEG quality
};

struct SynthResult {
  std::vector<std::string> files;  ///< written, the manifest last
  double bytes = 0;                ///< the data files' bytes
};

/// The pixels of sample `i` (image_size × image_size × 3, row by row): smooth stripes of a random
/// direction, frequency and colour with noise, so that a JPEG of it is about as large as a photo of
/// its size.
[[nodiscard]] Image synthetic_image(std::int64_t image_size, std::uint64_t seed, std::int64_t i);

/// Writes the dataset into folder `dir` (made if missing): `train.bin` (cifar-bin) or
/// `shard-NNNNNN.tar` (jpeg-tar), then `dataset.json`. Each file is written beside its name and
/// renamed when complete. Throws InputError for a folder it cannot write.
SynthResult synthesize(const std::string& dir, const SynthOptions& options);

}  // namespace parasim::data
