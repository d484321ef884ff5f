#include "cli/output_files.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "reports/format.hpp"

namespace parasim::cli {
namespace {

// ---- the interrupt handlers' registry (see the header for why it is global) ----------------------

/// Longest path a slot holds, terminating NUL included (Linux's PATH_MAX: longer paths fail in the
/// system calls anyway).
constexpr std::size_t kPathBytes = 4096;

enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  char temp[kPathBytes];
  char created_dir[kPathBytes];  ///< "" when the file created no folder
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handlers read the slot states");

Slot g_pending[kMaxPendingOutputs];
/// The line the SIGALRM handler prints, formatted when the timeout is armed.
char g_timeout_message[160] = "parasim: error: timed out (--timeout)\n";

int register_pending(const std::filesystem::path& temp, const std::filesystem::path& created_dir) {
  const std::string t = temp.string(), c = created_dir.string();
  if (t.size() >= kPathBytes || c.size() >= kPathBytes) throw InputError(t, 0, 0, "", "the output path is too long");
  for (int i = 0; i < kMaxPendingOutputs; ++i) {
    int expected = kFree;
    if (!g_pending[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_pending[i].temp, t.c_str(), t.size() + 1);
    std::memcpy(g_pending[i].created_dir, c.c_str(), c.size() + 1);
    g_pending[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  PARASIM_CHECK(false, "more than " + std::to_string(kMaxPendingOutputs) + " temporary outputs at once");
  return -1;
}

void unregister_pending(int slot) noexcept {
  if (slot >= 0) g_pending[slot].state.store(kFree, std::memory_order_release);
}

/// Removes `created_dir` and the folders below it on the way to `temp`, innermost first, as far as
/// they are empty. Async-signal-safe: only stack buffers and rmdir(2).
void remove_created_dirs(const char* temp, const char* created_dir) noexcept {
  if (created_dir[0] == '\0') return;
  char dir[kPathBytes];
  std::size_t n = std::strlen(temp);
  std::memcpy(dir, temp, n + 1);
  for (;;) {
    while (n > 0 && dir[n - 1] != '/') --n;  // cut the last component
    if (n == 0) return;
    while (n > 1 && dir[n - 1] == '/') --n;
    dir[n] = '\0';
    if (::rmdir(dir) != 0) return;  // not empty (another output is there), or gone
    if (std::strcmp(dir, created_dir) == 0) return;
  }
}

void write_stderr(const char* text) noexcept {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

extern "C" void on_stop_signal(int signal_number) {
  remove_pending_outputs();
  switch (signal_number) {
    case SIGINT:
      write_stderr("parasim: interrupted (SIGINT); unfinished outputs removed\n");
      ::_exit(kExitInterrupted);
    case SIGTERM:
      write_stderr("parasim: terminated (SIGTERM); unfinished outputs removed\n");
      ::_exit(kExitTerminated);
    default:
      write_stderr(g_timeout_message);
      ::_exit(kExitTimedOut);
  }
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGALRM);
  return set;
}

// ---- writing -------------------------------------------------------------------------------------

std::filesystem::path temp_name(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
}

void write_temp(const std::filesystem::path& final_path, const std::filesystem::path& temp,
                const std::function<void(std::ostream&)>& write) {
  std::error_code ec;
  if (!final_path.parent_path().empty()) std::filesystem::create_directories(final_path.parent_path(), ec);
  if (ec) throw OutputError(final_path.parent_path().string() + ": cannot create the output folder: " + ec.message());
  errno = 0;
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) throw OutputError(final_path.string() + ": cannot write the output file: " + (errno ? std::strerror(errno) : "cannot open it"));
  // The first failed write sets errno (a full disk, a file-size limit); nothing after it clears it.
  errno = 0;
  write(out);
  out.flush();
  if (!out) {
    const int reason = errno;
    out.close();
    std::filesystem::remove(temp, ec);
    throw OutputError(final_path.string() + ": cannot write the output file: " + (reason ? std::strerror(reason) : "the write failed"));
  }
}

}  // namespace

void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  PendingFile file(path, write);
  file.commit();
}

void check_output_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string(), 0, 0, "", "is a folder; expected the path of the file to write");
  auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  while (!std::filesystem::exists(dir, ec) && dir != dir.parent_path() && !dir.parent_path().empty()) dir = dir.parent_path();
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw OutputError(path.string() + ": cannot create the output folder: " + dir.string() + " is a file, not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) throw OutputError(path.string() + ": cannot write into " + dir.string() + ": " + std::strerror(errno));
}

void write_atomically(const std::filesystem::path& path, const std::string& text) {
  write_atomically(path, [&](std::ostream& out) { out << text; });
}

PendingFile::PendingFile(std::filesystem::path final_path, const std::function<void(std::ostream&)>& write)
    : final_(std::move(final_path)), temp_(temp_name(final_)) {
  std::error_code ec;
  for (auto dir = final_.parent_path(); !dir.empty() && !std::filesystem::exists(dir, ec); dir = dir.parent_path()) {
    created_dir_ = dir;
    if (dir == dir.parent_path()) break;
  }
  // Registered before the file exists, so an interrupt at any point after finds and removes it.
  slot_ = register_pending(temp_, created_dir_);
  try {
    write_temp(final_, temp_, write);
  } catch (...) {
    abandon();
    throw;
  }
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : final_(std::move(other.final_)),
      temp_(std::move(other.temp_)),
      created_dir_(std::move(other.created_dir_)),
      slot_(other.slot_),
      done_(other.done_) {
  other.done_ = true;
  other.slot_ = -1;
}

PendingFile::~PendingFile() {
  if (!done_) abandon();
}

void PendingFile::abandon() noexcept {
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
  // Remove the folders this file created, innermost first, as long as they are empty.
  for (auto dir = temp_.parent_path(); !created_dir_.empty() && !dir.empty(); dir = dir.parent_path()) {
    if (!std::filesystem::is_empty(dir, ec) || ec) break;
    std::filesystem::remove(dir, ec);
    if (dir == created_dir_) break;
  }
  unregister_pending(slot_);
  slot_ = -1;
  done_ = true;
}

void PendingFile::commit() {
  PARASIM_CHECK(!done_, "a pending output is committed once");
  std::error_code ec;
  std::filesystem::rename(temp_, final_, ec);
  if (ec) {
    abandon();
    throw OutputError(final_.string() + ": cannot move the output file into place: " + ec.message());
  }
  unregister_pending(slot_);
  slot_ = -1;
  done_ = true;
}

void commit_together(std::initializer_list<PendingFile*> files) { commit_together(std::span<PendingFile* const>(files.begin(), files.size())); }

void commit_together(std::span<PendingFile* const> files) {
  const sigset_t held = stop_signals();
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &held, &previous);
  try {
    for (PendingFile* f : files) f->commit();
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void check_scenario_output_dir(const std::string& scenario_file, const std::string& output_dir) {
  const JsonDocument doc = JsonDocument::read_file(scenario_file);
  const nlohmann::json& root = doc.root();
  if (!root.is_object() || !root.contains("output") || !root["output"].is_object() || !root["output"].contains("dir")) return;
  // Both sides resolved the same way ('..' and symbolic links followed), then compared by component.
  std::error_code ec;
  const auto here = std::filesystem::weakly_canonical(std::filesystem::current_path(ec), ec);
  const auto target = std::filesystem::weakly_canonical(std::filesystem::absolute(output_dir, ec), ec);
  if (!ec && std::mismatch(here.begin(), here.end(), target.begin(), target.end()).first == here.end()) return;
  throw doc.error_at("/output/dir", "found \"" + reports::terminal_safe(output_dir) + "\" (" + reports::terminal_safe(target.string()) +
                                        "), expected a folder inside the working folder " + reports::terminal_safe(here.string()) +
                                        "; to write there, name it with --out on the command line");
}

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_mask = stop_signals();  // one handler at a time: the first signal decides the exit code
  action.sa_flags = 0;
  for (int s : {SIGINT, SIGTERM, SIGALRM}) ::sigaction(s, &action, nullptr);
}

void arm_timeout(double seconds) {
  constexpr double kYear = 365.0 * 24 * 3600;
  if (!std::isfinite(seconds) || seconds > kYear)
    throw InputError("<command line>", 0, 0, "", "--timeout: found " + std::to_string(seconds) + ", expected seconds between 0 and " +
                                                     std::to_string(static_cast<long>(kYear)));
  itimerval timer{};
  if (seconds > 0) {
    install_interrupt_handlers();
    std::snprintf(g_timeout_message, sizeof g_timeout_message,
                  "parasim: error: timed out after %g s (--timeout); unfinished outputs removed\n", seconds);
    const double whole = std::floor(seconds);
    timer.it_value.tv_sec = static_cast<time_t>(whole);
    timer.it_value.tv_usec = static_cast<suseconds_t>((seconds - whole) * 1e6);
    if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0) timer.it_value.tv_usec = 1;
  }
  ::setitimer(ITIMER_REAL, &timer, nullptr);
}

int remove_pending_outputs() noexcept {
  int removed = 0;
  for (auto& slot : g_pending)
    if (slot.state.load(std::memory_order_acquire) == kLive && ::unlink(slot.temp) == 0) ++removed;
  // Folders after every file: two outputs may share a folder one of them created.
  for (auto& slot : g_pending)
    if (slot.state.load(std::memory_order_acquire) == kLive) remove_created_dirs(slot.temp, slot.created_dir);
  return removed;
}

int pending_output_count() noexcept {
  int n = 0;
  for (const auto& slot : g_pending) n += slot.state.load(std::memory_order_acquire) == kLive ? 1 : 0;
  return n;
}

}  // namespace parasim::cli
