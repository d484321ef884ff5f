// `parasim data synth` and `parasim calibrate --backend loader`, run as a user runs them: the real
// binary, its exit code and messages, the dataset and profile it writes; bad input exits 2 naming
// what is wrong, and writes nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace {

using parasim::testing::have_mpirun;
using parasim::testing::mpirun_parasim;
using parasim::testing::q;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

}  // namespace

TEST_CASE("parasim data synth writes a dataset the loader calibration then reads, with its report", "[cli][data]") {
  const parasim::testing::TempDir dir_temp("data-synth");
  const std::filesystem::path& dir = dir_temp.path;
  const Run synth = run_parasim("data synth --format cifar-bin --samples 64 --image-size 8 --out " + q(dir / "cifar"));
  INFO(synth.err);
  REQUIRE(synth.exit_code == 0);
  CHECK(synth.out == "wrote 64 samples (cifar-bin, 8 × 8 px, 100 classes, seed 1) in 1 file of 12,416 bytes, and " + (dir / "cifar" / "dataset.json").string() + "\n");
  // 64 records of 2 label bytes and 3 × 8 × 8 pixel bytes.
  CHECK(fs::file_size(dir / "cifar" / "train.bin") == 64 * (2 + 3 * 8 * 8));
  const auto manifest = nlohmann::json::parse(slurp(dir / "cifar" / "dataset.json"));
  CHECK(manifest.at("samples") == 64);
  CHECK(manifest.at("format") == "cifar-bin");

  const Run cal = run_parasim("calibrate --backend loader --data " + q(dir / "cifar") + " --threads 1 --out " + q(dir / "p.json") + " --report " +
                              q(dir / "report"));
  INFO(cal.err);
  REQUIRE(cal.exit_code == 0);
  CHECK_THAT(cal.out, Contains("loader: naive, 1 thread: measured") && Contains("loader: sharded, 1 thread: measured"));
  const auto profile = nlohmann::json::parse(slurp(dir / "p.json"));
  const auto& loader = profile.at("loaders").at("cifar-bin");
  CHECK(loader.at("image_size") == 8);
  CHECK(loader.at("checks").size() == 2);
  CHECK(loader.at("decode_s_per_sample").get<double>() > 0);
  CHECK_THAT(slurp(dir / "report" / "report.html"), Contains("Time per sample by loader threads and placement"));
}

