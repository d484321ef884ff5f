// calibrate/nccl_tests: reading nccl-tests output and fitting a link's latency and efficiency curve.
// The log tests/data/calibrate/all_reduce_8gpu.log has hand-chosen times (its README derives them):
// 8 ranks, so 14 latency steps and a bus factor of 1.75; α = 28 µs / 14 = 2 µs.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "calibrate/nccl_tests.hpp"
#include "common/error.hpp"
#include "sim/cluster.hpp"
#include "sim/collectives.hpp"
#include "sim/profile_json.hpp"

using namespace parasim;
using namespace parasim::calibrate;
using Catch::Matchers::WithinRel;

namespace {

const std::string kLog = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_8gpu.log";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The message parse_nccl_tests throws for `text` (empty when it throws nothing).
std::string parse_error(const std::string& text, std::optional<NcclTest> test = std::nullopt) {
  try {
    (void)parse_nccl_tests(text, "log.txt", test);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

const std::string kHeader =
    "#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n"
    "#  Rank  1 Group  0 Pid 1 on h device  1 [0x0b] GPU\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";

}  // namespace

TEST_CASE("nccl-tests: the rows, ranks, hosts and device of an all_reduce_perf log", "[calibrate][nccl]") {
  const NcclTestsLog log = parse_nccl_tests(read(kLog), kLog);
  CHECK(log.test == NcclTest::AllReduce);
  CHECK(log.ranks == 8);
  CHECK(log.hosts == 1);
  CHECK(log.device == "NVIDIA A100-SXM4-80GB");
  REQUIRE(log.rows.size() == 4);
  // The out-of-place columns: 98.00 µs and 142.86 GB/s for 8,000,000 B on line 20 of the file.
  CHECK(log.rows[2].bytes == 8e6);
  CHECK_THAT(log.rows[2].time_s, WithinRel(98e-6, 1e-12));
  CHECK_THAT(log.rows[2].bus_bytes_per_s, WithinRel(142.86e9, 1e-12));
  CHECK(log.rows[2].line == 20);
}

TEST_CASE("nccl-tests: α from the smallest size, bus bandwidth less the latency at every size whose time exceeds it", "[calibrate][nccl]") {
  const NcclFit fit = fit_nccl_tests(parse_nccl_tests(read(kLog), kLog), kLog);
  // α = 28 µs / 2(8 − 1) = 2 µs (the 8-byte row's faster time: 28.00 out-of-place, 28.10 in-place).
  CHECK_THAT(fit.latency_s, WithinRel(2e-6, 1e-12));
  CHECK(fit.latency_from_log);
  // 65,536 B: 1.75 · 65536 / (30 − 28) µs = 57.344 GB/s; 8e6 B: 1.75 · 8e6 / 70 µs = 200 GB/s;
  // 8e8 B: 1.75 · 8e8 / 5000 µs = 280 GB/s. The 8-byte row is all latency.
  REQUIRE(fit.bus.size() == 3);
  CHECK(fit.bus[0].size == 65536);
  CHECK_THAT(fit.bus[0].rate_per_s, WithinRel(57.344e9, 1e-9));
  CHECK(fit.bus[1].size == 8e6);
  CHECK_THAT(fit.bus[1].rate_per_s, WithinRel(200e9, 1e-9));
  CHECK(fit.bus[2].size == 8e8);
  CHECK_THAT(fit.bus[2].rate_per_s, WithinRel(280e9, 1e-9));
}

TEST_CASE("nccl-tests: the calibrated link gives back the measured all-reduce times", "[calibrate][nccl]") {
  sim::Profile profile = sim::datasheet_profile();
  const sim::LinkProfile link = calibrated_link(profile.link("nvlink3"), parse_nccl_tests(read(kLog), kLog), kLog);
  // Line rate kept (300 GB/s per direction); efficiency 57.344/300 at 65,536 B, 200/300 at 8e6 B
  // and 280/300 at 8e8 B.
  CHECK(link.bandwidth_bytes_per_s == 300e9);
  CHECK_THAT(link.latency_s, WithinRel(2e-6, 1e-12));
  REQUIRE(link.efficiency.points.size() == 3);
  CHECK_THAT(link.efficiency.points[0].second, WithinRel(57.344 / 300, 1e-9));
  CHECK_THAT(link.efficiency.points[1].second, WithinRel(2.0 / 3.0, 1e-9));
  CHECK_THAT(link.efficiency.points[2].second, WithinRel(14.0 / 15.0, 1e-9));
  CHECK(link.sources.at("latency_s").find("all_reduce_8gpu.log") != std::string::npos);
  CHECK(link.sources.at("efficiency").find("200.00, 7") != std::string::npos);  // "… -> 200.00, 762.9 MiB -> 280.00 GB/s"
  // On one DGX A100 with the calibrated NVLink, parasim's ring all-reduce over the 8 GPUs,
  // 2(p−1)·α + 2(p−1)/p · S / (B · e(S)), is the measured time: 28 + 5000 µs and 28 + 70 µs.
  profile.links["nvlink3"] = link;
  sim::ClusterSpec cs = *sim::cluster_preset("dgx-a100");
  cs.nodes = 1;
  const sim::Cluster cluster = sim::build_cluster(cs, profile);
  const std::vector<std::int64_t> all{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK_THAT(sim::collective_time(cluster, sim::CollectiveKind::AllReduce, all, 8e8, sim::CollectiveAlgorithm::Ring).time.seconds(),
             WithinRel(5028e-6, 1e-9));
  CHECK_THAT(sim::collective_time(cluster, sim::CollectiveKind::AllReduce, all, 8e6, sim::CollectiveAlgorithm::Ring).time.seconds(),
             WithinRel(98e-6, 1e-9));
  CHECK_THAT(sim::collective_time(cluster, sim::CollectiveKind::AllReduce, all, 65536, sim::CollectiveAlgorithm::Ring).time.seconds(),
             WithinRel(30e-6, 1e-9));
  // And the profile with it reads back unchanged.
  CHECK(sim::profile_from_json(JsonDocument::parse(sim::to_json(profile).dump(), "p.json")) == profile);
}

TEST_CASE("nccl-tests: a log of several GPUs per node cannot calibrate one NIC", "[calibrate][nccl]") {
  // ib-hdr is 25 GB/s per direction; the 8-GPU log's 57 to 280 GB/s of bus bandwidth are NVLink's.
  const sim::Profile& profile = sim::datasheet_profile();
  try {
    (void)calibrated_link(profile.link("ib-hdr"), parse_nccl_tests(read(kLog), kLog), kLog);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == kLog + ":19:1: found a bus bandwidth of 57.34 GB/s at 64 KiB (latency taken off), above ib-hdr's line rate of "
                                          "25.00 GB/s per direction: the log measured more than one ib-hdr link per device (several GPUs per node "
                                          "in a multi-node test share NVLink and the NICs; calibrate an inter-node link from a test with one GPU per node), "
                                          "or an all-reduce the switch reduced (NVLink SHARP; calibrate the NVLS link: --algorithm nvls --link nvlink4-sharp)");
  }
}

TEST_CASE("nccl-tests: bad logs name the file, line and column", "[calibrate][nccl]") {
  SECTION("a malformed time") {
    CHECK(parse_error(kHeader + "  8  2  float  sum  -1  abc  0.00  0.00  0\n", NcclTest::AllReduce) ==
          "log.txt:4:25: found \"abc\" in the time (us) column, expected a positive number");
  }
  SECTION("a row too short") {
    CHECK(parse_error(kHeader + "  8  2  float\n", NcclTest::AllReduce) == "log.txt:4:9: found 3 fields, expected at least 8 (size ... time algbw busbw)");
  }
  SECTION("a row before the header") {
    CHECK(parse_error("# Collective test starting: all_reduce_perf\n 8 2 float sum -1 28.0 0 0 0\n") ==
          "log.txt:2:2: found a result row before the table header, expected a header line \"#  size  count  type ... time  algbw  busbw ...\"");
  }
  SECTION("no collective named") {
    CHECK(parse_error(kHeader + "  8  2  float  sum  -1  28.0  0.00  0.00  0\n") ==
          "log.txt:1:1: found no \"# Collective test starting: X_perf\" line, expected one (or name the collective: --collective)");
  }
  SECTION("a collective the fit does not model") {
    CHECK(parse_error("# Collective test starting: alltoall_perf\n") ==
          "log.txt:1:29: found the collective \"alltoall_perf\", expected all_reduce_perf, all_gather_perf, reduce_scatter_perf or sendrecv_perf (the "
          "collectives parasim's link calibration fits)");
  }
  SECTION("one rank") {
    CHECK(parse_error("#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] GPU\n#  size count type redop root time algbw busbw\n 8 2 float sum -1 28.0 0 0\n",
                      NcclTest::AllReduce) == "log.txt:1:1: found 1 \"#  Rank\" lines, expected at least two ranks (a collective between devices)");
  }
  SECTION("a log of another collective than asked for") {
    CHECK(parse_error(read(kLog), NcclTest::AllGather) == "log.txt:1:1: the log is of all_reduce, but all_gather was asked for");
  }
}

// An all-gather measured on two ranks over a link already fitted (10 GB/s, α 1 µs): its own curve is
// each size's bus bandwidth, nccl-tests' (n−1)/n = 1/2 of the size over the time less one step's α:
// 2e6 B in 101 µs → 0.5 · 2e6 / 100e-6 = 1e10 B/s, efficiency 1; 2e8 B in 20.001 ms → 0.5 · 2e8 / 0.02
// = 5e9 B/s, 0.5; 8 B in 0.5 µs is all latency and says nothing.
TEST_CASE("nccl-tests: another collective's own curve on a fitted link gives back its times", "[calibrate][nccl]") {
  sim::LinkProfile link;
  link.name = "wire";
  link.bandwidth_bytes_per_s = 1e10;
  link.latency_s = 1e-6;
  link.efficiency.points = {{1, 1.0}};
  NcclTestsLog log;
  log.test = NcclTest::AllGather;
  log.ranks = 2;
  log.hosts = 1;
  log.rows = {{8, 0.5e-6, 0, 0, 1}, {2e6, 101e-6, 0, 0, 2}, {2e8, 0.020001, 0, 0, 3}};
  const sim::LinkProfile fitted = with_collective_curve(link, log, "a test sweep");
  const auto& curve = fitted.collective_efficiency.at(sim::CollectiveKind::AllGather);
  REQUIRE(curve.points.size() == 2);
  CHECK(curve.points[0].first == 2e6);
  CHECK_THAT(curve.points[0].second, WithinRel(1.0, 1e-9));
  CHECK_THAT(curve.points[1].second, WithinRel(0.5, 1e-9));
  CHECK(fitted.efficiency == link.efficiency);  // the all-reduce's curve stays
  CHECK(fitted.sources.at("collective_efficiency.all-gather").rfind("a test sweep, 2 ranks: ", 0) == 0);
  // The ring all-gather on two devices with it: (1/2) · 2e8 / (1e10 · 0.5) + 1 µs = 20.001 ms.
  sim::Cluster c;
  c.nodes = 1;
  c.devices_per_node = 2;
  c.devices = {sim::Device{0, 0, "chip", 1, ""}, sim::Device{1, 0, "chip", 1, ""}};
  c.intra = sim::Link{"wire", 1e10, 1e-6, link.efficiency, {}, fitted.collective_efficiency};
  c.nics_per_node = 2;
  const std::vector<std::int64_t> both{0, 1};
  CHECK_THAT(sim::collective_time(c, sim::CollectiveKind::AllGather, both, 2e8, sim::CollectiveAlgorithm::Ring).time.seconds(), WithinRel(0.020001, 1e-9));
  CHECK_THAT(sim::collective_time(c, sim::CollectiveKind::AllGather, both, 2e6, sim::CollectiveAlgorithm::Ring).time.seconds(), WithinRel(101e-6, 1e-9));
}

// Older layouts (tests/data/calibrate/README.md derives both logs): no '#' at all (2021), or '#'
// without the "Collective test starting" line and with rank lines without "Group" (2022).
TEST_CASE("nccl-tests: older layouts read, the collective named by busbw/algbw where only one fits", "[calibrate][nccl]") {
  const std::string dir = PARASIM_TEST_DATA_DIR "/calibrate/";
  SECTION("2021: nothing commented; all_reduce read from busbw/algbw = 1.75 on 8 ranks, the same fit as the current layout") {
    const std::string file = dir + "all_reduce_8gpu_2021_layout.log";
    const NcclTestsLog old = parse_nccl_tests(read(file), file);
    const NcclTestsLog now = parse_nccl_tests(read(kLog), kLog);
    CHECK(old.test == NcclTest::AllReduce);
    CHECK(old.ranks == 8);
    CHECK(old.rank_lines == 8);
    CHECK(old.hosts == 1);
    CHECK(old.device == "NVIDIA A100-SXM4-80GB");
    REQUIRE(old.rows.size() == now.rows.size());
    for (std::size_t i = 0; i < old.rows.size(); ++i) {
      CHECK(old.rows[i].bytes == now.rows[i].bytes);
      CHECK(old.rows[i].time_s == now.rows[i].time_s);
      CHECK(old.rows[i].in_place_time_s == now.rows[i].in_place_time_s);
    }
    const sim::Profile& profile = sim::datasheet_profile();
    CHECK(calibrated_link(profile.link("nvlink3"), old, file).efficiency == calibrated_link(profile.link("nvlink3"), now, kLog).efficiency);
  }
  SECTION("2022: a reduce_scatter whose busbw/algbw = 0.75 fits all_gather too, so it must be named") {
    const std::string file = dir + "reduce_scatter_4gpu_2022_layout.log";
    try {
      (void)parse_nccl_tests(read(file), file);
      FAIL("parsed without a collective");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == file + ":1:1: found no \"# Collective test starting: X_perf\" line, expected one (or name the collective: --collective); "
                                            "busbw / algbw = 0.750 on 4 ranks fits all_gather or reduce_scatter alike");
    }
    const NcclTestsLog log = parse_nccl_tests(read(file), file, NcclTest::ReduceScatter);
    CHECK(log.ranks == 4);
    CHECK(log.hosts == 4);
    CHECK(log.device == "Tesla V100-SXM2-16GB");
    // α = 9 µs / 3 steps; 78.6432 GB/s of bus bandwidth at both large sizes.
    const NcclFit fit = fit_nccl_tests(log, file);
    CHECK_THAT(fit.latency_s, WithinRel(3e-6, 1e-12));
    REQUIRE(fit.bus.size() == 2);
    CHECK_THAT(fit.bus[0].rate_per_s, WithinRel(78.6432e9, 1e-9));
    CHECK_THAT(fit.bus[1].rate_per_s, WithinRel(78.6432e9, 1e-9));
  }
  SECTION("a time column in another unit than microseconds is refused") {
    std::string text = read(dir + "reduce_scatter_4gpu_2022_layout.log");
    const auto units = text.find("(us)");
    text.replace(units, 4, "(ms)");
    CHECK(parse_error(text, NcclTest::ReduceScatter) == "log.txt:11:50: found the time column's unit \"(ms)\", expected \"(us)\" (nccl-tests prints microseconds)");
  }
}
