// calibrate/gpu: the GPU device profile from a measurement written by hand (every figure derived
// below), the device names, and the measurements themselves, which skip with a message where this
// build has no CUDA support or the machine no GPU.
#include <catch2/catch.hpp>

#include "calibrate/gpu.hpp"
#include "common/error.hpp"
#include "sim/cost_model.hpp"
#include "sim/profile_json.hpp"

using namespace parasim;
using namespace parasim::calibrate;
using Catch::Matchers::WithinRel;

TEST_CASE("calibrate gpu: CUDA device names map to profile devices", "[calibrate][gpu]") {
  CHECK(profile_device_for("NVIDIA A100-SXM4-80GB") == "a100-80gb");
  CHECK(profile_device_for("NVIDIA A100-SXM4-40GB") == "a100-40gb");
  CHECK(profile_device_for("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(profile_device_for("NVIDIA H200") == "h200");
  CHECK(profile_device_for("Tesla V100-SXM2-32GB") == "v100");
  CHECK(profile_device_for("NVIDIA GeForce RTX 4090") == std::nullopt);
}

TEST_CASE("calibrate gpu: efficiencies against the datasheet peak and bandwidth", "[calibrate][gpu]") {
  const sim::Profile& datasheet = sim::datasheet_profile();
  const sim::DeviceProfile& a100 = datasheet.device("a100-80gb");  // 312 TFLOP/s fp16, 2.039 TB/s
  CudaMeasurement m;
  m.device_name = "NVIDIA A100-SXM4-80GB";
  m.gemm = {{2.0 * 1024 * 1024 * 1024, 156e12}, {2.0 * 8192.0 * 8192 * 8192, 249.6e12}};
  m.copy = {{2.0 * (1 << 30), 1.6312e12}};
  m.launch_overhead_s = 4e-6;
  m.memory_capacity_bytes = 85e9;
  const sim::DeviceProfile d = calibrated_gpu(a100, m, "test");
  // 156/312 = 0.5 and 249.6/312 = 0.8; 1.6312/2.039 = 0.8. Peaks and bandwidth stay the datasheet's.
  REQUIRE(d.gemm_efficiency.points.size() == 2);
  CHECK_THAT(d.gemm_efficiency.points[0].second, WithinRel(0.5, 1e-12));
  CHECK_THAT(d.gemm_efficiency.points[1].second, WithinRel(0.8, 1e-12));
  CHECK_THAT(d.memory_efficiency.points[0].second, WithinRel(0.8, 1e-12));
  CHECK(d.peak_flops_per_s == a100.peak_flops_per_s);
  CHECK(d.memory_bandwidth_bytes_per_s == a100.memory_bandwidth_bytes_per_s);
  CHECK(d.kernel_launch_overhead_s == 4e-6);
  CHECK(d.memory_capacity_bytes == 85e9);
  sim::Profile p = datasheet;
  p.devices["a100-80gb"] = d;
  CHECK(sim::profile_from_json(JsonDocument::parse(sim::to_json(p).dump(), "p.json")) == p);

  SECTION("a rate above the datasheet names another device") {
    m.gemm.push_back({2.0 * 16384.0 * 16384 * 16384, 600e12});
    try {
      (void)calibrated_gpu(a100, m, "--backend cuda");
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == "--backend cuda: measured 600.000 T/s of fp16 GEMM FLOPs, above a100-80gb's datasheet 312.000: the GPU "
                                     "(NVIDIA A100-SXM4-80GB) is not a a100-80gb; name its profile device with --device");
    }
  }
}

TEST_CASE("calibrate gpu: the executor's own memory-bound kernel, softmax and thin GEMMs", "[calibrate][gpu]") {
  const sim::DeviceProfile& a100 = sim::datasheet_profile().device("a100-80gb");  // 312 TFLOP/s fp16, 2.039 TB/s
  CudaMeasurement m;
  m.device_name = "NVIDIA A100-SXM4-80GB";
  m.gemm = {{2.0 * 1024 * 1024 * 1024, 156e12}, {2.0 * 8192.0 * 8192 * 8192, 249.6e12}};
  m.copy = {{2.0 * (1 << 30), 1.4273e12}};
  m.launch_overhead_s = 4e-6;
  m.memory_capacity_bytes = 85e9;
  // A 1 MiB pass served from L2 at twice the datasheet bandwidth counts at the datasheet's (1.0);
  // a 1 GiB pass at 1.6312 TB/s is 0.8 of 2.039. The kernel's curve replaces the copy's (0.7).
  m.memory = {{double(1 << 20), 4.078e12}, {double(1 << 30), 1.6312e12}};
  m.softmax_flops_per_s = 1.5e12;
  const sim::DeviceProfile square = calibrated_gpu(a100, m, "test");
  // Thin GEMMs timed at twice the square curve's time for their FLOPs (64) and at 1.25 times
  // (4096): factors 0.5 and 0.8, and over the widest's (0.8) 0.625 and 1.
  auto square_s = [&](std::int64_t dim) {
    const double flops = 2.0 * static_cast<double>(dim) * 8192.0 * 8192.0;
    return sim::kernel_seconds(square, models::OpClass::Gemm, models::DType::F16, flops, 0, flops, 1);
  };
  m.thin_other = 8192;
  m.thin = {{64, {2 * square_s(64), 2 * square_s(64), 2 * square_s(64)}}, {4096, {1.25 * square_s(4096), 1.25 * square_s(4096), 1.25 * square_s(4096)}}};
  const sim::DeviceProfile d = calibrated_gpu(a100, m, "test");
  REQUIRE(d.memory_efficiency.points.size() == 2);
  CHECK_THAT(d.memory_efficiency.points[0].second, WithinRel(1.0, 1e-12));
  CHECK_THAT(d.memory_efficiency.points[1].second, WithinRel(0.8, 1e-12));
  CHECK(d.softmax_flops_per_s == 1.5e12);
  REQUIRE(d.gemm_thin_efficiency.points.size() == 2);
  CHECK(d.gemm_thin_efficiency.points[0].first == 64);
  CHECK_THAT(d.gemm_thin_efficiency.points[0].second, WithinRel(0.625, 1e-9));
  CHECK_THAT(d.gemm_thin_efficiency.points[1].second, WithinRel(1.0, 1e-9));
  CHECK(d.gemm_efficiency == square.gemm_efficiency);
  CHECK(d.sources.count("gemm_thin_efficiency") == 1);
  CHECK(d.sources.count("softmax_flops_per_s") == 1);

  SECTION("only passes beyond any L2 say whether the GPU is the profile's device") {
    m.memory.push_back({double(1) * (1 << 30) * 2, 3e12});  // 2 GiB above 2.039 TB/s: not an A100
    CHECK_THROWS_AS(calibrated_gpu(a100, m, "--backend cuda"), InputError);
  }
}

TEST_CASE("calibrate gpu: the CUDA and NCCL measurements run where there is a GPU, and say why not elsewhere", "[calibrate][gpu]") {
  CudaOptions small;
  small.gemm_sizes = {256, 1024};
  small.copy_bytes = {1 << 20};
  small.min_seconds_per_size = 0.001;
  const auto cuda = measure_cuda(small);
  if (const auto* u = std::get_if<Unavailable>(&cuda)) {
    WARN("skipped: " << u->reason);
    CHECK_FALSE(u->reason.empty());
  } else {
    const auto& m = std::get<CudaMeasurement>(cuda);
    CHECK_FALSE(m.device_name.empty());
    REQUIRE(m.gemm.size() == 2);
    CHECK(m.gemm[0].size == 2.0 * 256 * 256 * 256);
    for (const Sample& s : m.gemm) CHECK(s.rate_per_s > 0);
    REQUIRE(m.copy.size() == 1);
    CHECK(m.copy[0].size == 2.0 * (1 << 20));
    CHECK(m.memory_capacity_bytes > 0);
  }
  NcclOptions nccl;
  nccl.bytes = {1 << 10, 1 << 24};
  nccl.iterations = 5;
  const auto all_reduce = measure_nccl(nccl);
  if (const auto* u = std::get_if<Unavailable>(&all_reduce)) {
    WARN("skipped: " << u->reason);
    CHECK_FALSE(u->reason.empty());
  } else {
    const auto& log = std::get<NcclTestsLog>(all_reduce);
    CHECK(log.ranks >= 2);
    REQUIRE(log.rows.size() == 2);
    CHECK(log.rows[1].bytes == double(1 << 24));
    CHECK(log.rows[1].time_s > 0);
  }
}

TEST_CASE("calibrate gpu: interference from a GEMM timed alone and beside an all-reduce", "[calibrate][gpu][interference]") {
  const sim::DeviceProfile& h100 = sim::datasheet_profile().device("h100-sxm");
  InterferenceMeasurement m;
  m.device_name = "NVIDIA H100 80GB HBM3";
  m.ranks = 8;
  m.gemm_n = 8192;
  m.collective_bytes = double(1 << 28);
  // GEMM 2.000 ms alone, 2.500 ms beside: compute keeps 2 / 2.5 = 0.8. All-reduce 1.000 ms alone,
  // 1.250 ms beside: it keeps 0.8 too.
  m.gemm_alone_s = 2e-3;
  m.gemm_beside_s = 2.5e-3;
  m.collective_alone_s = 1e-3;
  m.collective_beside_s = 1.25e-3;
  const sim::DeviceProfile d = calibrated_interference(h100, {m}, "--backend nccl");
  for (std::size_t k = 0; k <= static_cast<std::size_t>(sim::CollectiveKind::SendRecv); ++k) {
    CHECK_THAT(d.interference.compute[k], WithinRel(0.8, 1e-12));
    CHECK_THAT(d.interference.communication[k], WithinRel(0.8, 1e-12));
  }
  // Transformer Engine's userbuffers rates and NCCL's channel count stay the datasheet's.
  CHECK(d.interference.compute[6] == h100.interference.compute[6]);
  CHECK(d.interference.compute[7] == h100.interference.compute[7]);
  CHECK(d.interference.nccl_channels_in_node == h100.interference.nccl_channels_in_node);
  CHECK(d.sources.at("interference").find("2.000 ms alone and 2.500 ms beside a 256 MiB ncclAllReduce") != std::string::npos);
  // Beside a collective the GEMM ran faster than alone: the rate stays 1 (no speed-up from overlap).
  m.gemm_beside_s = 1.5e-3;
  CHECK(calibrated_interference(h100, {m}, "--backend nccl").interference.compute[0] == 1.0);
  m.gemm_beside_s = 0;
  CHECK_THROWS_AS(calibrated_interference(h100, {m}, "--backend nccl"), InputError);

  CHECK_THROWS_AS(calibrated_interference(h100, {}, "--backend nccl"), InputError);

  // Each collective kind measured gets its own rates; the all-reduce's stand for the kinds none
  // names. All-gather: the GEMM 2 ms alone and 4 ms beside (compute keeps 2 / 4 = 0.5), the
  // all-gather 1 ms alone and 2 ms beside (it keeps 0.5).
  m.gemm_beside_s = 2.5e-3;
  InterferenceMeasurement gather = m;
  gather.collective = NcclTest::AllGather;
  gather.gemm_beside_s = 4e-3;
  gather.collective_beside_s = 2e-3;
  const sim::DeviceProfile both = calibrated_interference(h100, {gather, m}, "--backend mpi");
  const auto all_gather = static_cast<std::size_t>(sim::CollectiveKind::AllGather);
  for (std::size_t k = 0; k <= static_cast<std::size_t>(sim::CollectiveKind::SendRecv); ++k) {
    CHECK_THAT(both.interference.compute[k], WithinRel(k == all_gather ? 0.5 : 0.8, 1e-12));
    CHECK_THAT(both.interference.communication[k], WithinRel(k == all_gather ? 0.5 : 0.8, 1e-12));
  }
  CHECK(both.sources.at("interference").find("all_reduce stands for reduce-scatter, all-to-all, broadcast and send-recv") != std::string::npos);
  // With no all-reduce measured, the first measurement stands for the others.
  const sim::DeviceProfile alone = calibrated_interference(h100, {gather}, "--backend mpi");
  CHECK_THAT(alone.interference.communication[static_cast<std::size_t>(sim::CollectiveKind::AllReduce)], WithinRel(0.5, 1e-12));

  // A kind measured at several sizes gets its rates by size, and as its one rate the measurement
  // nearest 16 MiB. The all-reduce at 4 MiB: compute 2 / 2.5 = 0.8, the collective 1 / 1.25 = 0.8;
  // at 64 MiB: the GEMM 4 ms beside (0.5), the all-reduce 2 ms beside (0.5). 64 MiB is 2 powers of
  // two from 16 MiB, 4 MiB 2 as well: the first, 4 MiB, stays the one rate.
  InterferenceMeasurement at_4 = m, at_64 = m;
  at_4.collective_bytes = double(4 << 20);
  at_4.collective_beside_s = 1.25e-3;
  at_64.collective_bytes = double(64 << 20);
  at_64.gemm_beside_s = 4e-3;
  at_64.collective_beside_s = 2e-3;
  const sim::DeviceProfile sized = calibrated_interference(h100, {at_64, at_4, gather}, "--backend mpi");
  const auto all_reduce = static_cast<std::size_t>(sim::CollectiveKind::AllReduce);
  const auto send_recv = static_cast<std::size_t>(sim::CollectiveKind::SendRecv);
  for (const std::size_t k : {all_reduce, send_recv}) {  // send-recv: the all-reduce stands for it
    INFO(k);
    CHECK(sized.interference.compute_by_size[k].points == std::vector<std::pair<double, double>>{{double(4 << 20), 0.8}, {double(64 << 20), 0.5}});
    CHECK(sized.interference.communication_by_size[k].points == std::vector<std::pair<double, double>>{{double(4 << 20), 0.8}, {double(64 << 20), 0.5}});
    CHECK_THAT(sized.interference.compute[k], WithinRel(0.8, 1e-12));
    // At 16 MiB, half way in log2: 0.65.
    CHECK_THAT(sized.interference.compute_at(k, double(16 << 20)), WithinRel(0.65, 1e-12));
  }
  // The all-gather, measured at one size, has its one rate at every size.
  CHECK(sized.interference.compute_by_size[all_gather].points.empty());
  CHECK_THAT(sized.interference.compute_at(all_gather, 1e9), WithinRel(0.5, 1e-12));
  // Two measurements of one kind at one size: which to take is not said.
  CHECK_THROWS_AS(calibrated_interference(h100, {at_4, at_4}, "--backend mpi"), InputError);

  // Each side the slowest rank's: rank 0's GEMM kept 2 / 4 = 0.5 of its speed (rank 1's 2 / 2.5 =
  // 0.8), rank 1's collective 1 / 2 = 0.5 (rank 0's 1 / 1.25 = 0.8).
  const RankInterference slowest = slowest_rank({{2e-3, 4e-3, 1e-3, 1.25e-3}, {2e-3, 2.5e-3, 1e-3, 2e-3}});
  CHECK(slowest.gemm_alone_s == 2e-3);
  CHECK(slowest.gemm_beside_s == 4e-3);
  CHECK(slowest.collective_alone_s == 1e-3);
  CHECK(slowest.collective_beside_s == 2e-3);

  InterferenceOptions small;
  small.gemm_n = 1024;
  small.collective_bytes = double(1 << 20);
  small.gemms = 4;
  const auto measured = measure_interference(small);
  if (const auto* u = std::get_if<Unavailable>(&measured)) {
    WARN("skipped: " << u->reason);
    CHECK_FALSE(u->reason.empty());
  } else {
    const auto& got = std::get<InterferenceMeasurement>(measured);
    CHECK(got.ranks >= 2);
    CHECK(got.gemm_alone_s > 0);
    CHECK(got.gemm_beside_s > 0);
    CHECK(got.collective_alone_s > 0);
    CHECK(got.collective_beside_s > 0);
  }
}
