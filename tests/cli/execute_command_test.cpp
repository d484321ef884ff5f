// `parasim execute`: the plan's task graph run for real, one rank per device, compared with the
// prediction. The runs here are a two-layer GPT small enough for a test; the figures they measure
// depend on the machine, so only what does not is asserted (docs/validation.md has the comparison).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "exec/cuda_kernels.hpp"
#include "sim/profile_json.hpp"
#include "tests/cli/run_parasim.hpp"
#include "tests/reports/html_browser.hpp"

namespace {

using parasim::testing::have_mpirun;
using parasim::testing::kMpirun;
using parasim::testing::mpirun_parasim;
using parasim::testing::q;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;
namespace fs = std::filesystem;

const std::string kScenario = PARASIM_TEST_DATA_DIR "/execute/tiny-gpt-2.json";

/// The tiny GPT with its devices A100s (a GPU plan), written to `file`.
void write_on_a100s(const fs::path& file) {
  std::string text = slurp(kScenario);
  const std::string cpu = "\"device\": \"host-cpu\"";
  REQUIRE(text.find(cpu) != std::string::npos);
  text.replace(text.find(cpu), cpu.size(), "\"device\": \"a100-80gb\"");
  std::ofstream(file) << text;
}

/// The host check in an execution.json and its report.md: a GEMM and a memory pass timed just
/// before the run, each against the profile's price of it, the error (predicted - measured) /
/// measured as the step's.
void check_host_check(const nlohmann::json& j, const std::string& report_md) {
  REQUIRE(j.contains("host_check"));
  const auto& host = j.at("host_check");
  REQUIRE(host.size() == 2);
  CHECK(host[0].at("check") == "512x512x512 fp32 sgemm");
  CHECK(host[1].at("check") == "64 MiB memory pass");
  for (const auto& h : host) {
    const double m = h.at("measured_s"), p = h.at("predicted_s");
    CHECK(m > 0);
    CHECK(p > 0);
    CHECK(h.at("error").get<double>() == Approx((p - m) / m));
  }
  CHECK(report_md.find("| 512x512x512 fp32 sgemm | ") != std::string::npos);
  CHECK(report_md.find("| 64 MiB memory pass | ") != std::string::npos);
}

}  // namespace

