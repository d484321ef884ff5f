// Sweeps (scenarios/sweep.hpp): lists and ranges of values, every combination a point, the first key
// varying slowest, each point a checked variant of the base; bad sweeps located in the file.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/sweep.hpp"

using namespace parasim;

namespace {

std::string scenario_with(const std::string& sweep) {
  return R"({ "name": "s", "model": { "preset": "gpt2", "seq_len": 1024 },
  "training": { "global_batch": 64, "micro_batch": 2 },
  "cluster": { "preset": "dgx-a100", "nodes": 1 },
  "sweep": )" + sweep + "\n}";
}

std::vector<scenarios::Scenario> points_of(const std::string& text) {
  const JsonDocument doc = JsonDocument::parse(text, "s.json");
  const scenarios::Scenario base = scenarios::parse_scenario(text, "s.json");
  return scenarios::sweep_points(doc, base);
}

}  // namespace

TEST_CASE("sweep ranges: arithmetic and geometric, both ends included", "[scenarios][sweep]") {
  // {"from": 1, "to": 8, "times": 2}: 1, 2, 4, 8 (integers: from and times are).
  // {"from": 0.5, "to": 1.5, "step": 0.25}: 0.5, 0.75, 1.0, 1.25, 1.5.
  // {"from": 1, "to": 10, "step": 4}: 1, 5, 9 (10 is not hit).
  const JsonDocument doc = JsonDocument::parse(scenario_with(R"({ "cluster.nodes": { "from": 1, "to": 8, "times": 2 },
    "cluster.inter_node.latency_us": { "from": 0.5, "to": 1.5, "step": 0.25 },
    "training.micro_batch": { "from": 1, "to": 10, "step": 4 } })"),
                                               "s.json");
  const auto axes = scenarios::sweep_axes(doc);
  REQUIRE(axes.size() == 3);
  CHECK(axes[0].key == "cluster.nodes");  // file order, not nlohmann's sorted order
  CHECK(axes[0].values == std::vector<nlohmann::json>{1, 2, 4, 8});
  CHECK(axes[0].values[0].is_number_integer());
  CHECK(axes[1].key == "cluster.inter_node.latency_us");
  CHECK(axes[1].values == std::vector<nlohmann::json>{0.5, 0.75, 1.0, 1.25, 1.5});
  CHECK(axes[2].values == std::vector<nlohmann::json>{1, 5, 9});
}

TEST_CASE("sweep points: every combination, the first key slowest, named by their values", "[scenarios][sweep]") {
  // 2 node counts × 2 bandwidths = 4 points: (1, 100), (1, 200), (2, 100), (2, 200).
  const auto points = points_of(scenario_with(R"({ "cluster.nodes": [1, 2], "cluster.inter_node.bandwidth_gbps": [100, 200] })"));
  REQUIRE(points.size() == 4);
  CHECK(points[0].name == "cluster.nodes=1, cluster.inter_node.bandwidth_gbps=100");
  CHECK(points[1].name == "cluster.nodes=1, cluster.inter_node.bandwidth_gbps=200");
  CHECK(points[3].name == "cluster.nodes=2, cluster.inter_node.bandwidth_gbps=200");
  CHECK(points[2].cluster.nodes == 2);
  CHECK(points[2].cluster.inter_node.bandwidth_gbps == 100);
  CHECK(points[3].cluster.inter_node.bandwidth_gbps == 200);
  // Each point records its swept values as compact JSON (what report.html's sweep curves read).
  CHECK(points[3].changes == std::vector<std::pair<std::string, std::string>>{{"cluster.nodes", "2"},
                                                                               {"cluster.inter_node.bandwidth_gbps", "200"}});
  // Each point writes below the base's output folder, in a folder of its own.
  CHECK(points[0].output_dir != points[1].output_dir);
  CHECK(points[0].output_dir.rfind("parasim-out/s/", 0) == 0);
}

TEST_CASE("sweep faults are located at the swept value that causes them", "[scenarios][sweep]") {
  SECTION("a range key that does not exist") {
    try {
      (void)points_of(scenario_with(R"({ "cluster.nodes": { "from": 1, "to": 4, "stp": 1 } })"));
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.json_pointer() == "/sweep/cluster.nodes/stp");
      CHECK(e.line() == 4);
      CHECK_THAT(e.message(), Catch::Matchers::Contains("unknown key \"stp\""));
    }
  }
  SECTION("a swept value the field cannot take, at its list item") {
    try {
      (void)points_of(scenario_with(R"({ "cluster.nodes": [1, 0] })"));
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.json_pointer() == "/sweep/cluster.nodes/1");
      CHECK(e.line() == 4);
      CHECK_THAT(e.message(), Catch::Matchers::Contains("sweep point \"cluster.nodes=0\""));
    }
  }
  SECTION("a point whose plan is invalid: the sweep, naming the point and the field") {
    // nodes 3 → 24 devices, dp 24: global batch 64 is not a multiple of micro_batch × dp = 2 × 24 = 48.
    try {
      (void)points_of(scenario_with(R"({ "cluster.nodes": [1, 3] })"));
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.json_pointer() == "/sweep");
      CHECK_THAT(e.message(), Catch::Matchers::Contains("sweep point \"cluster.nodes=3\""));
      CHECK_THAT(e.message(), Catch::Matchers::Contains("/training/global_batch"));
      CHECK_THAT(e.message(), Catch::Matchers::Contains("2 × 24 = 48"));
    }
  }
  SECTION("a field no what-if may set") {
    try {
      (void)points_of(scenario_with(R"({ "search.objective": ["time", "cost"] })"));
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.json_pointer() == "/sweep/search.objective");
    }
  }
}
