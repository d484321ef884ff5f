// Bounded resources: a scenario whose task graph would exceed the task or memory budget is refused up
// front (exit 3) with the estimate and the knob that raises the budget, before anything is lowered.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenarios/loader.hpp"
#include "sim/task_estimate.hpp"
#include "strategies/plan.hpp"
#include "tests/cli/run_parasim.hpp"

using parasim::testing::run_parasim;
using parasim::testing::Run;

namespace {

using parasim::testing::q;

std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// The task estimate of a scenario file's base, with the replica shortcut parasim uses by default.
std::uint64_t estimated_tasks(const std::filesystem::path& file) {
  const auto s = parasim::scenarios::load_scenario(file.string());
  const auto graph = parasim::scenarios::build_model(s);
  const auto plan = parasim::strategies::make_plan(graph, s.training, s.plan, s.cluster.device_count());
  return parasim::sim::estimate_task_graph(graph, plan, {.one_data_parallel_replica = true}).tasks;
}

// GPT-3 175B on 1024 A100 with the bundled example's plan, but 768 times its global batch:
// 1536 · 768 = 1,179,648 sequences, 147,456 micro-batches per replica. Every one of the 128 devices
// of the simulated replica runs, per micro-batch and for each of its 6 layers, at least a forward,
// a recomputed forward and a backward task, and the two tensor-parallel all-reduces of the forward,
// of the recomputation and of the backward (each one task for its 8 devices): at least
// 147,456 · 6 · (3 · 128 + 6 · 128 / 8) = 424,673,280 tasks; the estimate counts about 1.15 billion.
const char* kHuge = R"({
  "name": "huge",
  "model": { "preset": "gpt3-175b", "seq_len": 2048 },
  "training": { "global_batch": 1179648, "micro_batch": 1, "precision": "fp16", "optimizer": "adam" },
  "cluster": { "preset": "dgx-a100", "nodes": 128 },
  "plan": { "tp": 8, "pp": 16, "dp": 8, "schedule": "1f1b", "zero": 1, "recompute": "full" }
})";

const char* kSmall = R"({
  "name": "small",
  "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 16, "micro_batch": 2, "precision": "fp16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 }
})";

}  // namespace

TEST_CASE("reliability: a scenario of a billion tasks is refused up front with the estimate and the knob", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("huge");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "huge.json";
  std::ofstream(scenario) << kHuge;
  const std::uint64_t tasks = estimated_tasks(scenario);
  CHECK(tasks >= 1'000'000'000);
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out"));
  CHECK(r.exit_code == 3);
  const std::string expected = "parasim: the plan cannot run: the scenario is too large to simulate: variant \"base\" would lower to a task graph of about " +
                               with_commas(tasks) + " tasks";
  CHECK_THAT(r.err, Catch::Matchers::StartsWith(expected));
  CHECK_THAT(r.err, Catch::Matchers::EndsWith("more than --max-tasks 300,000,000; raise --max-tasks to run it anyway\n"));
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_CASE("reliability: --max-tasks and --max-memory set the budget", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("budget");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "small.json";
  std::ofstream(scenario) << kSmall;
  const std::uint64_t tasks = estimated_tasks(scenario);
  SECTION("a budget one task short of the estimate refuses it, naming the knob") {
    const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --max-tasks " + std::to_string(tasks - 1));
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Matchers::Contains("about " + with_commas(tasks) + " tasks"));
    CHECK_THAT(r.err, Catch::Matchers::EndsWith("more than --max-tasks " + with_commas(tasks - 1) + "; raise --max-tasks to run it anyway\n"));
    CHECK_FALSE(std::filesystem::exists(dir / "out"));
  }
  SECTION("a budget of exactly the estimate runs it") {
    const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --max-tasks " + std::to_string(tasks));
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(dir / "out" / "result.json"));
  }
  SECTION("a memory budget below the estimate refuses it, naming the knob") {
    // 2^-30 GiB is one byte, less than any task graph.
    const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --max-memory 0.000000000931322574615478515625");
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Matchers::EndsWith("of --max-memory; raise --max-memory (GiB) to run it anyway\n"));
  }
  SECTION("a budget that is not a positive number is bad input") {
    CHECK(run_parasim(q(scenario) + " --max-tasks 0").exit_code == 2);
    CHECK(run_parasim(q(scenario) + " --max-memory -1").exit_code == 2);
  }
}

TEST_CASE("reliability: a trace.json above --max-trace-gib is refused before anything is written", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("trace-budget");
  const std::filesystem::path& dir = dir_temp.path;
  const auto scenario = dir / "small.json";
  std::ofstream(scenario) << kSmall;
  // Every device traced, with a limit of a millionth of a GiB (1074 bytes): the small step's trace
  // has more than 6 events of 200 bytes, so it is refused, naming the count and both knobs.
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --trace-devices 0 --max-trace-gib 0.000001");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Matchers::StartsWith("parasim: error: <command line>: trace.json would hold "));
  CHECK_THAT(r.err, Catch::Matchers::EndsWith("above --max-trace-gib 1e-06: trace fewer devices (--trace-devices N), or raise --max-trace-gib\n"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "result.json"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "trace.json"));
  // The default limit (1 GiB) lets the same trace through.
  const Run ok = run_parasim(q(scenario) + " --out " + q(dir / "out") + " --trace-devices 0");
  CHECK(ok.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "out" / "trace.json"));
  CHECK(run_parasim(q(scenario) + " --max-trace-gib 0").exit_code == 2);
}

TEST_CASE("reliability: a cluster of millions of devices is refused at once, naming its size and --max-devices", "[cli][reliability]") {
  const parasim::testing::TempDir dir_temp("devices-budget");
  const std::filesystem::path& dir = dir_temp.path;
  // 1,048,576 nodes of 8 A100: 8,388,608 devices, 8 times the default limit of 2^20. Data parallel
  // over 4,194,304 replicas of tp 2: its replica shortcut keeps the task graph small, but every
  // gradient all-reduce is costed over its whole group (over 120 s and 1.6 GB before this refusal).
  const auto scenario = dir / "big.json";
  std::ofstream(scenario) << R"({ "name": "big", "model": { "preset": "gpt3-125m", "seq_len": 512 },
    "training": { "global_batch": 8388608, "micro_batch": 2 },
    "cluster": { "device": "a100-80gb", "nodes": 1048576 }, "plan": { "tp": 2 } })";
  const std::string expected = "the scenario is too large to simulate: variant \"base\" has 8,388,608 devices, more than --max-devices 1,048,576; "
                               "raise --max-devices to run it anyway\n";
  const Run r = run_parasim(q(scenario) + " --out " + q(dir / "out"));
  CHECK(r.exit_code == 3);
  CHECK(r.err == "parasim: the plan cannot run: " + expected);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));
  const Run search = run_parasim("search " + q(scenario) + " --out " + q(dir / "s"));
  CHECK(search.exit_code == 3);
  CHECK_THAT(search.err, Catch::Matchers::Contains("its largest cluster has 8,388,608 devices, more than --max-devices 1,048,576"));
  // The limit is the flag's: the small scenario's 8 devices against a limit of 4.
  const auto small = dir / "small.json";
  std::ofstream(small) << kSmall;
  CHECK(run_parasim(q(small) + " --out " + q(dir / "o") + " --max-devices 4").exit_code == 3);
  CHECK(run_parasim(q(small) + " --out " + q(dir / "o") + " --max-devices 8").exit_code == 0);
  CHECK(run_parasim(q(small) + " --max-devices 0").exit_code == 2);
}