TEST_CASE("parasim execute runs one device's plan alone and compares it with its prediction", "[cli][execute]") {
  const parasim::testing::TempDir dir_temp("execute-single");
  const std::filesystem::path& dir = dir_temp.path;
  const Run r = run_parasim("execute " + q(kScenario) + " --plan single --steps 2 --threads 1 --out " + q(dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("# parasim execute: tiny-gpt-2 (single)\n"));
  const auto j = nlohmann::json::parse(slurp(dir / "execution.json"));
  CHECK(j.at("ranks") == 1);
  CHECK(j.at("measured_step_s").size() == 2);
  CHECK(j.at("predicted_by") == "analytical");
  for (const char* f : {"report.md", "trace.json", "trace-predicted.json"}) CHECK(fs::exists(dir / f));
  check_host_check(j, slurp(dir / "report.md"));
  // Before the timed steps, untimed ones until 2 s (the default) had passed: at least one, since the
  // first starts at 0 s; then --warmup's one.
  CHECK(j.at("warmup_seconds") == 2.0);
  CHECK(j.at("untimed_steps").get<int>() >= 1);
  CHECK(j.at("warmup_steps") == 1);
  // report.html: the step and class tables, then the class and step charts, the prediction's
  // breakdown and memory, and the simulated and measured timelines, drawn in a browser where one is.
  const std::string html = slurp(dir / "report.html");
  CHECK(html.find("<section id=\"execution\">") != std::string::npos);
  CHECK(html.find("<h1>parasim execute: tiny-gpt-2 (single)</h1>") != std::string::npos);
  // The host check's table there too, each check named as in report.md; no per-rank table for one rank.
  for (const auto& h : j.at("host_check")) CHECK(html.find("<tr><td>" + h.at("check").get<std::string>() + "</td>") != std::string::npos);
  CHECK(html.find("Compute per rank") == std::string::npos);
  const nlohmann::json seen = parasim::testing::check_in_chromium(dir / "report.html", "execute-single", 6);
  if (seen.is_object()) {
    std::vector<std::string> ids;
    for (const auto& c : seen.at("charts")) ids.push_back(c.at("id"));
    CHECK(ids == std::vector<std::string>{"vis-execution-classes", "vis-execution-steps", "vis-breakdown", "vis-memory", "vis-timeline", "vis-timeline-measured"});
    // A bar for each class's measurement and one for its prediction; a point per timed step and the rule.
    CHECK(seen.at("charts")[0].at("marks") == 2 * j.at("classes").size());
    CHECK(seen.at("charts")[1].at("marks") == 2 + 1);
  }
}

// --recalibrate: the profile predicted with (here the datasheet's), its GEMM rate scaled by the GEMM
// class's predicted over measured time, as execution.json reports both (calibrate/from_execution.hpp).
TEST_CASE("parasim execute --recalibrate writes the profile with the measured classes folded in", "[cli][execute][recalibrate]") {
  const parasim::testing::TempDir dir_temp("execute-recalibrate");
  const std::filesystem::path& dir = dir_temp.path;
  const Run r = run_parasim("execute " + q(kScenario) + " --plan single --steps 2 --threads 1 --warmup-seconds 0 --out " + q(dir / "out") + " --recalibrate " +
                            q(dir / "p.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote " + (dir / "p.json").string() + ": profile \"datasheet\" with the measured classes folded in:\n  gemm_efficiency x ") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir / "out" / "execution.json"));
  CHECK(j.at("untimed_steps") == 0);  // --warmup-seconds 0: rank 0 finds 0 s passed, not under 0
  double measured = 0, predicted = 0;
  for (const auto& c : j.at("classes"))
    if (c.at("class") == "GEMM") measured = c.at("measured_s"), predicted = c.at("predicted_s");
  REQUIRE(measured > 0);
  const auto rate = [](const parasim::sim::Profile& p) {
    const auto& d = p.device("host-cpu");
    return *d.peak_for(parasim::models::DType::F32) * d.gemm_curve(parasim::models::DType::F32).at(1e9);
  };
  const parasim::sim::Profile before = parasim::sim::datasheet_profile();
  const parasim::sim::Profile after = parasim::sim::profile_from_json(parasim::JsonDocument::read_file((dir / "p.json").string()));
  CHECK_THAT(rate(after) / rate(before), Catch::Matchers::WithinRel(predicted / measured, 1e-9));
  CHECK(after.origin.rfind("parasim execute tiny-gpt-2.json --plan single on ", 0) == 0);
  // It predicts: the scenario runs with it.
  const Run again = run_parasim(q(kScenario) + " --profile " + q(dir / "p.json") + " --out " + q(dir / "run"));
  INFO(again.err);
  CHECK(again.exit_code == 0);
}

TEST_CASE("parasim execute refuses a plan whose devices the launch does not match, and unknown plans", "[cli][execute]") {
  const parasim::testing::TempDir dir_temp("execute-bad");
  const std::filesystem::path& dir = dir_temp.path;
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
          "parasim: error: <command line>: --plan: found \"tp4\", expected \"base\", a what-if of the scenario (\"base\", \"single\", \"tp2\", \"pp2\", "
          "\"zero3\", \"diloco\", \"papa\", \"fedavg\") or SEARCH.json#RANK\n");
  }
  CHECK_FALSE(fs::exists(dir / "execution.json"));
}

