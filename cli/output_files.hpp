#pragma once
/// Writing output files so that a reader never sees half of one: each is written to a temporary name
/// in the same folder and renamed over the final name once complete (rename is atomic on POSIX).
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace parasim::cli {

/// Writes `path` through `write`, atomically. Creates the folder if needed. Throws InputError naming
/// the path when it cannot be written (a folder that cannot be created, a full disk, ...).
void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);
void write_atomically(const std::filesystem::path& path, const std::string& text);

/// A file written to a temporary name now and renamed later (commit), or removed if never committed —
/// for outputs produced early (a trace) that must only appear once every other output succeeded.
/// An output folder it had to create is removed again when it is abandoned and the folder is empty.
class PendingFile {
 public:
  PendingFile(std::filesystem::path final_path, const std::function<void(std::ostream&)>& write);
  PendingFile(PendingFile&&) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  ~PendingFile();
  void commit();
  [[nodiscard]] const std::filesystem::path& path() const { return final_; }

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  std::filesystem::path created_dir_;  ///< the outermost folder this file created, if any
  bool done_ = false;
};

}  // namespace parasim::cli
