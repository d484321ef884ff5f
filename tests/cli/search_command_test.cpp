// `parasim search SCENARIO.json` run as a user runs it: the ranking, search.json, determinism, the
// same ranking under `mpirun -np 2` as in one process, bad input (exit 2); and a sweep scenario run
// with `parasim SCENARIO.json`, every point simulated and tabulated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::have_mpirun;
using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;

namespace {

using parasim::testing::q;

std::filesystem::path write(const std::filesystem::path& dir, const std::string& text) {
  const auto path = dir / "s.json";
  std::ofstream(path) << text;
  return path;
}

// gpt2 on one DGX A100 over a small space: tp 1, 2, 4, 8 × pp 1, 2 (dp the rest), micro-batch 1 or 2,
// 1F1B, ZeRO 0 or 1, no recomputation, sequence parallel off. The scenario's plan is tp 2 × pp 2 × dp 2.
const char* kSmall = R"({
  "name": "small-search",
  "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 32, "micro_batch": 2, "precision": "fp16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 },
  "search": { "tp": [1, 2, 4, 8], "pp": [1, 2], "micro_batch": [1, 2], "schedule": ["1f1b"], "zero": [0, 1],
              "recompute": ["none"], "sequence_parallel": [false], "simulate_top": 8, "refine_top": 0 }
})";

}  // namespace

TEST_CASE("parasim search ranks the plans, writes search.json, and gives the same bytes twice", "[cli][search]") {
  const parasim::testing::TempDir dir_temp("search");
  const std::filesystem::path& dir = dir_temp.path;
  const auto file = write(dir, kSmall);
  const Run r = run_parasim("search " + q(file) + " --out " + q(dir / "a") + " --quiet");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // --quiet: no progress
  CHECK_THAT(r.out, Catch::Matchers::Contains("<- the scenario's plan"));
  const auto j = nlohmann::json::parse(slurp(dir / "a" / "search.json"));
  CHECK(j.at("schema") == "parasim.search/1");
  // Candidates: tp × pp pairs with tp·pp | 8: (1,1) (1,2) (2,1) (2,2) (4,1) (4,2) (8,1) = 7 meshes
  // (tp 8 × pp 2 needs 16 devices); × micro-batch 2 values whose micro_batch × dp divides 32 (every
  // one: dp ≤ 8, 2 × 8 = 16 | 32) = 14 groups; × ZeRO {0, 1} where dp > 1, {0} where dp = 1
  // (tp 8 × pp 1 and tp 4 × pp 2: 2 meshes × 2 micro-batches = 4 groups) = 10 × 2 + 4 = 24.
  CHECK(j.at("counts").at("candidate_count") == 24);
  const auto& plans = j.at("plans");
  REQUIRE(plans.size() >= 8);
  // Ranked by step time among the simulated (the first 8, plus the scenario's own if it is not among them).
  for (std::size_t i = 1; i < 8; ++i)
    CHECK(plans[i - 1].at("analytical").at("step_time_s").get<double>() <= plans[i].at("analytical").at("step_time_s").get<double>());
  CHECK(plans[0].at("rank") == 1);
  // The count of simulated plans says where each came from: simulate_top 8 by estimate, the rest
  // (the estimates' Pareto front, the scenario's plan) named apart.
  const auto simulated = j.at("counts").at("simulated_count").get<std::int64_t>();
  CHECK_THAT(r.out, Catch::Matchers::Contains("; " + std::to_string(simulated) +
                                              " simulated (analytical engine, one data-parallel replica standing for all) and ranked first: the best 8 by estimate"));

  const Run again = run_parasim("search " + q(file) + " --out " + q(dir / "b") + " --quiet --threads 1");
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(dir / "a" / "search.json") == slurp(dir / "b" / "search.json"));
  CHECK(r.out.substr(0, r.out.rfind("wrote")) == again.out.substr(0, again.out.rfind("wrote")));
}

TEST_CASE("mpirun -np 2 parasim search gives the same ranking as one process", "[cli][search][mpi]") {
  if (!have_mpirun()) {
    WARN("skipped: no mpirun on the PATH (install Open MPI to run this test)");
    return;
  }
  const parasim::testing::TempDir dir_temp("search-mpi");
  const std::filesystem::path& dir = dir_temp.path;
  const auto file = write(dir, kSmall);
  const Run one = run_parasim("search " + q(file) + " --out " + q(dir / "one") + " --quiet");
  REQUIRE(one.exit_code == 0);
  const std::string command = parasim::testing::kMpirun + " -np 2 '" + std::string(PARASIM_BINARY) +
                              "' search " + q(file) +
                              " --out " + q(dir / "two") + " --quiet > " + q(dir / "mpi.out") + " 2> " + q(dir / "mpi.err");
  const int status = std::system(command.c_str());
  INFO(slurp(dir / "mpi.err"));
  REQUIRE(status == 0);
  CHECK(slurp(dir / "one" / "search.json") == slurp(dir / "two" / "search.json"));
  // Rank 0 alone prints: one table, the same as one process's.
  const std::string two = slurp(dir / "mpi.out");
  CHECK(one.out.substr(0, one.out.rfind("wrote")) == two.substr(0, two.rfind("wrote")));
}

