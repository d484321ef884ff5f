// calibrate/nccl_tests on logs of NVLink SHARP systems, published by their operators (each file's
// header names its source): an 8x H100 node (NVIDIA/dgxc-benchmarking) whose bus bandwidth, 480 GB/s,
// is above NVLink 4's 450 GB/s line rate, so the ring refuses it and the NVLS model fits it; GB200
// NVL72 racks (coreweave/nccl-tests), one, two and twenty. The calibrated NVLS link must give back
// every line of the log within 5% through collective_time.
//
//   PARASIM_VALIDATION_TABLE=1 ./build/tests/parasim_tests "[nvls]"   # also prints every line's error
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <catch2/catch.hpp>

#include "calibrate/nccl_tests.hpp"
#include "common/error.hpp"
#include "sim/cluster.hpp"
#include "sim/collectives.hpp"

using namespace parasim;
using namespace parasim::calibrate;
using Catch::Matchers::WithinRel;

namespace {

const std::string kH100 = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_8xh100_nvls.log";
const std::string kNvl72 = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_gb200_nvl72_1rack.log";
const std::string kNvl72x2 = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_gb200_nvl72_2racks.log";
const std::string kNvl72x20 = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_gb200_nvl72_20racks.log";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

/// Every row of `log` predicted by `algorithm` over `devices` of `preset` × `nodes` with the datasheet
/// profile and `link` in place of its own: the largest relative error against the row's faster
/// time (printed per row when PARASIM_VALIDATION_TABLE is set).
double worst_error(const NcclTestsLog& log, const sim::LinkProfile& link, const std::string& preset, std::int64_t nodes,
                   sim::CollectiveAlgorithm algorithm, const std::string& title) {
  sim::Profile profile = sim::datasheet_profile();
  profile.links[link.name] = link;
  sim::ClusterSpec spec = *sim::cluster_preset(preset);
  spec.nodes = nodes;
  const sim::Cluster cluster = sim::build_cluster(spec, profile);
  const auto group = iota(cluster.device_count());
  const bool print = std::getenv("PARASIM_VALIDATION_TABLE") != nullptr;
  if (print) std::cout << title << "\n| bytes | measured (us) | predicted (us) | error |\n|---:|---:|---:|---:|\n";
  double worst = 0;
  for (const NcclTestsRow& r : log.rows) {
    const auto e = sim::collective_time(cluster, sim::CollectiveKind::AllReduce, group, r.bytes, algorithm);
    CHECK(e.algorithm == algorithm);
    const double error = e.time.seconds() / r.best_time_s() - 1;
    worst = std::max(worst, std::abs(error));
    INFO("line " << r.line << ": " << r.bytes << " B, measured " << r.best_time_s() * 1e6 << " us, predicted " << e.time.seconds() * 1e6);
    CHECK(std::abs(error) <= 0.05);
    if (print)
      std::cout << "| " << std::fixed << std::setprecision(0) << r.bytes << " | " << std::setprecision(2) << r.best_time_s() * 1e6 << " | "
                << e.time.seconds() * 1e6 << " | " << std::showpos << 100 * error << "%" << std::noshowpos << " |\n";
  }
  if (print) std::cout << "worst |error| " << std::setprecision(2) << 100 * worst << "%\n\n";
  return worst;
}

}  // namespace

TEST_CASE("nccl-tests NVLS log of 8x H100: the ring refuses it, fitted as NVLS it gives back every line within 5%", "[calibrate][nccl][nvls]") {
  const NcclTestsLog log = parse_nccl_tests(read(kH100), kH100, NcclTest::AllReduce);
  CHECK(log.ranks == 8);
  CHECK(log.hosts == 1);
  CHECK(log.device == "NVIDIA H100 80GB HBM3");
  REQUIRE(log.rows.size() == 32);
  // The 32-byte row: 68.14 µs out-of-place, 13.52 µs in-place; the faster one counts.
  CHECK_THAT(log.rows[2].best_time_s(), WithinRel(13.52e-6, 1e-12));

  const sim::Profile& datasheet = sim::datasheet_profile();
  // As a ring over NVLink 4: 1.75 · 16 GiB / (62636 − 14 · 0.93) µs = 480 GB/s, above 450 GB/s.
  try {
    (void)calibrated_link(datasheet.link("nvlink4"), log, kH100);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("above nvlink4's line rate of 450.00 GB/s per direction"));
    CHECK_THAT(std::string(e.what()), Catch::Matchers::EndsWith("calibrate the NVLS link: --algorithm nvls --link nvlink4-sharp)"));
  }

  const sim::LinkProfile link = calibrated_link(datasheet.link("nvlink4-sharp"), log, kH100, {}, sim::CollectiveAlgorithm::Nvls);
  // α: the 8-byte row's 13.03 µs (in-place) over one NVLS step; the line rate kept.
  CHECK_THAT(link.latency_s, WithinRel(13.03e-6, 1e-12));
  CHECK(link.bandwidth_bytes_per_s == 450e9);
  // At 16 GiB: 9/8 · 17179869184 B / (62636 − 13.03) µs = 308.6 GB/s per port, 0.686 of 450 GB/s.
  CHECK_THAT(link.efficiency.at(17179869184.0), WithinRel(9.0 / 8 * 17179869184.0 / (62636e-6 - 13.03e-6) / 450e9, 1e-9));
  CHECK_THAT(link.sources.at("efficiency"), Catch::Matchers::Contains("fitted as an NVLS all-reduce"));
  CHECK(worst_error(log, link, "dgx-h100", 1, sim::CollectiveAlgorithm::Nvls, "8x H100 NVLS (dgxc-benchmarking)") <= 0.05);
  // The datasheet profile's nvlink4-sharp is this calibration (sim/profiles/link_classes.json).
  CHECK_THAT(datasheet.link("nvlink4-sharp").latency_s, WithinRel(link.latency_s, 1e-12));
  CHECK(datasheet.link("nvlink4-sharp").efficiency.points.size() == link.efficiency.points.size());
}