TEST_CASE("mpirun -np 2 parasim execute runs data, tensor and pipeline parallel plans and ZeRO-3 for real", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  for (const char* plan : {"base", "tp2", "pp2", "zero3"}) {
    const parasim::testing::TempDir dir_temp(std::string("execute-mpi-") + plan);
    const fs::path& dir = dir_temp.path;
    const int code = mpirun_parasim(2, "execute " + q(kScenario) + " --plan " + plan + " --steps 2 --threads 1 --warmup-seconds 0.5 --out " + q(dir / "o"), dir);
    INFO(plan << ": " << slurp(dir / "err"));
    REQUIRE(code == 0);
    const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
    CHECK(j.at("ranks") == 2);
    // Both ranks ran rank 0's count of untimed steps (else a collective would wait for ever).
    CHECK(j.at("untimed_steps").get<int>() >= 1);
    // The communication each plan has: a gradient all-reduce (data parallel, and the tied embedding
    // of the pipeline's two stages), tensor-parallel all-reduces, sends between stages, ZeRO-3's
    // gathers and reduce-scatters.
    std::set<std::string> classes;
    for (const auto& c : j.at("classes")) classes.insert(c.at("class").get<std::string>());
    const std::string p = plan;
    if (p == "base" || p == "tp2") CHECK(classes.count("all-reduce") == 1);
    if (p == "pp2") CHECK(classes.count("pipeline send") == 1);
    if (p == "zero3") CHECK((classes.count("all-gather") == 1 && classes.count("reduce-scatter") == 1));
    // Each rank's compute in the median step, measured and predicted, and in report.md: the
    // measured times are a rank's compute tasks, and the class table's compute classes (the
    // classes less the collectives, the sends and idle) are their operator passes, which lie
    // inside them: at most as long, and most of it (between passes only a clock read and a lookup).
    REQUIRE(j.at("rank_compute").size() == 2);
    double ranks_busy = 0, classes_busy = 0;
    for (const auto& rc : j.at("rank_compute")) {
      CHECK(rc.at("measured_s").get<double>() > 0);
      CHECK(rc.at("predicted_s").get<double>() > 0);
      ranks_busy += rc.at("measured_s").get<double>();
    }
    for (const auto& c : j.at("classes")) {
      const std::string name = c.at("class");
      if (name != "all-reduce" && name != "all-gather" && name != "reduce-scatter" && name != "pipeline send" && name != "idle compute")
        classes_busy += c.at("measured_s").get<double>();
    }
    CHECK(classes_busy <= ranks_busy);
    CHECK(classes_busy >= 0.8 * ranks_busy);
    CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains("Compute per rank, in the median step"));
    // report.html has the same table: a row per rank.
    const std::string html = slurp(dir / "o" / "report.html");
    CHECK(html.find("Compute per rank, in the median step") != std::string::npos);
    CHECK(html.find("<tr><td>1</td><td>") != std::string::npos);
  }
}

TEST_CASE("mpirun -np 2 parasim execute prices two ranks of one host by the profile's shared-host entry, and its report says so", "[cli][execute][mpi][shared-host]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  // The datasheet profile with a shared-host entry for host-cpu whose memory bandwidth is half its
  // own (as `parasim calibrate --backend mpi` writes one): the two ranks of the scenario's one node
  // are priced by it, and the report's and execution.json's notes on the prediction say so. The
  // same plan with the datasheet profile predicts less (memory-bound kernels at twice the rate).
  const parasim::testing::TempDir dir_temp("execute-mpi-shared-host");
  const std::filesystem::path& dir = dir_temp.path;
  parasim::sim::Profile profile = parasim::sim::datasheet_profile();
  parasim::sim::DeviceProfile shared = profile.devices.at("host-cpu");
  shared.name = "host-cpu@2";
  shared.memory_bandwidth_bytes_per_s /= 2;
  profile.devices["host-cpu@2"] = shared;
  profile.devices["host-cpu"].shared_host = {2, "host-cpu@2"};
  profile.devices["host-cpu"].sources["shared_host"] = "a test: host-cpu's figures with half the memory bandwidth";
  {
    std::ofstream f(dir / "shared.json");
    f << parasim::sim::to_json(profile).dump(2) << "\n";
  }
  const std::string flags = " --plan base --steps 2 --threads 1 --warmup-seconds 0.5 --out ";
  REQUIRE(mpirun_parasim(2, "execute " + q(kScenario) + flags + q(dir / "o") + " --profile " + q(dir / "shared.json"), dir) == 0);
  REQUIRE(mpirun_parasim(2, "execute " + q(kScenario) + flags + q(dir / "d"), dir) == 0);
  const std::string note = "Each host-cpu is priced by the profile's \"host-cpu@2\" figures: its kernels measured with 2 ranks of one host running them "
                           "at the same moment (the profile's shared_host), as the 2 devices of a node share its memory bandwidth and caches; while no "
                           "other device of its node computes, by its own figures, and beside other work than its own by that slowdown times the "
                           "other work's memory duty (the engine follows which devices compute what, when).";
  // report.md escapes the underscore (Markdown would read it as emphasis).
  std::string escaped = note;
  escaped.replace(escaped.find("shared_host"), 11, "shared\\_host");
  CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains("\nNotes on the prediction:\n\n") && Catch::Matchers::Contains("- " + escaped + "\n"));
  const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
  const auto d = nlohmann::json::parse(slurp(dir / "d" / "execution.json"));
  CHECK(std::count(j.at("prediction_notes").begin(), j.at("prediction_notes").end(), note) == 1);
  CHECK(j.at("predicted_step_s").get<double>() > d.at("predicted_step_s").get<double>());
}

