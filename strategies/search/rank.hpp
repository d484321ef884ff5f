#pragma once
/// Ranking plans and their Pareto front. Pure functions of the figures: no simulation here.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/memory.hpp"
#include "strategies/search/candidate.hpp"
#include "strategies/search/evaluation.hpp"

namespace parasim::strategies::search {

/// What "best" means.
enum class Objective {
  Time,        ///< shortest step time
  Throughput,  ///< most tokens (samples for non-sequence models) per second
  Cost,        ///< least money per step: step time × devices × price per device-hour / 3600 s
  Memory,      ///< most memory headroom per device (usable capacity − peak), then shortest step
};
[[nodiscard]] std::string_view to_string(Objective o);  ///< "time", "throughput", "cost", "memory"
[[nodiscard]] const std::vector<std::string>& objective_names();
[[nodiscard]] std::optional<Objective> objective_from_string(std::string_view s);

/// Which figure a candidate is ranked by: the most accurate it has.
enum class Fidelity : std::uint8_t { Estimate, Simulated, Refined };
[[nodiscard]] std::string_view to_string(Fidelity f);  ///< "estimate", "analytical", "refined"

/// One candidate that fits in memory, with everything known about it.
struct RankedPlan {
  Candidate candidate;
  std::string description;
  MemoryBreakdown memory;           ///< of the stage with the largest total (the peak)
  std::int64_t peak_stage = 0;
  double memory_capacity_bytes = 0;  ///< usable per device
  Evaluation estimate;
  std::optional<Evaluation> simulated;  ///< by the analytical engine
  std::optional<Evaluation> refined;    ///< by the second backend
  bool pareto = false;               ///< on the front of step time × peak memory × devices
  bool reference = false;            ///< the scenario's own plan
  bool extra = false;                ///< from SearchProblem::extra (always simulated)

  [[nodiscard]] Fidelity ranked_by() const;
  /// The figures ranked_by() names; a refined figure ranks only among refined ones (see rank_plans).
  [[nodiscard]] const Evaluation& best() const;
  [[nodiscard]] double headroom_bytes() const { return memory_capacity_bytes - memory.total_bytes(); }
  /// Money per step: step time × devices × price per device-hour / 3600 (same unit as the price).
  [[nodiscard]] double cost_per_step(double price_per_device_hour) const;
};

/// Whether `a` ranks before `b` under `objective` judged on the given figures; ties (equal figures)
/// go to key_less, so the order never depends on the order candidates arrive in.
[[nodiscard]] bool better(const RankedPlan& a, const Evaluation& ea, const RankedPlan& b, const Evaluation& eb, Objective objective,
                          double price_per_device_hour);

/// Sorts best first: the simulated candidates by their analytical figures, then the ones only
/// estimated by their estimates (an estimate never outranks a simulation, whose figure is the
/// model's own). The second backend's figures are reported beside, never reordering: a ranking
/// mixing two engines would compare unlike figures.
void rank_plans(std::vector<RankedPlan>& plans, Objective objective, double price_per_device_hour);

/// Marks the plans on the Pareto front of (step time, peak memory per device, devices), all three
/// minimised, each judged on its best() figures: a plan is on the front when no other is at least
/// as good on all three and better on one; of plans with identical figures, the first in key order
/// stands for all. With `simulated_only`, only plans with a simulation take part (the others are
/// left off the front). Returns the front's indices in the vector's order.
std::vector<std::size_t> mark_pareto_front(std::vector<RankedPlan>& plans, bool simulated_only = false);

}  // namespace parasim::strategies::search