TEST_CASE("parasim data and calibrate --backend loader: bad input exits 2 naming what is wrong, and writes nothing", "[cli][data]") {
  const parasim::testing::TempDir dir_temp("data-bad");
  const std::filesystem::path& dir = dir_temp.path;
  SECTION("no samples") {
    const Run r = run_parasim("data synth --format cifar-bin --samples 0 --out " + q(dir / "d"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--samples") && Contains("0"));
    CHECK_FALSE(fs::exists(dir / "d"));
  }
  SECTION("an unknown format") {
    const Run r = run_parasim("data synth --format png --out " + q(dir / "d"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--format") && Contains("png"));
  }
  SECTION("a loader calibration without a dataset") {
    const Run r = run_parasim("calibrate --backend loader --out " + q(dir / "p.json"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --backend loader needs --data DIR: a dataset (parasim data synth writes one)\n");
    CHECK_FALSE(fs::exists(dir / "p.json"));
  }
  SECTION("a missing dataset") {
    const Run r = run_parasim("calibrate --backend loader --data " + q(dir / "none") + " --out " + q(dir / "p.json"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "none").string() + ": no such dataset folder; expected a folder of CIFAR .bin files or .tar shards\n");
    CHECK_FALSE(fs::exists(dir / "p.json"));
  }
  SECTION("a truncated dataset") {
    REQUIRE(run_parasim("data synth --format cifar-bin --samples 40 --image-size 4 --out " + q(dir / "t")).exit_code == 0);
    fs::resize_file(dir / "t" / "train.bin", 40 * 50 - 7);
    const Run r = run_parasim("calibrate --backend loader --data " + q(dir / "t") + " --out " + q(dir / "p.json"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "t" / "train.bin").string() +
                       ": truncated: 1993 bytes is not a whole number of 50-byte records (39 and 43 bytes)\n");
    CHECK_FALSE(fs::exists(dir / "p.json"));
  }
}

namespace {

/// ResNet-18 on 32-pixel CIFAR records, fp32, on CPU ranks: the base data parallel over two, the
/// what-if "single" on one; its input pipeline at 0.1 ms a sample on one loader thread.
void write_execute_scenario(const fs::path& file, const std::string& data) {
  std::ofstream(file) << R"({
  "name": "loader-execute",
  "model": { "preset": "resnet18", "image_size": 32, "num_classes": 100 },
  "training": { "global_batch": 8, "micro_batch": 2, "precision": "fp32", "optimizer": "sgd-momentum" },
  "cluster": { "device": "host-cpu", "nodes": 1, "devices_per_node": 2, "intra_node": { "link": "shm" } },
  "plan": { "dp": 2 },
  )" + data + R"(
  "what_if": [ { "name": "single", "set": { "cluster.devices_per_node": 1, "plan.dp": 1 } } ]
})";
}

}  // namespace

TEST_CASE("parasim execute --data feeds each rank from the real loader through the step's load and copy tasks", "[cli][data][execute]") {
  const parasim::testing::TempDir dir_temp("data-execute");
  const std::filesystem::path& dir = dir_temp.path;
  REQUIRE(run_parasim("data synth --format cifar-bin --samples 64 --out " + q(dir / "cifar")).exit_code == 0);
  write_execute_scenario(dir / "s.json", R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 0.1, "prefetch": 2 },)");
  // One rank: 4 micro-batches of 2 a step, so 4 loads and 4 copies in the median step.
  const Run r = run_parasim("execute " + q(dir / "s.json") + " --plan single --steps 2 --threads 1 --data " + q(dir / "cifar") + " --out " + q(dir / "one"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto e = nlohmann::json::parse(slurp(dir / "one" / "execution.json"));
  CHECK_THAT(slurp(dir / "one" / "report.md"), Contains("Input: each rank's real loader on") && Contains("(sharded, 1 thread, 2 micro-batches ahead)"));
  std::map<std::string, std::int64_t> operations;
  for (const auto& c : e.at("classes")) operations[c.at("class").get<std::string>()] = c.at("operations").get<std::int64_t>();
  CHECK(operations["input load"] == 4);
  CHECK(operations["input copy"] == 4);
  // Without --data the pipeline is left out, and the report says so.
  const Run left = run_parasim("execute " + q(dir / "s.json") + " --plan single --steps 1 --threads 1 --out " + q(dir / "none"));
  REQUIRE(left.exit_code == 0);
  CHECK_THAT(slurp(dir / "none" / "report.md"), Contains("input pipeline was left out of the step (no --data DIR)"));
  // Two ranks, data parallel: each its own loader, 2 micro-batches a step each.
  if (!have_mpirun()) {
    WARN("skipped the two-rank run: no mpirun on the PATH (install Open MPI to run it)");
    return;
  }
  const int code = mpirun_parasim(2, "execute " + q(dir / "s.json") + " --steps 2 --threads 1 --data " + q(dir / "cifar") + " --out " + q(dir / "two"), dir);
  INFO(slurp(dir / "err"));
  REQUIRE(code == 0);
  const auto two = nlohmann::json::parse(slurp(dir / "two" / "execution.json"));
  for (const auto& c : two.at("classes"))
    if (c.at("class") == "input load" || c.at("class") == "input copy") CHECK(c.at("operations") == 2 * 2);
}

TEST_CASE("parasim execute --data: what it cannot run exits with the reason", "[cli][data][execute]") {
  const parasim::testing::TempDir dir_temp("data-execute-bad");
  const std::filesystem::path& dir = dir_temp.path;
  REQUIRE(run_parasim("data synth --format cifar-bin --samples 64 --out " + q(dir / "cifar")).exit_code == 0);
  SECTION("a scenario without a data section") {
    write_execute_scenario(dir / "s.json", "");
    const Run r = run_parasim("execute " + q(dir / "s.json") + " --plan single --data " + q(dir / "cifar") + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --data: the scenario has no \"data\" section, so no input pipeline to load it\n");
  }
  SECTION("the naive placement") {
    write_execute_scenario(dir / "s.json", R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 0.1, "placement": "naive" },)");
    const Run r = run_parasim("execute " + q(dir / "s.json") + " --plan single --data " + q(dir / "cifar") + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains("the naive placement (one loader thread sending every sample to every rank) is simulated, not executed"));
  }
  SECTION("a missing dataset") {
    write_execute_scenario(dir / "s.json", R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 0.1 },)");
    const Run r = run_parasim("execute " + q(dir / "s.json") + " --plan single --data " + q(dir / "none") + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("no such dataset folder"));
    CHECK_FALSE(fs::exists(dir / "o"));
  }
}