TEST_CASE("mpirun -np 2 parasim execute runs DiLoCo and PAPA: a replica a rank, the outer all-reduce every H steps", "[cli][execute][mpi][local-update]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  // Two replicas of one rank each, H = 2: each outer step is two inner steps of the single-device
  // plan on half the batch, then the pseudo-gradient's all-reduce and Nesterov's step.
  const parasim::testing::TempDir dir_temp("execute-mpi-diloco");
  const std::filesystem::path& dir = dir_temp.path;
  // PAPA the same way, its weights averaged instead of a pseudo-gradient.
  const int papa = mpirun_parasim(2, "execute " + q(kScenario) + " --plan papa --steps 1 --warmup 0 --warmup-seconds 0 --threads 1 --out " + q(dir / "p"), dir);
  INFO(slurp(dir / "err"));
  REQUIRE(papa == 0);
  const auto papa_json = nlohmann::json::parse(slurp(dir / "p" / "execution.json"));
  CHECK(papa_json.at("algorithm") == "papa");
  CHECK(papa_json.at("untimed_steps") == 0);  // --warmup-seconds 0: rank 0 finds 0 s passed, not under 0
  // Untimed outer steps for 0.3 s first (rank 0's clock, every rank told), then one warm-up, then two timed.
  const int code = mpirun_parasim(2, "execute " + q(kScenario) + " --plan diloco --steps 2 --warmup 1 --warmup-seconds 0.3 --threads 1 --out " + q(dir / "o"), dir);
  INFO(slurp(dir / "err"));
  REQUIRE(code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
  CHECK(j.at("algorithm") == "diloco");
  CHECK(j.at("warmup_seconds") == 0.3);
  CHECK(j.at("untimed_steps").get<int>() >= 1);
  CHECK(j.at("warmup_steps") == 1);
  CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains(" timed outer steps after " + std::to_string(j.at("untimed_steps").get<int>()) + " untimed outer step"));
  CHECK(j.at("replicas") == 2);
  CHECK(j.at("inner_steps") == 2);
  REQUIRE(j.at("measured_outer_step_s").size() == 2);
  // An outer step is its two inner steps and the synchronisation, each measured; the prediction is
  // the simulated outer step (its figures depend on this machine: docs/validation.md records them).
  for (std::size_t i = 0; i < 2; ++i) {
    const double outer = j.at("measured_outer_step_s")[i], inner = j.at("measured_inner_step_s")[i], sync = j.at("measured_sync_s")[i];
    CHECK(outer > 0);
    CHECK(outer >= 2 * inner);
    CHECK(sync > 0);
  }
  CHECK(j.at("predicted_outer_step_s").get<double>() > 2 * j.at("predicted_inner_step_s").get<double>());
  CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains("| outer step |"));
  // The host check, on both replicas' ranks before the first outer step.
  check_host_check(j, slurp(dir / "o" / "report.md"));
  // Streaming DiLoCo is simulated, not executed: every rank says so.
  std::string text = slurp(kScenario);
  text.replace(text.find("\"inner_steps\": 2"), 16, "\"inner_steps\": 2, \"algorithm\": \"streaming-diloco\", \"fragments\": 2");
  std::ofstream(dir / "streaming.json") << text;
  const int refused = mpirun_parasim(2, "execute " + q(dir / "streaming.json") + " --plan diloco --out " + q(dir / "s"), dir);
  CHECK(refused != 0);
  CHECK_THAT(slurp(dir / "err"), Catch::Matchers::Contains("is Streaming DiLoCo: parasim execute runs the local updates that synchronise every fragment at once"));
}

