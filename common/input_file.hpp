#pragma once
/// Reading an input file with bounds: every file parasim reads (a scenario, a profile, a graph JSON,
/// a Hugging Face config, a result or search JSON, an nccl-tests log, a kernel-timing CSV) must be a
/// regular file no larger than its kind's limit, else a located InputError names the file and the
/// limit — never a read that grows until the kernel ends the process (`parasim /dev/zero`).
#include <cstdint>
#include <string>
#include <string_view>

namespace parasim {

/// The most bytes a JSON input may have: far above any file parasim writes or reads in practice
/// (a 1,000-GPU result.json is a few MB; the largest graph JSON of the model zoo a few tens).
inline constexpr std::uintmax_t kMaxJsonBytes = std::uintmax_t{512} << 20;
/// The most bytes a text log or CSV of measurements may have.
inline constexpr std::uintmax_t kMaxLogBytes = std::uintmax_t{64} << 20;

/// The whole of the file at `path`, a `kind` ("a JSON file", "an nccl-tests log", ...) of at most
/// `limit` bytes. Throws InputError (naming the file) for a missing file, a folder, anything not a
/// regular file (a device, a pipe, a socket), a file over the limit (also one that grows past it
/// while read), or a read error.
[[nodiscard]] std::string read_input_file(const std::string& path, std::uintmax_t limit, std::string_view kind);

/// "512 MiB": a limit as the messages give it.
[[nodiscard]] std::string limit_text(std::uintmax_t bytes);

}  // namespace parasim
