// Runs that happened fit: Llama 3 405B on 16,384 H100 (Llama Team 2024, "The Llama 3 Herd of Models",
// §3.3.2 and Table 4: tp 8 × pp 16 × dp 128, 8,192-token sequences, 80 GB per GPU) and the bundled
// Llama-3-70B example. Before fused attention parasim judged the first to need about 720 GiB per GPU:
// every layer kept its b·a·s² scores.
#include <catch2/catch.hpp>

#include "tests/validation/validation_run.hpp"

using namespace parasim;

TEST_CASE("Llama 3 405B on 16,384 H100 as Meta ran it, and the Llama-3-70B example, fit in 80 GB", "[validation]") {
  for (const char* file : {"scenarios/validation/llama3/llama3-405b-16384-h100.json", "scenarios/examples/llama3-70b-512-h100.json"}) {
    const auto [peak, capacity] = validation::peak_and_capacity(scenarios::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/" + file));
    INFO(file << ": peak " << peak / (1024.0 * 1024 * 1024) << " GiB of " << capacity / (1024.0 * 1024 * 1024) << " GiB");
    CHECK(peak <= capacity);
  }
}