TEST_CASE("mpirun -np 3 parasim execute runs a FedAvg round: rank 0 the server, two clients", "[cli][execute][mpi][federated]") {
  // Without a launcher there is no server and client: refused with the reason.
  const Run alone = run_parasim("execute " + q(kScenario) + " --plan fedavg");
  CHECK(alone.exit_code == 3);
  CHECK_THAT(alone.err, Catch::Matchers::Contains("a federated round needs a server and a client"));
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  const parasim::testing::TempDir dir_temp("execute-mpi-fedavg");
  const std::filesystem::path& dir = dir_temp.path;
  const int code = mpirun_parasim(3, "execute " + q(kScenario) + " --plan fedavg --steps 2 --warmup 1 --warmup-seconds 0.3 --threads 1 --out " + q(dir / "o"), dir);
  INFO(slurp(dir / "err"));
  REQUIRE(code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
  CHECK(j.at("algorithm") == "fedavg");
  // Untimed rounds for 0.3 s on the server's clock (server and clients all told), then one warm-up.
  CHECK(j.at("untimed_rounds").get<int>() >= 1);
  CHECK(j.at("warmup_rounds") == 1);
  CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains(" timed rounds after " + std::to_string(j.at("untimed_rounds").get<int>()) + " untimed round"));
  CHECK(j.at("clients") == 2);
  CHECK(j.at("local_steps") == 2);
  REQUIRE(j.at("measured_round_s").size() == 2);
  // A round is at least its two local steps (each client's) and the prediction is one round of
  // these two clients; its figures depend on the machine (docs/validation.md records them).
  for (const auto& r : j.at("measured_round_s")) CHECK(r.get<double>() > 0);
  CHECK(j.at("predicted_round_s").get<double>() > 2 * j.at("client_step_s").get<double>());
  CHECK_THAT(slurp(dir / "o" / "report.md"), Catch::Matchers::Contains("| round |"));
  // The host check, on the server and both clients before the first round.
  check_host_check(j, slurp(dir / "o" / "report.md"));
}

TEST_CASE("mpirun with more ranks than the plan has devices ends every rank with the reason, no hang", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  const parasim::testing::TempDir dir_temp("execute-mpi-3");
  const std::filesystem::path& dir = dir_temp.path;
  const int code = mpirun_parasim(3, "execute " + q(kScenario) + " --out " + q(dir / "o"), dir);
  CHECK(code == 3);
  CHECK_THAT(slurp(dir / "err"), Catch::Matchers::Contains("the plan has 2 devices and 3 processes were launched"));
  CHECK_FALSE(fs::exists(dir / "o" / "execution.json"));
}

TEST_CASE("a plan the executor cannot run ends every rank with the reason before any step, no hang", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  // The tiny GPT on two A100s: the CPU executor runs host-cpu devices only. Every rank finds it
  // before any communication, and each exits 3; the launcher passes that code on.
  const parasim::testing::TempDir dir_temp("execute-mpi-a100");
  const std::filesystem::path& dir = dir_temp.path;
  write_on_a100s(dir / "a100.json");
  const int code = mpirun_parasim(2, "execute " + q(dir / "a100.json") + " --out " + q(dir / "o"), dir);
  const std::string err = slurp(dir / "err");
  INFO(err);
  CHECK(code == 3);
  CHECK_THAT(err, Catch::Matchers::Contains(
                          "parasim: the plan cannot run: the plan's devices are a100-80gb; the CPU executor runs plans of host-cpu devices (this host, as `parasim "
                          "calibrate --backend cpu` measures it); a GPU plan runs with --backend cuda\n"));
  CHECK_FALSE(fs::exists(dir / "o" / "execution.json"));
}

TEST_CASE("a rank killed in the middle of a run ends every rank with the reason, no hang", "[cli][execute][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  // Two ranks of the tiny GPT's data-parallel plan for 1,000 steps (about a second of them here);
  // rank 1 is killed with SIGKILL half a second after it starts, wherever it is (starting MPI,
  // lowering, inside a step), so rank 0 is left waiting for it in a collective or a barrier. Open MPI
  // sees the death and ends rank 0, whose SIGTERM handler removes its unfinished outputs.
  const parasim::testing::TempDir dir_temp("execute-mpi-killed");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string run = "'" + std::string(PARASIM_BINARY) + "' execute " + q(kScenario) + " --steps 1000 --threads 1 --out " + q(dir / "o");
  const std::string command = "timeout 120 " + kMpirun + " -np 1 " + run + " : -np 1 timeout -s KILL 0.5 " + run + " > " + q(dir / "out") + " 2> " +
                              q(dir / "err");
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string err = slurp(dir / "err");
  INFO(err);
  CHECK(code != 0);
  CHECK(code != 124);  // not ended by the test's own timeout: no hang
  CHECK_THAT(err, Catch::Matchers::Contains("exited on signal 9 (Killed)"));
  CHECK_FALSE(fs::exists(dir / "o" / "execution.json"));
}

