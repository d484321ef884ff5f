// sim/result_json: the "parasim.result/1" form of a Result. (Tested here with the other outputs of
// `parasim SCENARIO`; the file mirrors sim/result_json.cpp.)
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "hand_result.hpp"
#include "sim/result_json.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;
using nlohmann::json;

namespace {

sim::Result read_back(const std::string& text) { return sim::result_from_json(JsonDocument::parse(text, "result.json")); }

/// The InputError reading `j` throws, as "pointer: message" (or "no error").
std::string error_of(const json& j) {
  try {
    (void)read_back(j.dump(2));
  } catch (const InputError& e) {
    CHECK(e.file() == "result.json");
    CHECK(e.line() > 0);
    return e.json_pointer() + ": " + e.message();
  }
  return "no error";
}

/// Every number in `j` has a key naming its unit (or is an id: a stage or device number).
void check_units(const json& j, const std::string& key, std::string& offenders) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_units(it.value(), it.key(), offenders);
  } else if (j.is_array()) {
    for (const auto& e : j) check_units(e, key, offenders);
  } else if (j.is_number()) {
    bool ok = key == "stage" || key == "device" || key == "peak_stage";
    for (const std::string suffix : {"_s", "_bytes", "_per_s", "_fraction", "_count", "_per_step", "_passes", "_per_device"})
      ok = ok || (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0);
    if (!ok) offenders += key + " ";
  }
}

}  // namespace

TEST_CASE("result JSON: a hand-built Result survives to_json and result_from_json unchanged", "[reports][json]") {
  const sim::Result r = testing::hand_result();
  const json j = sim::to_json(r);
  CHECK(j["schema"] == "parasim.result/1");
  CHECK(j["step_time_s"] == 2.0);
  // 8 · 1024 tokens / 2 s = 4096 tokens/s.
  CHECK(j["throughput"]["tokens_per_s"] == 4096.0);
  CHECK(j["profile"] == json{{"name", "datasheet"}, {"origin", "built-in datasheet figures"}});
  // Stage 0 holds 2 + 2 + 12 + 4 + 0.5 = 20.5 GB, stage 1 (2 GB of activations) 18.5 GB.
  CHECK(j["memory"]["peak_bytes"] == 20.5e9);
  CHECK(j["memory"]["per_stage"][1]["total_bytes"] == 18.5e9);
  // Of the 2 s step: compute = forward 0.5 + backward 1.0; exposed communication = pipeline 0.25.
  CHECK(j["time_breakdown_mean"]["compute_s"] == 1.5);
  CHECK(j["time_breakdown_mean"]["exposed_comm_s"] == 0.25);
  CHECK(j["per_device_times"]["omitted_device_count"] == 0);
  CHECK(j["per_stage_times"].size() == 2);
  CHECK(j["per_stage_times"][0]["device_count"] == 1);

  std::string offenders;
  check_units(j, "", offenders);
  CHECK(offenders.empty());

  CHECK(read_back(sim::json_text(j)) == r);
}

TEST_CASE("result JSON: whole numbers are exact, fractions keep 9 significant digits", "[reports][json]") {
  sim::Result r = testing::hand_result();
  // Byte and parameter counts of 10 digits: whole numbers, so written exactly, not to 9 digits.
  r.memory[0].memory.optimizer_bytes = 2734375007;
  r.memory[0].parameters = 1461832704;
  // 1/3 s: 0.333333333 to 9 significant digits.
  r.step_time_s = 1.0 / 3.0;
  const json j = sim::to_json(r);
  CHECK(j["memory"]["per_stage"][0]["optimizer_bytes"] == 2734375007.0);
  CHECK(j["memory"]["per_stage"][0]["parameter_count"] == 1461832704.0);
  CHECK(j["step_time_s"] == 0.333333333);
}

