#pragma once
/// A candidate of the plan search: the knobs the search varies — the node count, the micro-batch
/// size, the plan spec (dp always resolved), and for a non-uniform model the pipeline cut and each
/// stage's intra-operator choice — and the stable key that orders candidates, so that every ranking
/// is the same whatever the thread timing or the number of MPI ranks.
#include <cstdint>
#include <string>
#include <vector>

#include "strategies/pipeline_cut.hpp"
#include "strategies/plan_spec.hpp"

namespace parasim::strategies::search {

struct Candidate {
  std::int64_t nodes = 1;    ///< nodes of the cluster the plan runs on
  std::int64_t devices = 1;  ///< nodes × devices per node
  TrainingSpec training;     ///< the scenario's, with this candidate's micro_batch
  PlanSpec plan;             ///< dp > 0 (resolved); stage_layers set for a dynamic-programming cut
  /// How each pipeline stage uses the tensor axis (pipeline_cut.hpp); empty = as make_plan does
  /// (every operator's model dims split over it).
  std::vector<InnerAxisUse> stage_uses;
  bool operator==(const Candidate&) const = default;

  /// Micro-batches per data-parallel replica per step: global_batch / (micro_batch × dp).
  [[nodiscard]] std::int64_t micro_batches() const;
  /// The data-parallel degree: plan.dp, or for a plan on a named mesh (dp 0) its data axis's size.
  [[nodiscard]] std::int64_t data_parallel() const;
  /// Samples of one micro-batch round, the graph's batch: micro_batch × data_parallel().
  [[nodiscard]] std::int64_t batch() const { return training.micro_batch * data_parallel(); }
};

/// A strict weak order over every knob, used to break ties: devices, tp, cp, pp, dp, ep, micro_batch,
/// schedule, virtual_stages, zero, recompute, sequence_parallel, stage_layers, stage_uses.
[[nodiscard]] bool key_less(const Candidate& a, const Candidate& b);

/// One line, in the words of strategies::make_plan's descriptions:
/// "tp 8 × pp 12 × dp 8, 1f1b, micro-batch 1 × 192, zero-1, recompute full, sequence parallel" (with
/// cp > 1: "tp 4 × cp 2 (p2p) × pp 1 × dp 8, ...");
/// a dynamic-programming cut adds "; stages 4+5+5+4 layers (data, data, model, model)".
[[nodiscard]] std::string describe(const Candidate& c);

}  // namespace parasim::strategies::search
