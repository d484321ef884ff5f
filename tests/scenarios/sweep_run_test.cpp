// The bundled sweep example run with `parasim SCENARIO.json`: every point simulated and tabulated,
// after the base and its what-if, with report.html carrying the sweep curves.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

using parasim::testing::Run;
using parasim::testing::run_parasim;
using parasim::testing::slurp;

TEST_CASE("a sweep scenario simulates and tabulates every point", "[scenarios][sweep][cli]") {
  const parasim::testing::TempDir out_temp("sweep");
  const std::filesystem::path& out = out_temp.path;
  const Run r = run_parasim("'" PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-sweep-nodes-bandwidth.json' --out '" + out.string() + "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Progress of the 14 simulations on stderr, as plain lines (not a terminal).
  CHECK_THAT(r.err, Catch::Matchers::Contains("14/14 done"));
  const auto results = nlohmann::json::parse(slurp(out / "result.json"));
  // The base, its one what-if, then nodes {1, 2, 4, 8} × bandwidth {25, 100, 200} = 12 points.
  REQUIRE(results.size() == 14);
  CHECK(results[0].at("variant") == "base");
  CHECK(results[1].at("variant") == "64 images per GPU");
  CHECK(results[2].at("variant") == "cluster.nodes=1, cluster.inter_node.bandwidth_gbps=25");
  CHECK(results[13].at("variant") == "cluster.nodes=8, cluster.inter_node.bandwidth_gbps=200");
  // The table has a column per point.
  CHECK_THAT(r.out, Catch::Matchers::Contains("cluster.nodes=4, cluster.inter_node.bandwidth_gbps=100"));
  const auto step = [&](std::size_t i) { return results[i].at("step_time_s").get<double>(); };
  // On one node no traffic leaves the node: the NIC bandwidth changes nothing, and the points equal
  // the base (one node, the preset's bandwidth).
  CHECK(step(2) == step(0));
  CHECK(step(3) == step(0));
  CHECK(step(4) == step(0));
  // On eight nodes the gradient all-reduce crosses the NICs: 25 Gb/s is slower than 200 Gb/s.
  CHECK(step(11) > step(13));
  // report.html carries the sweep chart.
  CHECK_THAT(slurp(out / "report.html"), Catch::Matchers::Contains("bandwidth_gbps"));
}

TEST_CASE("a sweep run with --quiet shows no progress on stderr", "[scenarios][sweep][cli]") {
  const parasim::testing::TempDir out_temp("sweep-quiet");
  const std::filesystem::path& out = out_temp.path;
  const Run r = run_parasim("'" PARASIM_SOURCE_DIR "/scenarios/examples/resnet50-sweep-nodes-bandwidth.json' --quiet --out '" + out.string() + "'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Matchers::Contains("cluster.nodes=8, cluster.inter_node.bandwidth_gbps=200"));
}