TEST_CASE("parasim execute --backend cuda runs a GPU plan where a GPU is, and refuses cleanly where none is", "[cli][execute][cuda]") {
  // The tiny GPT on one A100 (the scenario's single-device plan with its device swapped).
  const parasim::testing::TempDir dir_temp("execute-cuda");
  const std::filesystem::path& dir = dir_temp.path;
  write_on_a100s(dir / "a100.json");
  const Run r = run_parasim("execute " + q(dir / "a100.json") + " --backend cuda --plan single --steps 2 --out " + q(dir / "o"));
  const std::string why = parasim::exec::cuda_unavailable();
  if (!why.empty()) {
    // No GPU here (or a build without the CUDA executor): exit 3 with the reason, nothing written.
    WARN("the CUDA executor did not run: " + why);
    CHECK(r.exit_code == 3);
    CHECK(r.err == "parasim: the plan cannot run: --backend cuda: " + why + "\n");
    CHECK_FALSE(fs::exists(dir / "o" / "execution.json"));
  } else {
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
    CHECK(j.at("executor") == "cuda");
    CHECK(j.at("measured_step_s").size() == 2);
  }
  // A CPU plan is not a GPU plan.
  const Run cpu_plan = run_parasim("execute " + q(kScenario) + " --backend cuda --plan single --out " + q(dir / "c"));
  CHECK(cpu_plan.exit_code == 3);
  CHECK(cpu_plan.err == "parasim: the plan cannot run: the plan's devices are this host's CPU; the CUDA executor runs GPU plans (--backend cpu runs this one)\n");
}

TEST_CASE("parasim execute --plan SEARCH.json#RANK runs the plan parasim search ranked there", "[cli][execute][mpi]") {
  const parasim::testing::TempDir dir_temp("execute-searched");
  const std::filesystem::path& dir = dir_temp.path;
  const Run search = run_parasim("search " + q(kScenario) + " --out " + q(dir / "s") + " --quiet");
  REQUIRE(search.exit_code == 0);
  const auto ranked = nlohmann::json::parse(slurp(dir / "s" / "search.json"));
  const std::string file = (dir / "s" / "search.json").string();
  SECTION("a rank that is not there, or no rank") {
    const Run none = run_parasim("execute " + q(kScenario) + " --plan '" + file + "#" + std::to_string(ranked.at("plans").size() + 1) + "' --out " + q(dir / "o"));
    CHECK(none.exit_code == 2);
    CHECK_THAT(none.err, Catch::Matchers::Contains("at /plans: found no plan ranked " + std::to_string(ranked.at("plans").size() + 1) + "; the file ranks " +
                                                    std::to_string(ranked.at("plans").size()) + " plans"));
    const Run zero = run_parasim("execute " + q(kScenario) + " --plan '" + file + "#0' --out " + q(dir / "o"));
    CHECK(zero.exit_code == 2);
    CHECK_THAT(zero.err, Catch::Matchers::Contains("expected SEARCH.json#RANK with RANK a plan's rank from 1"));
  }
  SECTION("the first plan, on as many ranks as it has devices") {
    if (!have_mpirun()) {
      WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
      return;
    }
    const auto& first = ranked.at("plans").at(0);
    const int devices = first.at("device_count").get<int>();
    const int code = mpirun_parasim(devices, "execute " + q(kScenario) + " --plan '" + file + "#1' --steps 1 --threads 1 --out " + q(dir / "o"), dir);
    INFO(slurp(dir / "err"));
    REQUIRE(code == 0);
    const auto j = nlohmann::json::parse(slurp(dir / "o" / "execution.json"));
    CHECK(j.at("plan") == first.at("description"));
    CHECK(j.at("ranks") == devices);
  }
}