TEST_CASE("nccl-tests NVLS logs of GB200 NVL72: one rack gives back every line within 5%, two and twenty racks import", "[calibrate][nccl][nvls]") {
  const sim::Profile& datasheet = sim::datasheet_profile();
  // The published excerpt prints only the last rank's line, "Rank 71": 72 ranks.
  const NcclTestsLog one = parse_nccl_tests(read(kNvl72), kNvl72, NcclTest::AllReduce);
  CHECK(one.ranks == 72);
  CHECK(one.rank_lines == 1);
  const sim::LinkProfile link = calibrated_link(datasheet.link("nvlink5-sharp"), one, kNvl72, {}, sim::CollectiveAlgorithm::Nvls);
  // Its smallest size, 512 MiB, would take 73/72 · 512 MiB / 900 GB/s = 605 µs even at line rate, more
  // than 1% of its 1806.7 µs: no latency can be read from it, and α stays the base link's.
  CHECK(link.latency_s == datasheet.link("nvlink5-sharp").latency_s);
  CHECK_THAT(link.sources.at("latency_s"), Catch::Matchers::Contains("too large to measure a latency"));
  CHECK(worst_error(one, link, "gb200-nvl72", 1, sim::CollectiveAlgorithm::Nvls, "GB200 NVL72, 1 rack (coreweave/nccl-tests)") <= 0.05);

  // Two racks (144 ranks): fitted as one NVLS step over 144 ranks, then predicted as NVLS-tree over two
  // 72-GPU nodes, whose NVLS stage (73/72 · S per port) outweighs the tree between the racks.
  const NcclTestsLog two = parse_nccl_tests(read(kNvl72x2), kNvl72x2, NcclTest::AllReduce);
  CHECK(two.ranks == 144);
  const sim::LinkProfile link2 = calibrated_link(datasheet.link("nvlink5-sharp"), two, kNvl72x2, {}, sim::CollectiveAlgorithm::Nvls);
  CHECK(worst_error(two, link2, "gb200-nvl72", 2, sim::CollectiveAlgorithm::NvlsTree, "GB200 NVL72, 2 racks (coreweave/nccl-tests)") <= 0.05);

  const NcclTestsLog twenty = parse_nccl_tests(read(kNvl72x20), kNvl72x20, NcclTest::AllReduce);
  CHECK(twenty.ranks == 1440);
  const sim::LinkProfile link20 = calibrated_link(datasheet.link("nvlink5-sharp"), twenty, kNvl72x20, {}, sim::CollectiveAlgorithm::Nvls);
  // Again no latency from 512 MiB (7108.4 µs): one efficiency point per row.
  CHECK(link20.latency_s == datasheet.link("nvlink5-sharp").latency_s);
  CHECK(link20.efficiency.points.size() == 6);
}

TEST_CASE("nccl-tests: NVLS is fitted for all-reduce logs only", "[calibrate][nccl][nvls]") {
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n"
      "#  Rank  1 Group  0 Pid 1 on h device  1 [0x0b] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "        1024           256     float    none      -1    10.00    0.10    0.05      0    10.00    0.10    0.05      0\n";
  try {
    (void)fit_nccl_tests(parse_nccl_tests(text, "ag.log"), "ag.log", sim::CollectiveAlgorithm::Nvls);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "ag.log:1:1: found an all_gather_perf log, expected all_reduce_perf: NVLS is fitted for all-reduce only");
  }
}
