#pragma once
// Runs the real parasim binary as a user does: its exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace parasim::testing {

struct Run {
  int exit_code;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A path quoted for the shell command lines the tests build (test paths hold no single quote).
inline std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

/// A fresh, empty temporary folder for one test; removed by the caller when done (TempDir below
/// removes its own).
inline std::filesystem::path fresh_dir(const std::string& tag) {
  static int counter = 0;
  const auto dir =
      std::filesystem::temp_directory_path() / ("parasim-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A fresh_dir removed when it goes out of scope, a failed REQUIRE's unwinding included.
struct TempDir {
  explicit TempDir(const std::string& tag) : path(fresh_dir(tag)) {}
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  const std::filesystem::path path;
};

/// Runs `parasim ARGS` (ARGS is shell text) with stdout and stderr captured.
inline Run run_parasim(const std::string& args) {
  const TempDir temp("run");
  const std::filesystem::path& dir = temp.path;
  const std::string command = std::string("'") + PARASIM_BINARY + "' " + args + " > '" + (dir / "out").string() + "' 2> '" +
                              (dir / "err").string() + "'";
  const int status = std::system(command.c_str());
  return Run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

/// Whether Open MPI's launcher is on the PATH (the MPI tests skip with a message where it is not).
inline bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

/// `mpirun` with the flags every test launch needs: Open MPI refuses to run as root without
/// --allow-run-as-root, and two ranks on fewer cores without --oversubscribe. In a sanitizer build,
/// leak detection is off in the ranks (the variable is ignored otherwise): Open MPI keeps memory from
/// MPI_Init to exit in plugins it unloads before LeakSanitizer looks, so no suppression can name
/// them. parasim's own leaks are still checked by the one-process runs of the same code.
inline const std::string kMpirun = "mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0";

/// `mpirun -np N parasim ARGS` under `timeout 120` (a hang fails the test as exit 124), stdout and
/// stderr in DIR/out and DIR/err: its exit code.
inline int mpirun_parasim(int ranks, const std::string& args, const std::filesystem::path& dir) {
  const std::string command = "timeout 120 " + kMpirun + " -np " + std::to_string(ranks) + " '" + std::string(PARASIM_BINARY) + "' " + args + " > " +
                              q(dir / "out") + " 2> " + q(dir / "err");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace parasim::testing
