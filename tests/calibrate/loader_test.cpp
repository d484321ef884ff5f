// `parasim calibrate --backend loader` (calibrate/loader.hpp): the real loader measured on a
// synthesized dataset predicts its own time per sample under the naive and the sharded placement at
// 1 and 2 threads within 15% (issue 18); the profile keeps the figures, and a scenario's data
// section takes its decode time from them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "calibrate/loader.hpp"
#include "common/json_document.hpp"
#include "data/synth.hpp"
#include "scenarios/data.hpp"
#include "scenarios/loader.hpp"
#include "sim/profile_json.hpp"
#include "tests/scenarios/scenario_error.hpp"

using namespace parasim;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string synth_jpeg(const std::string& name, std::int64_t samples, std::int64_t side) {
  const fs::path dir = fs::current_path() / "test-artefacts" / "loader-calibration" / name;
  fs::remove_all(dir);
  data::SynthOptions o;
  o.format = data::DatasetFormat::JpegTar;
  o.samples = samples;
  o.image_size = side;
  o.samples_per_shard = 200;
  (void)data::synthesize(dir.string(), o);
  return dir.string();
}

}  // namespace

// The checks' accuracy on this machine is in docs/validation.md: a figure the tests do not assert,
// since a virtual machine's single-thread speed flips between states as its neighbours come and go.
TEST_CASE("calibrate loader runs the real loader under each placement and thread count against its prediction", "[calibrate][loader]") {
  const std::string dir = synth_jpeg("checks", 256, 48);
  calibrate::LoaderCalibrationOptions o;
  o.repeats = 4;
  o.check_steps = 4;
  std::ostringstream log;
  const sim::LoaderProfile l = calibrate::calibrate_loader(dir, o, "test", log);
  INFO(log.str());
  REQUIRE(l.checks.size() == 3);  // naive with its one thread; sharded with 1 and 2
  CHECK(l.checks[0].placement == "naive");
  CHECK(l.checks[1].placement == "sharded");
  CHECK(l.checks[2].threads == 2);
  REQUIRE(l.decode_s_at_threads.size() == 2);
  for (const sim::LoaderCheck& c : l.checks) {
    CHECK(c.measured_s_per_sample > 0);
    CHECK(c.predicted_s_per_sample > 0);
  }
  // The prediction is the simulated pipeline's loader time per sample from the measured figures:
  // sharded, one thread, 2 copies of each 48 × 48 fp32 tensor and its int64 label (its
  // tensor-parallel group's two devices).
  const double tensor = 3.0 * 48 * 48 * sizeof(float) + sizeof(std::int64_t);
  CHECK(l.checks[1].predicted_s_per_sample == Approx(l.decode_s_at_threads[0] + 2 * tensor / l.copy_bytes_per_s).epsilon(1e-9));
  // Naive: one thread, every sample to all 4 devices.
  CHECK(l.checks[0].predicted_s_per_sample == Approx(l.decode_s_at_threads[0] + 4 * tensor / l.copy_bytes_per_s).epsilon(1e-9));
  // Two threads: each at its measured rate with two at once, the samples shared.
  CHECK(l.checks[2].predicted_s_per_sample == Approx((l.decode_s_at_threads[1] + 2 * tensor / l.copy_bytes_per_s) / 2).epsilon(1e-9));
}

TEST_CASE("calibrate loader: the figures, in the profile and read back, and a scenario takes its decode time from them", "[calibrate][loader]") {
  const std::string dir = synth_jpeg("profile", 64, 16);
  calibrate::LoaderCalibrationOptions o;
  o.check_steps = 1;
  o.repeats = 1;
  o.max_threads = 2;
  std::ostringstream log;
  sim::Profile profile = sim::datasheet_profile();
  profile.name = "calibrated";
  const sim::LoaderProfile& l = profile.loaders["jpeg-tar"] = calibrate::calibrate_loader(dir, o, "parasim calibrate --backend loader --data D", log);
  CHECK(l.image_size == 16);
  CHECK(l.decode_s_per_sample > 0);
  CHECK(l.copy_bytes_per_s > 0);
  CHECK_THAT(l.source, Contains("parasim calibrate --backend loader --data D") && Contains("libjpeg-turbo") && Contains("libarchive"));
  const std::string text = sim::to_json(profile).dump(2);
  CHECK(sim::profile_from_json(JsonDocument::parse(text, "p.json")) == profile);
  // The datasheet profile has no loader, so its JSON has no "loaders".
  CHECK_FALSE(sim::to_json(sim::datasheet_profile()).contains("loaders"));

  // A scenario with a jpeg-tar dataset and no decode time: refused on the datasheet profile, its
  // decode time the calibrated one with this profile.
  const fs::path folder = fs::current_path() / "test-artefacts" / "loader-calibration";
  const fs::path profile_file = folder / "calibrated.json";
  {
    std::ofstream(profile_file) << text;
  }
  const std::string scenario = R"({
  "name": "t",
  "model": { "preset": "resnet18", "image_size": 16, "num_classes": 100 },
  "training": { "global_batch": 8, "micro_batch": 2, "precision": "fp32" },
  "cluster": { "device": "host-cpu", "nodes": 1, "devices_per_node": 2, "intra_node": { "link": "shm" } },
  "data": { "format": "jpeg-tar", "stored_bytes_per_sample": 1000 }PROFILE
})";
  auto with = [&](const std::string& profile_line) { return std::regex_replace(scenario, std::regex("PROFILE"), profile_line); };
  CHECK_THAT(testing::scenario_error(with("")),
             Contains("at /data") && Contains("needs \"decode_ms_per_sample\"") && Contains("parasim calibrate --backend loader --data DIR"));
  const fs::path file = folder / "s.json";
  {
    std::ofstream(file) << with(",\n  \"profile\": \"calibrated.json\"");
  }
  const scenarios::Scenario s = scenarios::load_scenario(file.string());
  const sim::Profile loaded = scenarios::scenario_profile(s);
  const sim::InputPipeline in = scenarios::input_pipeline(s, scenarios::build_model(s), loaded);
  CHECK(in.decode_s_per_sample == l.decode_s_per_sample);
  // A cluster of host CPUs: the loader threads copy into the devices' memory at the measured rate.
  CHECK(in.loader_copy_bytes_per_s == l.copy_bytes_per_s);
}
