#pragma once
/// A dataset on disk, as the real loader reads it (issue 18): a folder of
///  - CIFAR binary files (`*.bin`): fixed-size records of a coarse label byte, a fine label byte and
///    3 × S × S pixel bytes, plane by plane (https://www.cs.toronto.edu/~kriz/cifar.html, "Binary
///    version": CIFAR-100's layout; S = 32 unless the manifest says otherwise), or
///  - WebDataset-style tar shards (`*.tar`): each sample a `KEY.jpg` member (a JPEG image) and a
///    `KEY.cls` member (its class, decimal text), shards and members in order.
/// A `dataset.json` manifest (written by `parasim data synth`) may say the format, the sample count,
/// the image side and the classes; without one the format follows the files. Samples are numbered
/// 0 … size − 1 in file order. Every fault names the file and, for a sample, its index.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/codec.hpp"

namespace parasim::data {

enum class DatasetFormat { JpegTar, CifarBin };
[[nodiscard]] std::string_view to_string(DatasetFormat f);

/// What the manifest says (or the files imply).
struct DatasetManifest {
  DatasetFormat format = DatasetFormat::CifarBin;
  std::int64_t samples = 0;
  std::int64_t image_size = 32;  ///< cifar-bin: the records' side; jpeg-tar: the images' side as written (informative)
  std::int64_t classes = 100;
};

/// One sample as stored: its bytes (a CIFAR record's pixels, or a JPEG file) and its label.
struct RawSample {
  std::vector<unsigned char> bytes;
  std::int64_t label = 0;
};

/// One sample decoded: 8-bit RGB, row by row (height × width × 3).
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;
};

class Dataset {
 public:
  /// Opens the dataset in folder `dir`, indexing its files (tar shards: their members). Throws
  /// InputError naming the file at fault: a missing folder or no data files, a CIFAR file whose size
  /// is not a whole number of records (truncated), a tar shard that is not one, a JPEG without its
  /// label, a manifest that disagrees with the files.
  [[nodiscard]] static Dataset open(const std::string& dir);

  [[nodiscard]] const DatasetManifest& manifest() const { return manifest_; }
  [[nodiscard]] std::int64_t size() const { return manifest_.samples; }
  [[nodiscard]] DatasetFormat format() const { return manifest_.format; }
  /// The bytes sample `i` takes in storage (a record; a JPEG and its label member).
  [[nodiscard]] double stored_bytes(std::int64_t i) const;
  /// Where sample `i` lies: "DIR/train.bin, record 12" or "DIR/shard-000001.tar, member 000123.jpg".
  [[nodiscard]] std::string where(std::int64_t i) const;

  /// Reads sample `i` (thread-safe: positioned reads). Throws InputError (with where(i)) when the
  /// file ends early or its label is not a class.
  void read(std::int64_t i, RawSample& out) const;
  /// Decodes a sample read by read(i) into `out`. Throws InputError with sample i's index and file
  /// when it is corrupt (a JPEG libjpeg-turbo cannot decode); never skips it.
  void decode(std::int64_t i, const RawSample& raw, Image& out) const;

 private:
  struct File {
    std::string path;
    std::int64_t first = 0;    ///< its first sample
    std::shared_ptr<int> fd;   ///< open for reading while any copy of the Dataset lives
  };
  struct Member {
    std::size_t file = 0;
    std::int64_t offset = 0, size = 0;  ///< the JPEG's bytes
    std::int64_t label_offset = 0, label_size = 0;
    std::string name;
  };

  std::string dir_;
  DatasetManifest manifest_;
  std::vector<File> files_;
  std::int64_t record_bytes_ = 0;  ///< cifar-bin
  std::vector<Member> members_;    ///< jpeg-tar: per sample
};

}  // namespace parasim::data
