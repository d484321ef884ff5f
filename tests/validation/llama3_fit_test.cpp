// Runs that happened fit: Llama 3 405B on 16,384 H100 (Llama Team 2024, "The Llama 3 Herd of Models",
// §3.3.2 and Table 4: tp 8 × pp 16 × dp 128, 8,192-token sequences, 80 GB per GPU) and the bundled
// Llama-3-70B example. Before fused attention parasim judged the first to need about 720 GiB per GPU:
// every layer kept its b·a·s² scores.
#include <catch2/catch.hpp>

#include "scenarios/loader.hpp"
#include "sim/cluster.hpp"
#include "strategies/memory.hpp"
#include "strategies/plan.hpp"

using namespace parasim;

namespace {
/// The peak bytes of any stage and the usable bytes per device.
std::pair<double, double> peak_and_capacity(const std::string& file) {
  const scenarios::Scenario s = scenarios::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/" + file);
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  double peak = 0;
  for (const auto& st : strategies::memory_per_stage(graph, plan)) peak = std::max(peak, st.memory.total_bytes());
  return {peak, profile.device(cluster.devices.front().kind).usable_memory_bytes()};
}
}  // namespace

TEST_CASE("Llama 3 405B on 16,384 H100 as Meta ran it, and the Llama-3-70B example, fit in 80 GB", "[validation]") {
  for (const char* file : {"scenarios/validation/llama3/llama3-405b-16384-h100.json", "scenarios/examples/llama3-70b-512-h100.json"}) {
    const auto [peak, capacity] = peak_and_capacity(file);
    INFO(file << ": peak " << peak / (1024.0 * 1024 * 1024) << " GiB of " << capacity / (1024.0 * 1024 * 1024) << " GiB");
    CHECK(peak <= capacity);
  }
}
