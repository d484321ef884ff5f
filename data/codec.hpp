#pragma once
/// The real loader's codecs: JPEG through libjpeg-turbo (its libjpeg API) and tar shards through
/// libarchive, in libparasim_codec.so (common/plugin.hpp) so that only the commands that read or
/// write a dataset map them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace parasim::data {

/// One member of a tar shard, as indexed: its name and where its bytes lie in the file.
struct TarMember {
  std::string name;
  std::int64_t offset = 0;  ///< of its data, from the start of the file
  std::int64_t size = 0;
};

/// A file to put in a tar shard.
struct TarInput {
  std::string name;
  const unsigned char* data = nullptr;
  std::size_t size = 0;
};

/// What libparasim_codec.so provides. Each call returns false with `error` set on failure (a corrupt
/// JPEG, a tar that is not one), never throws.
struct CodecPlugin {
  int version = 1;  ///< kCodecPluginVersion of the build that made it
  /// Decodes a JPEG into 8-bit RGB, row by row (height × width × 3).
  bool (*decode_jpeg)(const unsigned char* data, std::size_t size, std::vector<std::uint8_t>& rgb, int& width, int& height, std::string& error) = nullptr;
  /// Encodes 8-bit RGB (height × width × 3) as a baseline JPEG of `quality` (1–100).
  bool (*encode_jpeg)(const std::uint8_t* rgb, int width, int height, int quality, std::vector<unsigned char>& out, std::string& error) = nullptr;
  /// The members of a tar file (plain ustar: each member's data right after its 512-byte header),
  /// in file order.
  bool (*index_tar)(const char* path, std::vector<TarMember>& members, std::string& error) = nullptr;
  /// Writes a ustar file of `inputs`, in order.
  bool (*write_tar)(const char* path, const TarInput* inputs, std::size_t count, std::string& error) = nullptr;
  /// "libjpeg-turbo 2.1.5 (libjpeg API 62), libarchive 3.6.2".
  const char* (*versions)() = nullptr;
};

inline constexpr int kCodecPluginVersion = 1;

/// The loaded library's table, loading it on the first call (thread-safe). Throws PlanError saying
/// why when it cannot be loaded.
[[nodiscard]] const CodecPlugin& codec_plugin();

}  // namespace parasim::data
