#include "cli/output_files.hpp"

#include <fstream>

#include <unistd.h>

#include "common/error.hpp"

namespace parasim::cli {
namespace {

std::filesystem::path temp_name(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
}

void write_temp(const std::filesystem::path& final_path, const std::filesystem::path& temp,
                const std::function<void(std::ostream&)>& write) {
  std::error_code ec;
  if (!final_path.parent_path().empty()) std::filesystem::create_directories(final_path.parent_path(), ec);
  if (ec) throw InputError(final_path.parent_path().string(), 0, 0, "", "cannot create the output folder: " + ec.message());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(final_path.string(), 0, 0, "", "cannot write the output file");
    write(out);
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(temp, ec);
      throw InputError(final_path.string(), 0, 0, "", "cannot write the output file (disk full?)");
    }
  }
}

void rename_over(const std::filesystem::path& temp, const std::filesystem::path& final_path) {
  std::error_code ec;
  std::filesystem::rename(temp, final_path, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw InputError(final_path.string(), 0, 0, "", "cannot move the output file into place");
  }
}

}  // namespace

void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const auto temp = temp_name(path);
  write_temp(path, temp, write);
  rename_over(temp, path);
}

void write_atomically(const std::filesystem::path& path, const std::string& text) {
  write_atomically(path, [&](std::ostream& out) { out << text; });
}

PendingFile::PendingFile(std::filesystem::path final_path, const std::function<void(std::ostream&)>& write)
    : final_(std::move(final_path)), temp_(temp_name(final_)) {
  std::error_code ec;
  for (auto dir = final_.parent_path(); !dir.empty() && !std::filesystem::exists(dir, ec); dir = dir.parent_path()) created_dir_ = dir;
  write_temp(final_, temp_, write);
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : final_(std::move(other.final_)), temp_(std::move(other.temp_)), created_dir_(std::move(other.created_dir_)), done_(other.done_) {
  other.done_ = true;
}

PendingFile::~PendingFile() {
  if (!done_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    // Remove the folders this file created, innermost first, as long as they are empty.
    for (auto dir = temp_.parent_path(); !created_dir_.empty() && !dir.empty(); dir = dir.parent_path()) {
      if (!std::filesystem::is_empty(dir, ec) || ec) break;
      std::filesystem::remove(dir, ec);
      if (dir == created_dir_) break;
    }
  }
}

void PendingFile::commit() {
  rename_over(temp_, final_);
  done_ = true;
}

}  // namespace parasim::cli
