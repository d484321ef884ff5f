#pragma once
/// What the search asks of a simulator, and what it gets back. The search never includes sim/: the
/// caller passes an Evaluator whose functions lower and simulate plans (sim::SearchEvaluator,
/// sim/search_estimate.hpp). Every function must be pure and safe to call from several threads at once.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>

#include "models/graph.hpp"
#include "strategies/pipeline_cut.hpp"
#include "strategies/plan.hpp"
#include "strategies/search/candidate.hpp"

namespace parasim::strategies::search {

/// The figures of one step of one candidate, from an estimate or a simulation. Trivially copyable,
/// so that MPI ranks can exchange them as bytes. Times are per step, in seconds; the breakdown is the
/// mean over devices (compute + exposed communication + idle = step time).
struct Evaluation {
  double step_time_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;              ///< model FLOPs / (step time × devices × peak), in [0, 1]
  double compute_s = 0;        ///< forward, backward, recompute, optimizer
  double exposed_comm_s = 0;   ///< communication while compute idles
  double bubble_s = 0;         ///< idle: pipeline bubble and waiting
  double data_load_s = 0;      ///< data loading on the compute stream
  std::int64_t tasks = 0;      ///< tasks simulated (0 for an estimate)
  bool replica_shortcut = false;  ///< one data-parallel replica simulated for all
  /// 0 when the step was simulated whole; else the plan's pipeline was simulated at two smaller
  /// micro-batch counts, this one and extrapolated_low, and each figure extrapolated along the line
  /// through the two (sim/search_estimate.hpp, SearchEvaluator::simulate).
  std::int64_t extrapolated_high = 0;
  std::int64_t extrapolated_low = 0;
  bool operator==(const Evaluation&) const = default;
};
static_assert(std::is_trivially_copyable_v<Evaluation>);

/// Per graph layer, in order: one micro-batch's forward + backward on one device of its stage
/// (recomputation and exposed communication inside the stage included), and the time to send the
/// layer's output to a next stage and its gradient back. Both in seconds; one entry per layer.
struct LayerCosts {
  std::vector<double> seconds;
  std::vector<double> boundary_s;
};

/// The evaluator: a cheap closed-form estimate that ranks every candidate that fits, a full
/// simulation with the analytical engine for the best of them, optionally a second backend that
/// re-simulates the very best, and the per-layer costs the pipeline cut of a non-uniform model is
/// chosen from. `graph` is built for micro_batch × dp samples and `plan` made from the candidate.
struct Evaluator {
  std::function<Evaluation(const Candidate&, const models::Graph&, const Plan&)> estimate;
  std::function<Evaluation(const Candidate&, const models::Graph&, const Plan&)> simulate;
  /// Re-simulation with the second backend (SimGrid); may be empty.
  std::function<Evaluation(const Candidate&, const models::Graph&, const Plan&)> refine;
  std::string refine_name;  ///< the second backend's name, e.g. "simgrid"
  /// Per graph layer, the cost of one micro-batch of the candidate (its tp, micro-batch size,
  /// recompute and sequence parallel) when every stage uses the tensor axis as `use` says. May be
  /// empty: then non-uniform models keep make_plan's balanced cut.
  std::function<LayerCosts(const Candidate&, InnerAxisUse use)> layer_costs;
};

}  // namespace parasim::strategies::search