TEST_CASE("result JSON: a simulated Result writes the same bytes every time and reads back within rounding",
          "[reports][json]") {
  const sim::Simulation s = testing::tiny_simulation();
  const sim::Result& r = s.result;
  const std::string text = sim::json_text(sim::to_json(r));
  CHECK(text == sim::json_text(sim::to_json(testing::tiny_simulation().result)));
  CHECK(text.back() == '\n');

  const sim::Result back = read_back(text);
  // Written to 9 significant digits, so the figures come back within a relative 5e-9.
  CHECK_THAT(back.step_time_s, WithinRel(r.step_time_s, 1e-8));
  CHECK_THAT(back.mfu, WithinRel(r.mfu, 1e-8));
  CHECK_THAT(back.breakdown.idle_s, WithinRel(r.breakdown.idle_s, 1e-8));
  CHECK(back.per_device.size() == 8);
  CHECK(back.memory.size() == 2);
  CHECK(back.fits == r.fits);
  CHECK(back.tasks == r.tasks);
  // Rounding is idempotent: what was read, written and read again is the same Result. (Not the same
  // text: a derived figure such as compute_s, summed from rounded parts, may differ in its 9th digit.)
  CHECK(read_back(sim::json_text(sim::to_json(back))) == back);

  std::string offenders;
  check_units(sim::to_json(r), "", offenders);
  CHECK(offenders.empty());
}

TEST_CASE("result JSON: per-device entries stop at max_devices, per-stage aggregates cover every device", "[reports][json]") {
  const sim::Result r = testing::tiny_simulation().result;
  const json j = sim::to_json(r, sim::ResultJsonOptions{3});
  CHECK(j["per_device_times"]["devices"].size() == 3);
  // 8 devices − 3 written = 5 omitted.
  CHECK(j["per_device_times"]["omitted_device_count"] == 5);
  // tp 2 × dp 2 = 4 devices in each of the 2 stages.
  REQUIRE(j["per_stage_times"].size() == 2);
  CHECK(j["per_stage_times"][0]["device_count"] == 4);
  CHECK(j["per_stage_times"][1]["device_count"] == 4);

  const sim::Result back = read_back(j.dump());
  CHECK(back.per_device.size() == 3);
  CHECK(back.devices == 8);
}

TEST_CASE("result JSON: a file of several results reads back in order", "[reports][json]") {
  const std::vector<sim::Result> rs{testing::hand_result("base", 2.0), testing::hand_result("faster", 1.0)};
  const auto back = sim::results_from_json(JsonDocument::parse(sim::json_text(sim::to_json(std::span(rs))), "results.json"));
  CHECK(back == rs);
}

TEST_CASE("result JSON: bad input names the file, the pointer and what was expected", "[reports][json]") {
  json j = sim::to_json(testing::hand_result());
  SECTION("another schema") {
    j["schema"] = "parasim.result/2";
    CHECK(error_of(j) == "/schema: found schema \"parasim.result/2\", expected \"parasim.result/1\" (a result.json written by "
                         "this version of parasim)");
  }
  SECTION("an unknown key") {
    j["step_time_ms"] = 2000;
    CHECK(error_of(j).rfind("/step_time_ms: unknown key \"step_time_ms\" (did you mean \"step_time_s\"?)", 0) == 0);
  }
  SECTION("a missing key") {
    j["throughput"].erase("tokens_per_s");
    CHECK(error_of(j) == "/throughput: missing required key \"tokens_per_s\"");
  }
  SECTION("a negative time") {
    j["time_breakdown_mean"]["forward_s"] = -1.0;
    CHECK(error_of(j) == "/time_breakdown_mean/forward_s: found number -1.0, expected a number >= 0");
  }
  SECTION("per-device entries that do not add up to the device count") {
    // 2 devices listed + 1 omitted = 3 ≠ device_count 2.
    j["per_device_times"]["omitted_device_count"] = 1;
    CHECK(error_of(j) == "/per_device_times/omitted_device_count: found 1 omitted and 2 listed devices, expected them to add up "
                         "to device_count 2");
  }
  SECTION("a device id out of range") {
    j["per_device_times"]["devices"][1]["device"] = 7;
    CHECK(error_of(j) == "/per_device_times/devices/1/device: found device 7, expected a device id below device_count 2");
  }
  SECTION("fits is not a boolean") {
    j["memory"]["fits"] = "yes";
    CHECK(error_of(j) == "/memory/fits: found string \"yes\", expected true or false");
  }
}

TEST_CASE("result JSON: a figure that is not finite is a bug, not a null in the file", "[reports][json]") {
  sim::Result r = testing::hand_result();
  r.mfu = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(sim::to_json(r), InternalError);
}
