// `parasim data synth` and `parasim calibrate --backend loader`, run as a user runs them: the real
// binary, its exit code and messages, the dataset and profile it writes; bad input exits 2 naming
// what is wrong, and writes nothing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace {

using parasim::testing::fresh_dir;
using parasim::testing::q;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

}  // namespace

TEST_CASE("parasim data synth writes a dataset the loader calibration then reads, with its report", "[cli][data]") {
  const fs::path dir = fresh_dir("data-synth");
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
  const fs::path dir = fresh_dir("data-bad");
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
