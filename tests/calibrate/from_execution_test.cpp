// `parasim execute --recalibrate`: the measured classes folded back into the profile predicted with
// (calibrate/from_execution.hpp). Every figure below is derived by hand beside its check.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "calibrate/from_execution.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

sim::Profile hand_profile() {
  sim::Profile p;
  p.name = "hand";
  p.origin = "written by the test";
  sim::DeviceProfile d;
  d.name = "dev";
  d.peak_flops_per_s = {{models::DType::F32, 100.0}};
  d.gemm_efficiency.points = {{1e6, 0.5}, {1e9, 0.8}};
  d.memory_bandwidth_bytes_per_s = 10;
  d.memory_efficiency.points = {{1e3, 0.6}, {1e6, 0.9}};
  d.softmax_flops_per_s = 5;
  d.optimizer_flops_per_s = 0;  // no measured optimizer rate: the optimizer class folds into nothing
  sim::AttentionEfficiency a;
  a.implementation = "eager";
  a.forward.points = {{1e3, 0.6}};
  a.backward.points = {{1e3, 0.3}};
  d.attention_efficiency = {a};
  d.sources["gemm_efficiency"] = "the sweep";
  p.devices["dev"] = d;
  sim::LinkProfile l;
  l.name = "wire";
  l.bandwidth_bytes_per_s = 1;
  l.efficiency.points = {{1e3, 0.5}, {1e6, 0.4}};
  p.links["wire"] = l;
  return p;
}

}  // namespace

TEST_CASE("execute --recalibrate scales each figure by its classes' predicted over measured time", "[calibrate][recalibrate]") {
  const std::vector<calibrate::ExecutedClass> classes{
      {"GEMM", 2, 1},  {"convolution", 2, 1},  // (1 + 1) / (2 + 2) = 0.5 on the GEMM curve
      {"elementwise", 1, 2},                   // 2 on the memory curve: 1.2 and 1.8, so /1.8 and the bandwidth x 1.8
      {"softmax", 4, 1},                       // 0.25 on the softmax rate: 1.25
      {"attention", 1, 2},                     // 2: forward 1.2 limited to 1, backward 0.6
      {"optimizer", 1, 1},                     // no rate in the profile: unchanged
      {"all-reduce", 3, 1},  {"pipeline send", 1, 1},  // (1 + 1) / (3 + 1) = 0.5 on the link's curve
      {"idle compute", 5, 1},                  // folds into nothing
  };
  const calibrate::Recalibration r = calibrate::recalibrated(hand_profile(), "dev", {"wire"}, classes, "a test run");
  const sim::DeviceProfile& d = r.profile.devices.at("dev");
  REQUIRE(d.gemm_efficiency.points.size() == 2);
  CHECK_THAT(d.gemm_efficiency.points[0].second, WithinRel(0.25, 1e-12));
  CHECK_THAT(d.gemm_efficiency.points[1].second, WithinRel(0.4, 1e-12));
  CHECK(d.peak_flops_per_s.at(models::DType::F32) == 100.0);
  CHECK_THAT(d.memory_efficiency.points[0].second, WithinRel(1.2 / 1.8, 1e-12));
  CHECK_THAT(d.memory_efficiency.points[1].second, WithinRel(1.0, 1e-12));
  CHECK_THAT(d.memory_bandwidth_bytes_per_s, WithinRel(18.0, 1e-12));
  // The rate at 1 MB doubles: 18 x 1 against 10 x 0.9.
  CHECK_THAT(d.memory_bandwidth_bytes_per_s * d.memory_efficiency.at(1e6), WithinRel(2 * 10 * 0.9, 1e-12));
  CHECK_THAT(d.softmax_flops_per_s, WithinRel(1.25, 1e-12));
  CHECK(d.optimizer_flops_per_s == 0);
  CHECK(d.attention_efficiency[0].forward.points[0].second == 1.0);
  CHECK_THAT(d.attention_efficiency[0].backward.points[0].second, WithinRel(0.6, 1e-12));
  CHECK(d.sources.at("attention_efficiency").find("limited to an efficiency of 1") != std::string::npos);
  const sim::LinkProfile& l = r.profile.links.at("wire");
  CHECK_THAT(l.efficiency.points[0].second, WithinRel(0.25, 1e-12));
  CHECK_THAT(l.efficiency.points[1].second, WithinRel(0.2, 1e-12));
  CHECK(l.bandwidth_bytes_per_s == 1.0);
  // Each changed figure says so, with its factor, and keeps what it was before.
  CHECK(r.changes == std::vector<std::string>{"gemm_efficiency x 0.5000 (GEMM, convolution)", "attention_efficiency x 2.0000 (attention)",
                                              "memory_efficiency x 2.0000 (elementwise)", "softmax_flops_per_s x 0.2500 (softmax)",
                                              "link wire efficiency x 0.5000 (collectives, pipeline sends)"});
  CHECK(d.sources.at("gemm_efficiency") == "scaled by 0.5000, the GEMM and convolution time predicted over that measured by a test run; before: the sweep");
  CHECK(r.profile.origin == "a test run, over profile \"hand\" (written by the test)");
}

TEST_CASE("execute --recalibrate moves a GEMM curve's excess above 1 into the peak, and attention's curves with it", "[calibrate][recalibrate]") {
  // GEMM 1.5 faster than predicted: 0.5 and 0.8 become 0.75 and 1.2, so /1.2 (0.625, 1) and the
  // peak 100 x 1.2 = 120; attention, relative to that peak, moves by 1/1.2 (0.6 → 0.5).
  const calibrate::Recalibration r = calibrate::recalibrated(hand_profile(), "dev", {}, {{"GEMM", 2, 3}}, "a test run");
  const sim::DeviceProfile& d = r.profile.devices.at("dev");
  CHECK_THAT(d.gemm_efficiency.points[0].second, WithinRel(0.625, 1e-12));
  CHECK_THAT(d.gemm_efficiency.points[1].second, WithinRel(1.0, 1e-12));
  CHECK_THAT(d.peak_flops_per_s.at(models::DType::F32), WithinRel(120.0, 1e-12));
  CHECK_THAT(d.attention_efficiency[0].forward.points[0].second, WithinRel(0.5, 1e-12));
  CHECK(d.memory_efficiency == hand_profile().devices.at("dev").memory_efficiency);  // no elementwise class measured
}
