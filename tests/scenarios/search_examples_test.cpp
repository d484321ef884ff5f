// The search scenarios a user copies from (scenarios/search/): each loads, validates against the
// schema and decodes its "search" object; the three GPT-3 175B / 768 A100 spaces compared in
// docs/validation.md hold the plan Narayanan et al. ran and the spaces that page describes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "common/json_document.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/search_spec.hpp"
#include "tests/scenarios/bundled_files.hpp"

namespace fs = std::filesystem;
using namespace parasim;

namespace {

const std::string kSearchExamples = std::string(PARASIM_SOURCE_DIR) + "/scenarios/search";

scenarios::SearchSpec spec_of(const std::string& file, const scenarios::Scenario& s) {
  return scenarios::decode_search_spec(JsonDocument::read_file(file), s, scenarios::scenario_profile(s));
}

}  // namespace

TEST_CASE("search examples: each loads, validates against the schema and decodes its search", "[scenarios][search]") {
  const auto files = testing::json_files_in(kSearchExamples);
  REQUIRE(files.size() == 8);
  for (const auto& file : files) {
    SECTION(fs::path(file).filename().string()) {
      CHECK(testing::schema_fault(file) == "");
      const scenarios::Scenario s = scenarios::load_scenario(file);
      CHECK(s.name == fs::path(file).stem().string().insert(0, "search-"));
      CHECK_FALSE(s.description.empty());
      CHECK_NOTHROW(spec_of(file, s));
    }
  }
}

TEST_CASE("search examples: the GPT-3 175B / 768 A100 spaces of docs/validation.md", "[scenarios][search]") {
  using strategies::Recompute;
  for (const char* name : {"gpt3-175b-768-a100", "gpt3-175b-768-a100-megatron-space", "gpt3-175b-768-a100-sc21-features"}) {
    INFO(name);
    const std::string file = kSearchExamples + "/" + name + ".json";
    const scenarios::Scenario s = scenarios::load_scenario(file);
    // The plan Narayanan et al. ran: tensor 8 × pipeline 12 on 96 nodes of 8 (data 8 = 768 / 96).
    CHECK(s.cluster.device_count() == 768);
    CHECK(s.plan.tp == 8);
    CHECK(s.plan.pp == 12);
    CHECK(s.plan.schedule == strategies::Schedule::OneFOneB);
    CHECK(s.plan.recompute == Recompute::Full);
    CHECK(s.training.global_batch == 1536);
  }
  // Only what Megatron-LM had in 2021: every mesh, no distributed optimizer, full recomputation, no
  // sequence parallelism, micro-batch 1 or 2, interleaving up to 2 chunks.
  const std::string sc21 = kSearchExamples + "/gpt3-175b-768-a100-sc21-features.json";
  const scenarios::Scenario s = scenarios::load_scenario(sc21);
  const scenarios::SearchSpec spec = spec_of(sc21, s);
  CHECK(s.plan.zero == 0);
  CHECK(spec.space.tp.empty());
  CHECK(spec.space.pp.empty());
  CHECK(spec.space.zero == std::vector<int>{0});
  CHECK(spec.space.recompute == std::vector<Recompute>{Recompute::Full});
  CHECK(spec.space.sequence_parallel == std::vector<bool>{false});
  CHECK(spec.space.micro_batch == std::vector<std::int64_t>{1, 2});
  CHECK(spec.space.max_virtual_stages == 2);
  CHECK(spec.space.schedule.empty());
  CHECK(spec.refine_top == 0);
}

TEST_CASE("search examples: the GPT-3 175B / 768 H100 space of NVIDIA's MLPerf v3.0 submission", "[scenarios][search]") {
  // config_DGXH100_96x8x128x4x8_mbs1.sh: 96 DGX H100, tensor 4 × pipeline 8 (data 24 = 768 / 32),
  // micro-batch 1; run_and_time.sh defaults: sequence parallelism, selective recomputation, the
  // distributed optimizer (ZeRO-1).
  using strategies::Recompute;
  const std::string file = kSearchExamples + "/gpt3-175b-768-h100-mlperf.json";
  const scenarios::Scenario s = scenarios::load_scenario(file);
  CHECK(s.cluster.device_count() == 768);
  CHECK(s.cluster.device == "h100-sxm");
  CHECK(s.plan.tp == 4);
  CHECK(s.plan.pp == 8);
  CHECK(s.plan.sequence_parallel);
  CHECK(s.plan.recompute == Recompute::Selective);
  CHECK(s.plan.zero == 1);
  CHECK(s.training.micro_batch == 1);
  const scenarios::SearchSpec spec = spec_of(file, s);
  CHECK(spec.space.tp.empty());
  CHECK(spec.space.pp.empty());
  CHECK(spec.space.zero == std::vector<int>{1});
  CHECK(spec.space.recompute == std::vector<Recompute>{Recompute::Selective});
  CHECK(spec.space.sequence_parallel == std::vector<bool>{true});
  CHECK(spec.space.micro_batch == std::vector<std::int64_t>{1, 2});
  CHECK(spec.refine_top == 0);
}
