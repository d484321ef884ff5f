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

using parasim::testing::fresh_dir;
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
  const auto dir = fresh_dir("huge");
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
  std::filesystem::remove_all(dir);
}

TEST_CASE("reliability: --max-tasks and --max-memory set the budget", "[cli][reliability]") {
  const auto dir = fresh_dir("budget");
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
  std::filesystem::remove_all(dir);
}
