// An interrupted run leaves the previous outputs or none (cli/output_files): parasim is killed with
// SIGTERM or SIGINT while it simulates, after it has written its first temporary output, and the
// output folder is found exactly as it was before the run; exit codes 143 and 130. --timeout stops a
// run the same way with exit code 124.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

namespace {

// GPT-3 175B on 1024 A100 (the bundled example's plan): the base simulates in about a second; its
// what-if, eight times the global batch, has eight times the micro-batches and so about eight times
// the tasks — seconds of work during which the base's trace already sits in a temporary file.
const char* kLong = R"({
  "name": "long",
  "model": { "preset": "gpt3-175b", "seq_len": 2048 },
  "training": { "global_batch": 1536, "micro_batch": 1, "precision": "fp16", "optimizer": "adam" },
  "cluster": { "preset": "dgx-a100", "nodes": 128 },
  "plan": { "tp": 8, "pp": 16, "dp": 8, "schedule": "1f1b", "zero": 1, "recompute": "full" },
  "what_if": [ { "name": "eight times the batch", "set": { "training.global_batch": 12288 } } ]
})";

using parasim::testing::q;

/// Every file under `dir` with its contents.
std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    files[std::filesystem::relative(e.path(), dir).string()] = e.is_regular_file() ? slurp(e.path()) : "<folder>";
  return files;
}

struct Killed {
  bool saw_temporary = false;  ///< a temporary output existed when the signal was sent
  int exit_code = -1;          ///< -1 when the process did not exit normally
  std::string err;
};

/// Runs `parasim SCENARIO --out OUT`, waits until its first temporary output appears in OUT, sends
/// `signal_number`, and waits for it to exit.
Killed run_and_kill(const std::filesystem::path& scenario, const std::filesystem::path& out, int signal_number,
                    const std::filesystem::path& err_file) {
  // Anything buffered now would be written twice, once by each process.
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child: parasim with stdout discarded and stderr kept.
    std::FILE* err = std::freopen(err_file.c_str(), "w", stderr);
    std::FILE* null = std::freopen("/dev/null", "w", stdout);
    if (err == nullptr || null == nullptr) ::_exit(127);
    ::execl(PARASIM_BINARY, PARASIM_BINARY, scenario.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  Killed k;
  const std::string temporary = ".trace.json.tmp." + std::to_string(pid);
  int status = 0;
  for (;;) {
    if (std::filesystem::exists(out / temporary)) {
      k.saw_temporary = true;
      break;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) break;  // it finished (or failed) before we looked
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (k.saw_temporary) {
    ::kill(pid, signal_number);
    ::waitpid(pid, &status, 0);
  }
  k.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  k.err = slurp(err_file);
  return k;
}

}  // namespace

TEST_CASE("reliability: parasim killed while it simulates leaves no partial output", "[cli][reliability]") {
  const int signal_number = GENERATE(SIGTERM, SIGINT);
  // The shell's convention: 128 + the signal number (SIGTERM 15, SIGINT 2).
  const int expected_exit = signal_number == SIGTERM ? 143 : 130;
  INFO("signal " << signal_number);
  const parasim::testing::TempDir dir_temp("kill");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "long.json";
  std::ofstream(scenario) << kLong;

  SECTION("into a new output folder: nothing is left, not even the folder") {
    const auto out = dir / "new" / "out";
    const Killed k = run_and_kill(scenario, out, signal_number, dir / "err");
    REQUIRE(k.saw_temporary);
    CHECK(k.exit_code == expected_exit);
    CHECK_THAT(k.err, Catch::Matchers::Contains("unfinished outputs removed"));
    CHECK_FALSE(std::filesystem::exists(dir / "new"));
  }
  SECTION("over the outputs of an earlier run: they are left exactly as they were") {
    const auto out = dir / "out";
    std::filesystem::create_directories(out);
    for (const char* name : {"result.json", "report.md", "trace.json"}) std::ofstream(out / name) << "previous " << name;
    const auto before = snapshot(out);
    const Killed k = run_and_kill(scenario, out, signal_number, dir / "err");
    REQUIRE(k.saw_temporary);
    CHECK(k.exit_code == expected_exit);
    CHECK(snapshot(out) == before);
  }
}

TEST_CASE("reliability: --timeout stops a run with exit code 124 and no partial output", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("timeout");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "long.json";
  std::ofstream(scenario) << kLong;
  // The what-if alone simulates about 12 million tasks; 0.5 s is far less than the run needs. A fast
  // machine reaches the what-if within 0.5 s, and its progress lines would precede the error: --quiet.
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --timeout 0.5 --quiet");
  CHECK(r.exit_code == 124);
  CHECK(r.err == "parasim: error: timed out after 0.5 s (--timeout); unfinished outputs removed\n");
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_CASE("reliability: --timeout is accepted by every command and does not cut a short run", "[cli][reliability]") {
  const Run model = run_parasim("model gpt2 --timeout 60");
  CHECK(model.exit_code == 0);
  CHECK_THAT(model.out, Catch::Matchers::Contains("parameters"));
  const Run negative = run_parasim("model gpt2 --timeout -1");
  CHECK(negative.exit_code == 2);
  // Every command lists it in its help: the run (parasim SCENARIO.json), model, search and report.
  for (const char* command : {"", "model ", "search ", "report "}) {
    INFO("parasim " << command << "--help");
    const Run help = run_parasim(std::string(command) + "--help");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Matchers::Contains("--timeout"));
  }
}
