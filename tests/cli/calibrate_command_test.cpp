// `parasim calibrate`, run as a user runs it: the real binary, its exit code, stdout and stderr, the
// profile it writes, and a scenario simulated with that profile.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace {

// What `parasim calibrate` keeps of the memory it frees (exec/host_memory.hpp): glibc's malloc takes
// the setting; AddressSanitizer's own allocator ignores it, and the calibration then says so.
#if defined(__SANITIZE_ADDRESS__)
const std::string kFreedMemory = "freed memory returned to the system";
#else
const std::string kFreedMemory = "freed memory kept for reuse";
#endif

using parasim::testing::q;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;
namespace fs = std::filesystem;

const std::string kLog = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_8gpu.log";
const std::string kResnet = PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-dp-32-a100.json";

}  // namespace

TEST_CASE("parasim calibrate --from-nccl-tests writes a profile that a scenario then runs with", "[cli][calibrate]") {
  const parasim::testing::TempDir dir_temp("calibrate-nccl");
  const std::filesystem::path& dir = dir_temp.path;
  const Run r = run_parasim("calibrate --from-nccl-tests " + q(kLog) + " --link nvlink3 --out " + q(dir / "p.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // α = 28 µs / 14 steps; efficiency 57.344/300, 200/300 and 280/300 (tests/data/calibrate/README.md).
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("parasim calibrate: nvlink3 from nccl-tests all_reduce_perf, 8 ranks on 1 host, NVIDIA A100-SXM4-80GB\n"));
  CHECK_THAT(r.out, Catch::Matchers::Contains("  latency (alpha per ring step)  2.000 us\n"));
  CHECK_THAT(r.out, Catch::Matchers::Contains("  efficiency by message size:  64 KiB 0.191  7.6 MiB 0.667  762.9 MiB 0.933\n"));
  const auto profile = nlohmann::json::parse(slurp(dir / "p.json"));
  CHECK(profile.at("name") == "calibrated");
  CHECK(profile.at("links").at("nvlink3").at("latency_s") == 2e-6);

  const Run run = run_parasim(q(kResnet) + " --profile " + q(dir / "p.json") + " --out " + q(dir / "run") + " --quiet");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto result = nlohmann::json::parse(slurp(dir / "run" / "result.json"));
  CHECK(result.at(0).at("profile").at("name") == "calibrated");
  CHECK_THAT(result.at(0).at("profile").at("origin").get<std::string>(),
             Catch::Matchers::StartsWith("parasim calibrate --from-nccl-tests " + kLog + " (link nvlink3), over the datasheet profile"));
  CHECK_THAT(run.out, Catch::Matchers::Contains("calibrated"));
}

TEST_CASE("parasim calibrate --from-nccl-tests --algorithm nvls imports an NVLS log the ring refuses", "[cli][calibrate][nvls]") {
  const parasim::testing::TempDir dir_temp("calibrate-nvls");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string log = PARASIM_TEST_DATA_DIR "/calibrate/all_reduce_8xh100_nvls.log";
  const Run ring = run_parasim("calibrate --from-nccl-tests " + q(log) + " --collective all_reduce --link nvlink4 --out " + q(dir / "r.json"));
  CHECK(ring.exit_code == 2);
  CHECK_THAT(ring.err, Catch::Matchers::Contains("above nvlink4's line rate of 450.00 GB/s per direction"));
  const Run r = run_parasim("calibrate --from-nccl-tests " + q(log) + " --collective all_reduce --algorithm nvls --link nvlink4-sharp --out " +
                            q(dir / "p.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // α: the 8-byte row's 13.03 µs (in-place) over one NVLS step (tests/calibrate/nccl_tests_nvls_test.cpp).
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("parasim calibrate: nvlink4-sharp from nccl-tests all_reduce_perf, 8 ranks on 1 host, NVIDIA H100 80GB HBM3\n"));
  CHECK_THAT(r.out, Catch::Matchers::Contains("  latency (alpha, one NVLS step)  13.030 us\n"));
  const Run bad = run_parasim("calibrate --from-nccl-tests " + q(log) + " --algorithm tree --link nvlink4 --out " + q(dir / "b.json"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "parasim: error: <command line>: --algorithm: found \"tree\", expected ring or nvls\n");
}

TEST_CASE("parasim calibrate --backend cpu measures this machine's host-cpu", "[cli][calibrate]") {
  const parasim::testing::TempDir dir_temp("calibrate-cpu");
  const std::filesystem::path& dir = dir_temp.path;
  const Run r = run_parasim("calibrate --backend cpu --name this-host --out " + q(dir / "cpu.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("parasim calibrate: host-cpu measured on "));
  CHECK_THAT(r.out, Catch::Matchers::Contains("  fp32 peak (fastest sgemm)      "));
  const auto profile = nlohmann::json::parse(slurp(dir / "cpu.json"));
  CHECK(profile.at("name") == "this-host");
  const auto& cpu = profile.at("devices").at("host-cpu");
  CHECK_THAT(cpu.at("sources").at("gemm_efficiency").get<std::string>(), Catch::Matchers::StartsWith("measured by `parasim calibrate --backend cpu` on "));
  // The fastest GEMM is the peak: the curve reaches 1 exactly.
  bool reaches_one = false;
  for (const auto& point : cpu.at("gemm_efficiency")) reaches_one = reaches_one || point.at(1) == 1.0;
  CHECK(reaches_one);
  // Every other device is still the datasheet's.
  CHECK(profile.at("devices").at("a100-80gb").at("sources").at("gemm_efficiency").get<std::string>().find("Azure") != std::string::npos);
}

TEST_CASE("parasim calibrate --backend cuda and nccl measure a GPU, or exit 3 saying why", "[cli][calibrate]") {
  const parasim::testing::TempDir dir_temp("calibrate-gpu");
  const std::filesystem::path& dir = dir_temp.path;
  for (const std::string backend : {"cuda", "nccl"}) {
    INFO(backend);
    const Run r = run_parasim("calibrate --backend " + backend + " --out " + q(dir / (backend + ".json")));
    if (r.exit_code == 0) {
      CHECK(fs::exists(dir / (backend + ".json")));
      continue;
    }
    WARN("skipped: " << r.err);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("parasim: calibrate cannot run: --backend " + backend + ": "));
    CHECK_FALSE(fs::exists(dir / (backend + ".json")));
  }
}

TEST_CASE("mpirun -np 2 parasim calibrate --backend mpi fits a link to a polled MPI_Iallreduce between the ranks", "[cli][calibrate][mpi]") {
  const parasim::testing::TempDir dir_temp("calibrate-mpi");
  const std::filesystem::path& dir = dir_temp.path;
  // Outside mpirun there is no one to all-reduce with.
  const Run alone = run_parasim("calibrate --backend mpi --link nvlink3 --out " + q(dir / "alone.json"));
  CHECK(alone.exit_code == 3);
  CHECK(alone.err == "parasim: calibrate cannot run: --backend mpi: run it under mpirun with two ranks or more (mpirun -np 2 parasim calibrate --backend mpi ...)\n");
  CHECK_FALSE(fs::exists(dir / "alone.json"));
  if (!parasim::testing::have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  // Two ranks on this machine: shared memory, far below NVLink's line rate, so the fit is accepted
  // (a link whose line rate the ranks exceeded would be refused, as for nccl-tests logs).
  const std::string command = parasim::testing::kMpirun + " -np 2 '" + std::string(PARASIM_BINARY) +
                              "' calibrate --backend mpi --link nvlink3 --out " + q(dir / "mpi.json") + " > " + q(dir / "out") + " 2> " + q(dir / "err");
  const int status = std::system(command.c_str());
  INFO(slurp(dir / "err"));
  REQUIRE(status == 0);
  // Rank 0 alone prints and writes.
  CHECK_THAT(slurp(dir / "out"), Catch::Matchers::StartsWith("parasim calibrate: nvlink3 measured by MPI_Iallreduce, polled as parasim execute runs it, over 2 ranks on 1 host\n"));
  // The other collectives the executor runs, each with its own curve.
  for (const char* other : {"\n    all_gather: ", "\n    reduce_scatter: ", "\n    sendrecv: "}) CHECK_THAT(slurp(dir / "out"), Catch::Matchers::Contains(other));
  const auto profile = nlohmann::json::parse(slurp(dir / "mpi.json"));
  CHECK_THAT(profile.at("origin").get<std::string>(), Catch::Matchers::StartsWith("parasim calibrate --backend mpi, 2 ranks on 1 host (link nvlink3), "));
  const auto& link = profile.at("links").at("nvlink3");
  CHECK(link.at("latency_s").get<double>() > 0);
  CHECK_THAT(link.at("sources").at("efficiency").get<std::string>(), Catch::Matchers::StartsWith("MPI_Iallreduce polled to completion, as parasim execute runs it (each call timed on a rank arriving 200 us after the others, on buffers out of cache (a region untouched for 256 MiB of other calls); " +
                                                                       kFreedMemory + "), by `parasim calibrate --backend mpi`, 2 ranks on 1 host"));
  // Each other collective's own curve (every size but the smallest takes longer than the latency
  // on shared memory), with its source and how far the all-reduce's curve was from it.
  for (const char* kind : {"all-gather", "reduce-scatter", "send-recv"}) {
    INFO(kind);
    CHECK(link.at("collective_efficiency").contains(kind));
    // Swept at every power of two up to 64 MiB: the 16 MiB point (2^24 B) lies between the 8 and
    // 32 MiB points a grid of fours took, where this project's host's reduce-scatter changed speed.
    bool has_16_mib = false;
    for (const auto& point : link.at("collective_efficiency").at(kind)) has_16_mib |= point.at(0).get<double>() == 16777216.0;
    CHECK(has_16_mib);
    CHECK_THAT(link.at("sources").at(std::string("collective_efficiency.") + kind).get<std::string>(),
               Catch::Matchers::StartsWith("polled as parasim execute runs it (each call timed on a rank arriving 200 us after the others, on buffers out of cache (a region untouched for 256 MiB of other calls); " + kFreedMemory +
                                           ") by `parasim calibrate --backend mpi`, 2 ranks: ") &&
                   Catch::Matchers::Contains("; predicted from the all-reduce's curve "));
  }
  // The interference of compute and each collective kind on the ranks, written into their device,
  // host-cpu, with its source: each side's rates below 1 (a side that was not slowed is left out,
  // and a measurement where neither was writes no interference).
  // Each kind at 1, 4, 16 and 64 MiB.
  for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter", "sendrecv"})
    for (const char* size : {"  1 MiB  compute ", "  4 MiB  compute ", " 16 MiB  compute ", " 64 MiB  compute "})
      CHECK_THAT(slurp(dir / "out"), Catch::Matchers::Contains(std::string("\n    ") + kind + " ") && Catch::Matchers::Contains(size) &&
                                         Catch::Matchers::Contains(", the collective "));
  const auto& cpu = profile.at("devices").at("host-cpu");
  CHECK(cpu.contains("interference") == cpu.at("sources").contains("interference"));
  // The ranks' spread: two ranks, the slowest at least their mean (the rounds' sums), with its source
  // and its line in the output.
  REQUIRE(cpu.contains("rank_spread"));
  CHECK(cpu.at("rank_spread").at("ranks") == 2);
  CHECK(cpu.at("rank_spread").at("slowest_over_mean").get<double>() >= 1.0);
  CHECK_THAT(cpu.at("sources").at("rank_spread").get<std::string>(),
             Catch::Matchers::StartsWith("measured by `parasim calibrate --backend mpi` on 2 ranks (") &&
                 Catch::Matchers::Contains("all started together, 21 rounds"));
  CHECK_THAT(slurp(dir / "out"), Catch::Matchers::Contains("\n  rank spread (host-cpu)      the slowest of 2 ranks took "));
  // The kernels with both ranks of the host running them at once: an entry of its own, host-cpu@2,
  // that host-cpu names as its shared-host entry; every figure the CPU calibration measures, each
  // source saying how it was measured; the rank spread carried over (measured on the same ranks).
  REQUIRE(cpu.contains("shared_host"));
  CHECK(cpu.at("shared_host") == nlohmann::json({{"ranks", 2}, {"device", "host-cpu@2"}}));
  CHECK_THAT(cpu.at("sources").at("shared_host").get<std::string>(),
             Catch::Matchers::StartsWith("measured by `parasim calibrate --backend mpi` on 2 ranks (") && Catch::Matchers::Contains("\"host-cpu@2\""));
  REQUIRE(profile.at("devices").contains("host-cpu@2"));
  const auto& shared = profile.at("devices").at("host-cpu@2");
  CHECK_FALSE(shared.contains("shared_host"));
  CHECK(shared.at("rank_spread") == cpu.at("rank_spread"));
  for (const char* figure : {"gemm_efficiency", "memory_efficiency", "gemm_thin_backward_efficiency", "weight_reuse_efficiency", "optimizer_memory_efficiency"}) {
    INFO(figure);
    CHECK(shared.contains(figure));
    CHECK_THAT(shared.at("sources").at(figure).get<std::string>(),
               Catch::Matchers::StartsWith("measured by `parasim calibrate --backend mpi` with 2 ranks of one host running each kernel at the same moment (a barrier before each size; rank 0's times) on "));
  }
  CHECK(shared.at("held_out").size() >= 4);  // the four held-out GEMMs, and the memory passes off the cache's edge
  CHECK_THAT(slurp(dir / "out"), Catch::Matchers::Contains("\n  2 ranks of a host at once (host-cpu@2), each rank's speed:\n    fp32 peak (fastest sgemm)    ") &&
                                     Catch::Matchers::Contains("\n    memory pass 256 MiB          ") &&
                                     Catch::Matchers::Contains("\n    held-out shapes (median measured, predicted from these figures, error):\n      sgemm 512x1536x512: "));
  if (cpu.contains("interference")) {
    CHECK_THAT(cpu.at("sources").at("interference").get<std::string>(),
               Catch::Matchers::StartsWith("measured by `parasim calibrate --backend mpi` on 2 x MPI ranks on "));
    // The rates at 16 MiB, and by size where some size's rate is below 1: [bytes, rate] points at
    // the four sizes.
    for (const auto& [side, rates] : cpu.at("interference").items())
      for (const auto& [kind, rate] : rates.items()) {
        INFO(side << " " << kind);
        if (side.ends_with("_by_size")) {
          REQUIRE(rate.size() == 4);
          for (std::size_t i = 0; i < 4; ++i) {
            CHECK(rate[i].at(0).get<double>() == double(std::int64_t{1} << (20 + 2 * i)));
            CHECK((rate[i].at(1).get<double>() > 0 && rate[i].at(1).get<double>() <= 1));
          }
        } else {
          CHECK((rate.get<double>() > 0 && rate.get<double>() < 1));
        }
      }
  }
}

TEST_CASE("parasim calibrate: bad input exits 2 naming what is wrong, and writes nothing", "[cli][calibrate]") {
  const parasim::testing::TempDir dir_temp("calibrate-bad");
  const std::filesystem::path& dir = dir_temp.path;
  const std::string out = " --out " + q(dir / "p.json");
  SECTION("neither a backend nor a log") {
    const Run r = run_parasim("calibrate" + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: give one of --backend cpu|cuda|nccl|mpi|loader (measure this machine), --from-nccl-tests LOG or --from-csv FILE (read results)\n");
  }
  SECTION("a kernel CSV with a bad cell") {
    std::ofstream(dir / "k.csv") << "kernel,seconds,bytes\nmemory,fast,8\n";
    const Run r = run_parasim("calibrate --from-csv " + q(dir / "k.csv") + " --device host-cpu" + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "k.csv").string() + ":2:8: found \"fast\" in the seconds column, expected a positive number\n");
    CHECK_FALSE(fs::exists(dir / "p.json"));
  }
  SECTION("an unknown backend") {
    const Run r = run_parasim("calibrate --backend cpus" + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --backend: found \"cpus\", expected \"cpu\", \"cuda\", \"nccl\", \"mpi\" or \"loader\" (did you mean \"cpu\"?)\n");
  }
  SECTION("a log without --link") {
    const Run r = run_parasim("calibrate --from-nccl-tests " + q(kLog) + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --from-nccl-tests needs --link NAME: the link class the log measured (nvlink3, ib-hdr, ...)\n");
  }
  SECTION("a link the profile does not have") {
    const Run r = run_parasim("calibrate --from-nccl-tests " + q(kLog) + " --link nvlnk3" + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("parasim: error: <command line>: --link: found \"nvlnk3\", expected a link class of profile \"calibrated\" "
                                                  "(did you mean \"nvlink3\"?): "));
  }
  SECTION("a log whose bus bandwidth is above the link's line rate") {
    const Run r = run_parasim("calibrate --from-nccl-tests " + q(kLog) + " --link ib-hdr" + out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("parasim: error: " + kLog + ":19:1: found a bus bandwidth of 57.34 GB/s"));
  }
  SECTION("mpi without --link") {
    const Run r = run_parasim("calibrate --backend mpi" + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --backend mpi needs --link NAME: the link class between the ranks (ib-hdr, ethernet-100, ...)\n");
  }
  SECTION("a log that cannot be read") {
    const Run r = run_parasim("calibrate --from-nccl-tests " + q(dir / "missing.log") + " --link nvlink3" + out);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + (dir / "missing.log").string() + ": cannot open the file for reading\n");
  }
  CHECK_FALSE(fs::exists(dir / "p.json"));
}

// Kernel timings measured elsewhere: the fp32 GEMM rows (2·512³ = 268,435,456 FLOPs in 2.5 ms, 2·2048³
// = 17,179,869,184 FLOPs in 125 ms: 107.4 and 137.4 GFLOP/s) become host-cpu's fp32 peak and curve,
// and a scenario on host-cpu runs with the profile.
TEST_CASE("parasim calibrate --from-csv writes a profile with the rows' curves", "[cli][calibrate][csv]") {
  const parasim::testing::TempDir dir_temp("calibrate-csv");
  const std::filesystem::path& dir = dir_temp.path;
  std::ofstream(dir / "k.csv") << "kernel,dtype,m,n,k,bytes,seconds\ngemm,fp32,512,512,512,,0.0025\ngemm,fp32,2048,2048,2048,,0.125\n";
  const Run r = run_parasim("calibrate --from-csv " + q(dir / "k.csv") + " --device host-cpu --out " + q(dir / "p.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("parasim calibrate: host-cpu from 2 kernel timings in " + (dir / "k.csv").string() +
                                                " (2 GEMM, 0 memory)\n  fp32 peak (fastest row)        0.137 TFLOP/s\n"));
  const auto profile = nlohmann::json::parse(slurp(dir / "p.json"));
  const auto& cpu = profile.at("devices").at("host-cpu");
  CHECK_THAT(cpu.at("peak_flops_per_s").at("fp32").get<double>(), Catch::Matchers::WithinRel(17179869184.0 / 0.125, 1e-12));
  CHECK_THAT(cpu.at("gemm_efficiency").at(0).at(1).get<double>(), Catch::Matchers::WithinRel((268435456.0 / 0.0025) / (17179869184.0 / 0.125), 1e-12));
  CHECK_THAT(profile.at("origin").get<std::string>(), Catch::Matchers::StartsWith("parasim calibrate --from-csv "));
  const Run run = run_parasim(q(std::string(PARASIM_TEST_DATA_DIR) + "/execute/tiny-gpt-2.json") + " --profile " + q(dir / "p.json") + " --out " + q(dir / "run"));
  INFO(run.err);
  CHECK(run.exit_code == 0);
}
