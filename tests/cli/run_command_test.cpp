// `parasim SCENARIO.json`, run as a user runs it: every bundled example, its four outputs, determinism,
// bad input (exit 2) and a plan that does not fit (exit 3).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

namespace {
const std::string kExamples = PARASIM_SOURCE_DIR "/scenarios/examples/";

using parasim::testing::q;

// Writes a scenario text into `dir` and returns its path.
std::filesystem::path scenario_file(const std::filesystem::path& dir, const std::string& text) {
  const auto path = dir / "s.json";
  std::ofstream(path) << text;
  return path;
}

const char* kSmall = R"({
  "name": "small",
  "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 16, "micro_batch": 2, "precision": "fp16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 }
})";
}  // namespace

TEST_CASE("every bundled example runs and writes the table, result.json, report.md and trace.json", "[cli][run]") {
  const std::string example = GENERATE("bert-large-8-v100-pcie", "gpt3-175b-1024-a100", "llama3-70b-512-h100", "resnet50-dp-32-a100",
                                       "tpu-v4-64-gpt3-13b", "wide-resnet50-2-cifar100");
  INFO(example);
  const parasim::testing::TempDir out_temp("example");
  const std::filesystem::path& out = out_temp.path;
  const Run r = run_parasim(q(kExamples + example + ".json") + " --out " + q(out));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // The table names the backend and the profile behind every figure.
  CHECK_THAT(r.out, Catch::Matchers::Contains("the analytical backend with profile \"datasheet\" (built-in datasheet figures)"));
  const auto results = nlohmann::json::parse(slurp(out / "result.json"));
  REQUIRE(results.is_array());
  CHECK(results.at(0).at("schema") == "parasim.result/1");
  CHECK(results.at(0).at("variant") == "base");
  CHECK(results.size() >= 2);  // every example carries what-ifs
  CHECK_THAT(slurp(out / "report.md"), Catch::Matchers::StartsWith("# "));
  // The trace parses; its processes are distinct devices, each with a name and its stream threads.
  const auto trace = nlohmann::json::parse(slurp(out / "trace.json"));
  std::set<std::int64_t> processes, named, devices;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") processes.insert(e.at("pid").get<std::int64_t>());
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      named.insert(e.at("pid").get<std::int64_t>());
      if (e.at("args").at("name").get<std::string>().starts_with("device ")) devices.insert(e.at("pid").get<std::int64_t>());
    }
  }
  CHECK(!processes.empty());
  CHECK(processes == named);
  // Every process but one is a device; the other holds the tracks of the most loaded links.
  CHECK(named.size() == devices.size() + 1);
  // Up to 64 simulated devices are traced whole (identical data-parallel replicas are simulated once);
  // more, one replica or one device per pipeline stage.
  const std::int64_t simulated = results.at(0).at("simulated_device_count");
  if (simulated <= 64) CHECK(static_cast<std::int64_t>(devices.size()) == simulated);
}

TEST_CASE("trace-devices 0 traces every device as one process each", "[cli][run]") {
  const parasim::testing::TempDir dir_temp("trace");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = scenario_file(dir, kSmall);
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --trace-devices 0 --no-replica-shortcut");
  REQUIRE(r.exit_code == 0);
  const auto trace = nlohmann::json::parse(slurp(dir / "out" / "trace.json"));
  std::set<std::int64_t> pids;
  std::set<std::pair<std::int64_t, std::int64_t>> threads;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") pids.insert(e.at("pid").get<std::int64_t>());
    if (e.at("ph") == "M" && e.at("name") == "thread_name") threads.insert({e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()});
  }
  // tp 2 × pp 2 × dp 2 = 8 devices; 5 streams each (compute, comm.tp, comm.dp, comm.ep, p2p); then
  // the links process (pid 8).
  CHECK(pids == std::set<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  std::int64_t device_threads = 0;
  for (const auto& [pid, tid] : threads) device_threads += pid < 8 ? 1 : 0;
  CHECK(device_threads == 8 * 5);
  CHECK(nlohmann::json::parse(slurp(dir / "out" / "result.json")).at(0).at("replica_shortcut") == false);
}

TEST_CASE("identical data-parallel replicas are simulated once and the outputs say so", "[cli][run]") {
  const parasim::testing::TempDir dir_temp("shortcut");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = scenario_file(dir, kSmall);
  const Run shortcut = run_parasim(q(scenario) + " --out " + q(dir / "a"));
  const Run full = run_parasim(q(scenario) + " --out " + q(dir / "b") + " --no-replica-shortcut");
  REQUIRE(shortcut.exit_code == 0);
  REQUIRE(full.exit_code == 0);
  // tp 2 × pp 2 × dp 2: one replica is tp × pp = 4 of the 8 devices.
  CHECK_THAT(shortcut.out, Catch::Matchers::Contains("identical data-parallel replicas simulated once (4 of 8 devices)"));
  const auto a = nlohmann::json::parse(slurp(dir / "a" / "result.json")).at(0);
  const auto b = nlohmann::json::parse(slurp(dir / "b" / "result.json")).at(0);
  CHECK(a.at("replica_shortcut") == true);
  CHECK(a.at("simulated_device_count") == 4);
  // Identical replicas reach every gradient all-reduce together: the step, its breakdown and the
  // traffic are the same whether one replica or both are simulated.
  CHECK(a.at("step_time_s") == b.at("step_time_s"));
  CHECK(a.at("time_breakdown_mean") == b.at("time_breakdown_mean"));
  CHECK(a.at("communication") == b.at("communication"));
}