TEST_CASE("parasim search: bad search settings exit 2 with file, line, column and pointer", "[cli][search]") {
  const parasim::testing::TempDir dir_temp("search-bad");
  const std::filesystem::path& dir = dir_temp.path;
  SECTION("an unknown key") {
    std::string text = kSmall;
    text.replace(text.find("\"simulate_top\""), 14, "\"simulate_tops\"");
    const Run r = run_parasim("search " + q(write(dir, text)) + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("s.json:8:"));
    CHECK_THAT(r.err, Catch::Matchers::Contains("/search/simulate_tops"));
  }
  SECTION("the cost objective without a price") {
    std::string text = kSmall;
    text.replace(text.find("\"tp\": [1"), 5, "\"objective\": \"cost\", \"tp\":");
    const Run r = run_parasim("search " + q(write(dir, text)) + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains("/search/objective"));
    CHECK_THAT(r.err, Catch::Matchers::Contains("price_per_device_hour"));
  }
  SECTION("a tp list none of whose degrees divides the 8 devices") {
    // It used to rank the scenario's own plan alone, saying nothing.
    std::string text = kSmall;
    text.replace(text.find("\"tp\": [1, 2, 4, 8]"), 18, "\"tp\": [3]");
    const Run r = run_parasim("search " + q(write(dir, text)) + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::EndsWith("at /search/tp: found [3], expected at least one tp degree that divides the cluster's devices (8): no "
                                                "candidate of the search space could run\n"));
    CHECK_FALSE(std::filesystem::exists(dir / "o"));
  }
  SECTION("degrees that divide but leave no candidate") {
    // tp 1 × pp 1 leaves dp 8, and a global batch of 8 is no multiple of micro_batch 2 × dp 8: the
    // space has no candidate (the scenario's own plan, tp 2 × pp 2 × dp 2, would be valid).
    const Run r = run_parasim("search " + q(write(dir, R"({
  "name": "empty-search",
  "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 8, "micro_batch": 2, "precision": "fp16" },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "plan": { "tp": 2, "pp": 2, "dp": 2 },
  "search": { "tp": [1], "pp": [1], "micro_batch": [2], "schedule": ["1f1b"], "zero": [0], "recompute": ["none"], "sequence_parallel": [false] }
})")) + " --out " + q(dir / "o"));
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::Matchers::Contains("no candidate of the search space can run on the cluster"));
  }
}

TEST_CASE("parasim search with auto_sharding ranks the automatic sharding's plans beside the knobs' plans", "[cli][search]") {
  // The small space above (24 candidates), plus the automatic sharding on the node as two meshes:
  // "gpu 8", and one data axis "data 8" with ZeRO-1; each with the fewest micro-batches that fit
  // (GPT-2's 32 sequences at once fit an A100); and automatic pipelines of pp 2, 4 and 8 stages (each
  // stage's devices one axis "gpu 4", "gpu 2", "gpu 1") with pp, 2·pp and 4·pp micro-batches (all
  // divide 32): 2 + 3 × 3 = 11 more candidates, always simulated, named by their meshes and cuts.
  const parasim::testing::TempDir dir_temp("search-auto");
  const std::filesystem::path& dir = dir_temp.path;
  std::string text = kSmall;
  text.replace(text.find("\"simulate_top\": 8"), 17, "\"simulate_top\": 8, \"auto_sharding\": true");
  const auto file = write(dir, text);
  const Run r = run_parasim("search " + q(file) + " --out " + q(dir / "a") + " --quiet");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(dir / "a" / "search.json"));
  CHECK(j.at("counts").at("candidate_count") == 35);
  std::vector<std::string> automatic;
  std::map<std::int64_t, int> pipelines;  // pp → candidates
  for (const auto& p : j.at("plans")) {
    const std::string d = p.at("description");
    if (d.find("auto-sharded") == std::string::npos) continue;
    automatic.push_back(d);
    CHECK(p.at("analytical").at("step_time_s").get<double>() > 0);
    const auto pp = p.at("pp").get<std::int64_t>();
    if (pp == 1) continue;
    ++pipelines[pp];
    // The cut: pp stages of GPT-2's 14 graph layers (the embedding, 12 blocks, the head), named.
    const auto cut = p.at("stage_layers").get<std::vector<std::int64_t>>();
    CHECK(static_cast<std::int64_t>(cut.size()) == pp);
    CHECK(std::accumulate(cut.begin(), cut.end(), std::int64_t{0}) == 14);
    CHECK_THAT(d, Catch::Matchers::Contains("; stages "));
  }
  std::sort(automatic.begin(), automatic.end());
  REQUIRE(automatic.size() == 11);
  CHECK(automatic[0] == "mesh data 8 (auto-sharded: optimal), pp 1, 1f1b, micro-batch 4 × 1, zero-1");
  CHECK(automatic[10] == "mesh gpu 8 (auto-sharded: optimal), pp 1, 1f1b, micro-batch 32 × 1");
  CHECK(pipelines == std::map<std::int64_t, int>{{2, 3}, {4, 3}, {8, 3}});
  CHECK_THAT(r.out, Catch::Matchers::Contains("(auto-sharded: optimal)"));
  // The same bytes on one thread.
  const Run again = run_parasim("search " + q(file) + " --out " + q(dir / "b") + " --quiet --threads 1");
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(dir / "a" / "search.json") == slurp(dir / "b" / "search.json"));
}
