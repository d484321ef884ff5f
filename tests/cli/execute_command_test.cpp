// `parasim execute`: the plan's task graph run for real, one rank per device, compared with the
// prediction. The runs here are a two-layer GPT small enough for a test; the figures they measure
// depend on the machine, so only what does not is asserted (docs/validation.md has the comparison).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace {

using parasim::testing::fresh_dir;
using parasim::testing::q;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;
namespace fs = std::filesystem;

const std::string kScenario = PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json";

bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

/// `mpirun -np N parasim ARGS` under `timeout 120` (a hang fails the test as exit 124): its exit code.
int mpirun(int ranks, const std::string& args, const fs::path& dir) {
  const std::string command = "timeout 120 mpirun -np " + std::to_string(ranks) + " --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0 '" +
                              std::string(PARASIM_BINARY) + "' " + args + " > " + q(dir / "out") + " 2> " + q(dir / "err");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("parasim execute runs one device's plan alone and compares it with its prediction", "[cli][execute]") {
  const fs::path dir = fresh_dir("execute-single");
  const Run r = run_parasim("execute " + q(kScenario) + " --plan single --steps 2 --threads 1 --out " + q(dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("# parasim execute: tiny-gpt-2 (single)\n"));
  const auto j = nlohmann::json::parse(slurp(dir / "execution.json"));
  CHECK(j.at("ranks") == 1);
  CHECK(j.at("measured_step_s").size() == 2);
  CHECK(j.at("predicted_by") == "analytical");
  for (const char* f : {"report.md", "trace.json", "trace-predicted.json"}) CHECK(fs::exists(dir / f));
}

TEST_CASE("parasim execute refuses a plan whose devices the launch does not match, and unknown plans", "[cli][execute]") {
  const fs::path dir = fresh_dir("execute-bad");
  SECTION("two devices, one process") {
    const Run r = run_parasim("execute " + q(kScenario) + " --out " + q(dir));
    CHECK(r.exit_code == 3);
    CHECK(r.err ==
          "parasim: the plan cannot run: the plan has 2 devices and 1 process was launched: run it as `mpirun -np 2 parasim execute ...`, one rank per device\n");
  }
  SECTION("a what-if the scenario does not have") {
    const Run r = run_parasim("execute " + q(kScenario) + " --plan tp4 --out " + q(dir));
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "parasim: error: <command line>: --plan: found \"tp4\", expected \"base\" or a what-if of the scenario: \"base\", \"single\", \"tp2\", \"pp2\", \"zero3\"\n");
  }
  CHECK_FALSE(fs::exists(dir / "execution.json"));
}

TEST_CASE("mpirun -np 2 parasim execute runs data, tensor and pipeline parallel plans and ZeRO-3 for real", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  for (const char* plan : {"base", "tp2", "pp2", "zero3"}) {
    const fs::path dir = fresh_dir(std::string("execute-mpi-") + plan);
    const int code = mpirun(2, "execute " + q(kScenario) + " --plan " + plan + " --steps 2 --threads 1 --out " + q(dir / "o"), dir);
    INFO(plan << ": " << slurp(dir / "err"));
    REQUIRE(code == 0);
    const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
    CHECK(j.at("ranks") == 2);
    // The communication each plan has: a gradient all-reduce (data parallel, and the tied embedding
    // of the pipeline's two stages), tensor-parallel all-reduces, sends between stages, ZeRO-3's
    // gathers and reduce-scatters.
    std::set<std::string> classes;
    for (const auto& c : j.at("classes")) classes.insert(c.at("class").get<std::string>());
    const std::string p = plan;
    if (p == "base" || p == "tp2") CHECK(classes.count("all-reduce") == 1);
    if (p == "pp2") CHECK(classes.count("pipeline send") == 1);
    if (p == "zero3") CHECK((classes.count("all-gather") == 1 && classes.count("reduce-scatter") == 1));
  }
}

TEST_CASE("mpirun with more ranks than the plan has devices ends every rank with the reason, no hang", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  const fs::path dir = fresh_dir("execute-mpi-3");
  const int code = mpirun(3, "execute " + q(kScenario) + " --out " + q(dir / "o"), dir);
  CHECK(code == 3);
  CHECK_THAT(slurp(dir / "err"), Catch::Matchers::Contains("the plan has 2 devices and 3 processes were launched"));
  CHECK_FALSE(fs::exists(dir / "o" / "execution.json"));
}