TEST_CASE("the same scenario gives byte-identical result.json, report.md and trace.json", "[cli][run]") {
  const parasim::testing::TempDir dir_temp("determinism");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = scenario_file(dir, kSmall);
  REQUIRE(run_parasim(q(scenario) + " --out " + q(dir / "a")).exit_code == 0);
  REQUIRE(run_parasim(q(scenario) + " --out " + q(dir / "b")).exit_code == 0);
  for (const char* f : {"result.json", "report.md", "trace.json"}) {
    INFO(f);
    CHECK(slurp(dir / "a" / f) == slurp(dir / "b" / f));
  }
}

TEST_CASE("bad scenarios exit 2 naming file, line, column and pointer, and write nothing", "[cli][run]") {
  const parasim::testing::TempDir dir_temp("bad");
  const std::filesystem::path& dir = dir_temp.path;
  struct Case {
    std::string text, message;
  };
  const auto c = GENERATE(
      // The stray comma at line 1, column 11 is where nlohmann's parser stops.
      Case{"{\"name\": ,}", "s.json:1:10: malformed JSON"},
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "dgx-a100"}, "pln": {}})",
           "at /pln: unknown key \"pln\" (did you mean \"plan\"?)"},
      // gpt2 has 12 heads: tp 8 does not divide them.
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "dgx-a100"}, "plan": {"tp": 8}})",
           "at /plan/tp: tp (8) does not divide the 12 attention heads of the model"},
      // 2 × 2 × 4 = 16 ≠ the 8 devices of one node.
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "dgx-a100"}, "plan": {"tp": 2, "pp": 2, "dp": 4}})",
           "at /plan/dp: the mesh tp × pp × dp = 2 × 2 × 4 = 16 devices does not match the cluster's 8 devices"},
      // Topologies: node groups that do not cover the devices, a link of zero bandwidth, torus dims
      // whose product is not the device count.
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "dgx-a100", "nodes": 2, "node_groups": [{"nodes": 1}]}})",
           ":1:138: at /cluster/node_groups: the node groups hold 1 nodes, but the cluster has 2 (nodes)"},
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "dgx-a100", "inter_node": {"bandwidth_gbps": 0}}})",
           ":1:144: at /cluster/inter_node/bandwidth_gbps: found integer 0, expected a number >= 0.001"},
      Case{R"({"name": "x", "model": {"preset": "gpt2"}, "training": {"global_batch": 8}, "cluster": {"preset": "tpu-v4-pod", "nodes": 2, "inter_node": {"torus_dims": [2, 2, 3]}}})",
           "at /cluster/inter_node/torus_dims: a 2x2x3 torus does not hold the cluster's 8 devices (2 nodes x 4)"});
  INFO(c.text);
  const auto scenario = scenario_file(dir, c.text);
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Matchers::Contains(scenario.string()));
  CHECK_THAT(r.err, Catch::Matchers::Contains(c.message));
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_CASE("a plan that does not fit exits 3 with the stage, the peak and the capacity unless allow-oom", "[cli][run]") {
  const parasim::testing::TempDir dir_temp("oom");
  const std::filesystem::path& dir = dir_temp.path;
  // GPT-3 175B on one DGX A100: 175e9 parameters × 16 bytes / 8 devices = 350 GB per device > 79 GiB.
  const auto scenario = scenario_file(dir, R"({"name": "oom", "model": {"preset": "gpt3-175b"}, "training": {"global_batch": 8},
    "cluster": {"preset": "dgx-a100"}, "plan": {"tp": 8}})");
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out"));
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Matchers::Contains("the plan does not fit in device memory"));
  CHECK_THAT(r.err, Catch::Matchers::Contains("pipeline stage 0 needs"));
  CHECK_THAT(r.err, Catch::Matchers::Contains("capacity 79.00 GiB"));
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  const Run allowed = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --allow-oom");
  CHECK(allowed.exit_code == 0);
  CHECK_THAT(allowed.out, Catch::Matchers::Contains("DOES NOT FIT"));
  CHECK(std::filesystem::exists(dir / "out" / "result.json"));
}

TEST_CASE("every file parasim reads is a regular file under its kind's limit, refused at once otherwise", "[cli][reliability]") {
  // parasim /dev/zero read until the kernel killed it at 22.8 GB; now each reader checks what the
  // file is and how large before it reads (common/input_file.hpp).
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "/dev/zero: is not a regular file (a device, a pipe or a socket); expected a JSON file of at most 512 MiB"},
      {"'" PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-dp-32-a100.json' --profile /dev/urandom",
       "/dev/urandom: is not a regular file (a device, a pipe or a socket); expected a JSON file of at most 512 MiB"},
      {"report /dev/zero", "/dev/zero: is not a regular file (a device, a pipe or a socket); expected a JSON file of at most 512 MiB"},
      {"calibrate --from-nccl-tests /dev/zero --link nvlink3 --out p.json",
       "/dev/zero: is not a regular file (a device, a pipe or a socket); expected an nccl-tests log of at most 64 MiB"},
      {"calibrate --from-csv /dev/zero --device h100-sxm --out p.json",
       "/dev/zero: is not a regular file (a device, a pipe or a socket); expected a kernel-timing CSV of at most 64 MiB"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Run r = run_parasim(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + message + "\n");
  }
  // A sparse file over the limit is refused from its size, without reading it.
  const parasim::testing::TempDir dir_temp("input-limit");
  const std::filesystem::path& dir = dir_temp.path;
  {
    std::ofstream big(dir / "big.json", std::ios::binary);
    big.seekp(static_cast<std::streamoff>((std::uintmax_t{512} << 20) + 1) - 1);
    big.put('\0');
  }
  const Run big = run_parasim(parasim::testing::q(dir / "big.json"));
  CHECK(big.exit_code == 2);
  CHECK(big.err == "parasim: error: " + (dir / "big.json").string() + ": is larger than the 512 MiB a JSON file may be (536870913 bytes)\n");
}
