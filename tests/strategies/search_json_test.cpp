// search.json read back (strategies::search::search_from_json): what `parasim report` draws of a
// saved search is what the search wrote.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "strategies/search/search_json.hpp"
#include "tests/reports/html_hand_search.hpp"

using namespace parasim;
namespace search = strategies::search;

TEST_CASE("search.json: written and read back, the ranked plans and their figures are the same", "[strategies][search][json]") {
  // The hand-written search's figures are short decimals, exact at search.json's 9 significant digits.
  const search::SearchOutcome o = testing::hand_search();
  const std::string text = search::to_json(o, "my scenario", "gpt").dump(2);
  const JsonDocument doc = JsonDocument::parse(text, "search.json");
  REQUIRE(search::is_search_json(doc));
  const search::SavedSearch back = search::search_from_json(doc);
  CHECK(back.scenario == "my scenario");
  CHECK(back.model == "gpt");
  const search::SearchOutcome& b = back.outcome;
  CHECK(b.objective == o.objective);
  CHECK(b.usable_memory_bytes == o.usable_memory_bytes);
  CHECK(b.candidates == 100);
  CHECK(b.valid == 40);
  CHECK(b.fitting == 4);
  CHECK(b.simulated == 3);
  CHECK(b.reference == o.reference);
  CHECK(b.pareto == o.pareto);
  REQUIRE(b.plans.size() == o.plans.size());
  for (std::size_t i = 0; i < o.plans.size(); ++i) {
    INFO("plan " << i + 1);
    const auto& x = o.plans[i];
    const auto& y = b.plans[i];
    CHECK(y.description == x.description);
    CHECK(y.candidate.nodes == x.candidate.nodes);
    CHECK(y.candidate.devices == x.candidate.devices);
    CHECK(y.memory.weights_bytes == x.memory.weights_bytes);
    CHECK(y.memory.activations_bytes == x.memory.activations_bytes);
    CHECK(y.memory_capacity_bytes == x.memory_capacity_bytes);
    CHECK(y.estimate.step_time_s == x.estimate.step_time_s);
    CHECK(y.estimate.bubble_s == x.estimate.bubble_s);
    REQUIRE(y.simulated.has_value() == x.simulated.has_value());
    if (x.simulated) CHECK(y.simulated->compute_s == x.simulated->compute_s);
    CHECK(y.pareto == x.pareto);
    CHECK(y.reference == x.reference);
  }
}

TEST_CASE("search.json: an unknown key or a plan out of rank order is an error at its place", "[strategies][search][json]") {
  nlohmann::json j = search::to_json(testing::hand_search(), "s", "m");
  SECTION("unknown key") {
    j["plans"][1]["estimate"]["step_time"] = 1;
    const JsonDocument doc = JsonDocument::parse(j.dump(2), "search.json");
    CHECK_THROWS_WITH(search::search_from_json(doc), Catch::Matchers::Contains("/plans/1/estimate/step_time"));
  }
  SECTION("ranks out of order") {
    j["plans"][2]["rank"] = 7;
    const JsonDocument doc = JsonDocument::parse(j.dump(2), "search.json");
    CHECK_THROWS_WITH(search::search_from_json(doc), Catch::Matchers::Contains("found rank 7, expected 3"));
  }
  SECTION("a result.json is not a search") {
    CHECK_FALSE(search::is_search_json(JsonDocument::parse(R"({"schema": "parasim.result/1"})", "result.json")));
  }
}
