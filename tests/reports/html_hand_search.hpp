#pragma once
// A plan search's outcome written by hand for the report.html tests: four plans that fit on 64
// devices with 80 GiB usable each, ranked by step time as rank_plans would (simulated ones first):
//   #1 tp 8 × pp 4 × dp 2   simulated 2.0 s = 1.2 compute + 0.4 exposed + 0.3 bubble + 0.1 data;
//                           memory 4 + 1 + 2 + 1 GiB = 8 GiB; on the Pareto front
//   #2 tp 4 × pp 4 × dp 4   simulated 3.0 s; 10 GiB of weights; dominated by #1
//   #3 tp 2 × pp 1 × dp 32  simulated 4.0 s = 3 compute + 0.5 exposed + 0.5 bubble; 20 GiB weights +
//                           40 GiB activations = 60 GiB; the scenario's own plan; dominated by #1
//   #4 tp 4 × pp 8 × dp 2   estimate only 5.0 s; 9 GiB of weights
// 100 candidates enumerated, 40 valid, 4 fit, 3 simulated.
#include <string>

#include "strategies/search/search.hpp"

namespace parasim::testing {

inline strategies::search::SearchOutcome hand_search() {
  namespace search = strategies::search;
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  const auto plan = [&](const std::string& description, double step_s, double compute_s, double exposed_s, double bubble_s, double data_s,
                        strategies::MemoryBreakdown memory, bool simulated) {
    search::RankedPlan p;
    p.candidate.nodes = 8;
    p.candidate.devices = 64;
    p.description = description;
    p.memory = memory;
    p.memory_capacity_bytes = 80 * gib;
    search::Evaluation e;
    e.step_time_s = step_s;
    e.samples_per_s = 64 / step_s;
    e.tokens_per_s = 6000 / step_s;
    e.mfu = 0.5;
    e.compute_s = compute_s;
    e.exposed_comm_s = exposed_s;
    e.bubble_s = bubble_s;
    e.data_load_s = data_s;
    p.estimate = e;
    if (simulated) p.simulated = e;
    return p;
  };
  search::SearchOutcome o;
  o.plans.push_back(plan("tp 8 × pp 4 × dp 2", 2.0, 1.2, 0.4, 0.3, 0.1, {4 * gib, 1 * gib, 2 * gib, 1 * gib, 0}, true));
  o.plans.push_back(plan("tp 4 × pp 4 × dp 4", 3.0, 2.0, 0.5, 0.5, 0.0, {10 * gib, 0, 0, 0, 0}, true));
  o.plans.push_back(plan("tp 2 × pp 1 × dp 32", 4.0, 3.0, 0.5, 0.5, 0.0, {20 * gib, 0, 0, 40 * gib, 0}, true));
  o.plans.push_back(plan("tp 4 × pp 8 × dp 2", 5.0, 4.0, 0.5, 0.5, 0.0, {9 * gib, 0, 0, 0, 0}, false));
  o.plans[0].pareto = true;
  o.plans[2].reference = true;
  o.pareto = {0};
  o.shapes = {0, 1, 2, 3};
  o.reference = 2;
  o.candidates = 100;
  o.valid = 40;
  o.fitting = 4;
  o.simulated = 3;
  o.objective = search::Objective::Time;
  o.usable_memory_bytes = 80 * gib;
  return o;
}

}  // namespace parasim::testing
