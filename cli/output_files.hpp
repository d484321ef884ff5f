#pragma once
/// Writing output files so that a reader never sees half of one: each is written to a temporary name
/// in the same folder and renamed over the final name once complete (rename is atomic on POSIX).
///
/// An interrupted run leaves the previous outputs or none: every temporary file is listed, while it
/// exists, in a fixed-size registry that the SIGINT, SIGTERM and --timeout (SIGALRM) handlers read to
/// remove it (with any output folder it created) before the process exits with 130, 143 or 124.
/// That registry is parasim's one piece of global mutable state: a signal handler can reach nothing
/// else, and it may only call async-signal-safe functions, so it is an array of fixed-size path
/// buffers claimed with atomics — no allocation, no locks, safe from any thread.
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>

namespace parasim::cli {

/// Exit codes of a run stopped from outside: `timeout(1)`'s 124 for --timeout, and the shell's
/// 128 + signal number for SIGINT (2) and SIGTERM (15).
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitInterrupted = 130;
inline constexpr int kExitTerminated = 143;

/// At most this many temporary outputs exist at once (a run has three); one more is an internal error.
inline constexpr int kMaxPendingOutputs = 32;

/// Writes `path` through `write`, atomically. Creates the folder if needed. Throws InputError naming
/// the path when it cannot be written (a folder that cannot be created, a full disk, ...); nothing is
/// left behind then, nor when `write` throws.
void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);
void write_atomically(const std::filesystem::path& path, const std::string& text);

/// Checks, before a command spends time measuring, that `path` can take the file it will write: not
/// an existing folder (InputError, exit 2: the path names a folder), and its nearest existing folder
/// writable (OutputError, exit 4, with the system's reason). Creates nothing.
void check_output_file(const std::filesystem::path& path);

/// A file written to a temporary name now and renamed later (commit), or removed if never committed —
/// for outputs produced early (a trace) that must only appear once every other output succeeded.
/// An output folder it had to create is removed again when it is abandoned and the folder is empty.
/// The temporary file is registered for removal by the interrupt handlers while it exists.
class PendingFile {
 public:
  /// Writes the temporary file through `write`. Throws InputError when it cannot be written; if
  /// `write` throws, its exception propagates and nothing is left behind.
  PendingFile(std::filesystem::path final_path, const std::function<void(std::ostream&)>& write);
  PendingFile(PendingFile&&) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();
  /// Renames the temporary file over the final path. Throws InputError if it cannot.
  void commit();
  [[nodiscard]] const std::filesystem::path& path() const { return final_; }
  /// The temporary name the contents sit under until commit.
  [[nodiscard]] const std::filesystem::path& temporary_path() const { return temp_; }

 private:
  void abandon() noexcept;

  std::filesystem::path final_;
  std::filesystem::path temp_;
  std::filesystem::path created_dir_;  ///< the outermost folder this file created, if any
  int slot_ = -1;                      ///< its entry in the interrupt handlers' registry
  bool done_ = false;
};

/// Commits every file, with SIGINT, SIGTERM and SIGALRM held back until the last rename is done, so
/// an interrupt finds either none or all of them in place (it is then handled, after the commit).
void commit_together(std::span<PendingFile* const> files);
void commit_together(std::initializer_list<PendingFile*> files);

/// Refuses an output folder a scenario file asks for (output.dir) that resolves outside the working
/// folder — "../../etc", an absolute path elsewhere, a symbolic link out — so a scenario someone hands
/// you cannot make parasim write where you did not ask: an InputError located at /output/dir of
/// `scenario_file`. `output_dir` is the folder the loader made of it (Scenario::output_dir). Call it
/// only when --out did not name the folder: the command line may name any folder. Nothing to check
/// when the file sets no output.dir (the default, parasim-out/<name>, is inside).
void check_scenario_output_dir(const std::string& scenario_file, const std::string& output_dir);

/// Installs the SIGINT, SIGTERM and SIGALRM handlers: each removes every registered temporary
/// output (and the folders it created, if empty), writes one line to stderr, and exits with
/// kExitInterrupted, kExitTerminated or kExitTimedOut. Idempotent.
void install_interrupt_handlers();

/// Stops the process after `seconds` of wall-clock time as the SIGALRM handler does (the handlers
/// are installed first); `seconds` ≤ 0 disarms a pending timeout. Throws InputError for a
/// non-finite value or one over a year.
void arm_timeout(double seconds);

/// Removes every registered temporary output and the empty folders they created; what the handlers
/// do first. Async-signal-safe. Returns how many files it removed.
int remove_pending_outputs() noexcept;

/// How many temporary outputs are registered now (for tests).
[[nodiscard]] int pending_output_count() noexcept;

}  // namespace parasim::cli
