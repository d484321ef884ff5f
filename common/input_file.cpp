#include "common/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "common/error.hpp"

namespace parasim {

std::string limit_text(std::uintmax_t bytes) {
  if (bytes % (std::uintmax_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (std::uintmax_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (std::uintmax_t{1} << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string read_input_file(const std::string& path, std::uintmax_t limit, std::string_view kind) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(path, 0, 0, "", "cannot open the file for reading");
  if (std::filesystem::is_directory(status)) throw InputError(path, 0, 0, "", "is a folder, not " + std::string(kind));
  if (!std::filesystem::is_regular_file(status))
    throw InputError(path, 0, 0, "", "is not a regular file (a device, a pipe or a socket); expected " + std::string(kind) + " of at most " +
                                         limit_text(limit));
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  const std::string too_large = "is larger than the " + limit_text(limit) + " " + std::string(kind) + " may be";
  if (!ec && size > limit) throw InputError(path, 0, 0, "", too_large + " (" + std::to_string(size) + " bytes)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "", "cannot open the file for reading");
  // Read at most one byte past the limit: a file that grows while read is refused too.
  std::string text;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) throw InputError(path, 0, 0, "", too_large);
  }
  if (in.bad()) throw InputError(path, 0, 0, "", "cannot read the file");
  return text;
}

}  // namespace parasim
