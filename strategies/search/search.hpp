#pragma once
/// The plan search (Alpa / Calculon style): enumerate every plan of the space for the model and
/// cluster, keep those check_plan accepts and whose peak memory (strategies::memory_per_stage) fits
/// the device, rank them all by the evaluator's cheap estimate, simulate the best with the
/// analytical engine, re-simulate the very best with the second backend, and rank by the objective;
/// the Pareto front of step time × memory × devices is marked. For models whose layers are not
/// uniform, pipeline stages are also cut by dynamic programming with a per-stage intra-operator
/// choice (strategies/pipeline_cut.hpp), beside make_plan's balanced cut.
///
/// Deterministic: the enumeration is fixed, every figure is gathered in index order whatever the
/// executor, and ties are broken by key_less — the same inputs give the same ranking on one thread,
/// many threads or many MPI ranks.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/graph.hpp"
#include "strategies/search/evaluation.hpp"
#include "strategies/search/executor.hpp"
#include "strategies/search/rank.hpp"
#include "strategies/search/space.hpp"

namespace parasim::strategies::search {

/// What to search over.
struct SearchProblem {
  /// The model graph for `batch` samples (micro_batch × dp). May throw InputError for a batch the
  /// model cannot take (a graph file fixes its batch); such candidates are invalid.
  std::function<models::Graph(std::int64_t batch)> build_graph;
  TrainingSpec training;  ///< the global batch, precision and optimizer
  /// The scenario's plan: the knobs the search does not vary (gradient buckets, overlap, blocking
  /// sends, gradient accumulation, mesh order) come from it.
  PlanSpec base;
  std::int64_t nodes = 1;  ///< the scenario's node count (the space's default)
  std::int64_t devices_per_node = 1;
  double usable_memory_bytes = 0;  ///< per device: capacity less the runtime's reserve
  /// The scenario's own plan, always simulated and ranked (when valid and fitting) so the output can
  /// say where it stands.
  std::optional<Candidate> reference;
  /// Plans found outside the space (the automatic sharding's, on a named mesh), each always
  /// simulated and ranked beside the space's. Their estimate is their simulation: the closed form
  /// prices the knobs' shardings.
  std::vector<Candidate> extra;
};

struct SearchOptions {
  SearchSpace space;
  Objective objective = Objective::Time;
  double price_per_device_hour = 0;  ///< for Objective::Cost and the cost column
  /// Candidates the analytical engine simulates: the best this many by estimate, plus up to
  /// pareto_extra more from the estimate's Pareto front (the fastest of those not already in), and
  /// the reference.
  std::int64_t simulate_top = 32;
  std::int64_t pareto_extra = 4;
  std::int64_t refine_top = 4;  ///< of the simulated, the best this many re-simulated by the second backend
};

/// Progress callbacks (all may be empty): a phase begins with its task count, its tasks finish
/// (progress, from any thread), it ends.
struct SearchObserver {
  std::function<void(std::string_view phase, std::size_t tasks)> begin_phase;
  ProgressFn progress;
  std::function<void()> end_phase;
};

struct SearchOutcome {
  /// Every candidate that is valid and fits, best first (rank_plans).
  std::vector<RankedPlan> plans;
  /// Indices into plans of the Pareto front of the simulated plans (their figures are the
  /// engine's; an estimate would bias the front), best first.
  std::vector<std::size_t> pareto;
  /// The best plan of each mesh shape (devices, tp, cp, pp, dp, ep), in rank order: which 3D shape
  /// wins, each at its best settings. Indices into plans.
  std::vector<std::size_t> shapes;
  std::optional<std::size_t> reference;  ///< index of the scenario's plan in plans
  /// Why the scenario's plan is not ranked (invalid, or does not fit), when it is not.
  std::string reference_note;
  std::int64_t candidates = 0;  ///< enumerated
  std::int64_t valid = 0;       ///< accepted by check_plan
  std::int64_t fitting = 0;     ///< valid and within the usable memory
  std::int64_t simulated = 0;   ///< by the analytical engine: the next three together
  std::int64_t simulated_top = 0;        ///< the best by estimate (simulate_top, or fewer plans)
  std::int64_t simulated_front = 0;      ///< more from the estimates' Pareto front (pareto_extra at most)
  std::int64_t simulated_reference = 0;  ///< the scenario's own plan, where it ranked below those
  std::int64_t simulated_extra = 0;      ///< plans from SearchProblem::extra, where they ranked below those
  std::int64_t refined = 0;     ///< by the second backend
  std::int64_t pipeline_cuts = 0;  ///< candidates with a dynamic-programming cut
  /// Why the second backend re-simulated nothing (its error, or that the evaluator has none).
  std::string refine_note;
  std::string refine_name;
  /// The framework every candidate runs under (strategies/implementation.hpp) and what it does, as
  /// the caller names them; empty when not recorded.
  std::string implementation;
  Objective objective = Objective::Time;
  double price_per_device_hour = 0;
  double usable_memory_bytes = 0;
};

/// The Plan of a candidate: make_plan, then each stage's use of the tensor axis, described by
/// describe(). Precondition: `graph` is built for micro_batch × dp samples and check_plan accepts
/// the candidate.
[[nodiscard]] Plan make_candidate_plan(const models::Graph& graph, const Candidate& c);

/// Runs the search. Throws what the evaluator throws for a candidate (the lowest index's), and
/// PlanError when no candidate is valid and fits.
[[nodiscard]] SearchOutcome run_search(const SearchProblem& problem, const SearchOptions& options, const Evaluator& evaluator,
                                       const Executor& executor, const SearchObserver& observer = {});

}  // namespace parasim::strategies::search
