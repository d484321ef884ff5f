#pragma once
/// Automatic intra-operator sharding (Alpa, Zheng et al. 2022, §4.2): every operator of the graph gets
/// one of its candidate shardings on the plan's mesh, chosen by an integer linear program that
/// minimises the step's compute, communication and resharding time under the devices' memory, solved
/// exactly by CBC (sim/ilp.hpp) within a time limit.
///
/// The program, in the paper's form:
///  - a candidate of an operator assigns each mesh axis (of size > 1, not the pipeline's) to one of
///    its splittable loop dims or to none, where the axes on a dim divide it (a transformer's
///    vocabulary may be padded); the graph's inputs stay whole (their layout costs nothing: the
///    lowering reads them where they are);
///  - operators alike in every layer share one choice: two operators whose names differ only in
///    numbers between dots ("layers.3.mlp.fc1", "layers.17.mlp.fc1") and whose dims, tensors and
///    weights are the same are one group, with one 0–1 vector s_G (Σ s_G = 1), as Alpa clusters
///    layers; this keeps a 96-layer model's program the size of one layer's;
///  - node cost of a candidate: its forward and backward kernel time per micro-batch (sim/cost_model.hpp,
///    the local shapes) × micro-batches, and the optimizer's pass over the local weights (with ZeRO,
///    over one data rank's shard of those the data axis replicates); with ZeRO 1–2, the gather of
///    those weights after the step at the rate of the program's weights gathered at once (paid whole:
///    nothing runs beside it, unless overlap_param_gather hides it under the next forward);
///  - weight-gradient reductions: each weight gradient that is a partial sum over some axes is
///    all-reduced (ZeRO 1–2: reduce-scattered) over them once a step, priced at a gradient bucket's rate (sim/collectives.hpp on
///    device 0's group along them: buckets amortise the latency). They run in order as the last
///    micro-batch's backward completes each layer, so the step pays
///    z = max(0, max_k (Σ_{l ≤ k} reductions_l − Σ_{l < k} backward_l)) over the graph's layers k,
///    one linear row z ≥ … per layer holding weights;
///  - edge cost between a producer's candidate i and a consumer's candidate j: the collectives that
///    reshard the tensor forward and its gradient backward (sim/work/layout.hpp, the lowering's own
///    rule) × micro-batches, divided among the producer's consumers (the lowering reshards a tensor
///    once for every consumer wanting the same layout); linearised with e_ij ∈ [0, 1],
///    Σ_j e_ij = s_p,i and Σ_i e_ij = s_c,j (Alpa's constraints, exact once s is integral);
///  - memory: Σ over candidates of local weights × (weight + gradient + optimizer bytes per
///    parameter) + saved activations of one micro-batch ≤ the device's usable memory × pp (an average
///    over stages). Where it binds, the program is first solved without it (its optimum, if it fits,
///    is the answer), then with memory priced by a multiplier found by bisection, whose best fitting
///    solution starts CBC on the bounded program.
/// Reshards are charged whole, none hidden under compute: the solution is a sharding, and the
/// simulation then times it with all its overlap.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/ilp.hpp"
#include "sim/profile.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

struct AutoShardingOptions {
  double time_limit_s = 10;
  /// One pipeline stage's program (Alpa's intra-operator pass for a stage, sim/auto_pipeline.hpp):
  /// only the operators of graph layers [first_layer, end_layer) are planned, with the edges among
  /// them; end_layer < 0 plans the whole graph.
  std::int32_t first_layer = 0, end_layer = -1;
  /// With a layer range: the micro-batches whose activations the stage holds at its peak (its
  /// schedule's; strategies/schedule.hpp), and the memory row bounds the stage alone by the device's
  /// usable memory. Unused for the whole graph (there the row is an average over pp stages).
  std::int64_t in_flight = 1;
  /// Whether the memory row is in the program (the inter-operator pass prices layers without it and
  /// bounds whole stages).
  bool bound_memory = true;
};

/// What the program chose for one group of alike operators.
struct AutoShardingChoice {
  std::string pattern;        ///< the group's operators, numbers between dots as `*`
  std::size_t operators = 0;  ///< in the group
  std::size_t candidates = 0;
  std::string sharding;       ///< "b:data f:model", or "whole"
};

struct AutoSharding {
  std::vector<strategies::OpSharding> sharding;  ///< per graph operator
  /// The solution as annotations: every operator's every dim pinned (pointer "/plan/auto_sharding"),
  /// so that propagation gives back exactly `sharding`.
  std::vector<strategies::ShardingAnnotation> annotations;
  LinearSolution::Status status = LinearSolution::Status::NoSolution;
  double objective_s = 0;  ///< the program's step time estimate, seconds
  double bound_s = 0;      ///< the best bound proven, seconds
  double gap = 0;
  /// Of objective_s, the weight-gradient reductions' exposed time (the program's z).
  double exposed_reductions_s = 0;
  /// Bytes a device holds under the sharding chosen: weights with their gradients and optimizer
  /// state, and one micro-batch's saved activations; and the least any sharding holds (each group's
  /// candidate of least state + activations).
  double state_bytes = 0, activation_bytes = 0, least_state_bytes = 0, least_activation_bytes = 0;
  std::size_t groups = 0, candidates = 0, variables = 0, constraints = 0;
  double solve_seconds = 0;  ///< wall time of the solve (not deterministic: never in results)
  std::vector<AutoShardingChoice> choices;  ///< per group, in the graph's topological order
  /// One line: "optimal (ILP, 23 groups, 412 candidates, 5,130 variables)" or with the gap at the limit.
  [[nodiscard]] std::string outcome() const;
};

/// Whether two operators are alike in all that prices their candidates (kind, dims, tensors, weights,
/// routing): operators alike under one name pattern share a choice.
[[nodiscard]] bool sharding_alike(const models::Operator& a, const models::Operator& b);

/// "layers.17.mlp.fc1" → "layers.*.mlp.fc1": an operator's name with the numbers between dots (its
/// layer's) as `*`; operators alike under one pattern share a choice.
[[nodiscard]] std::string sharding_group_pattern(const std::string& name);

/// Solves the sharding of `g` on `plan`'s mesh (its current shardings are ignored) on `cluster`,
/// whose device 0 is of kind `device`. Throws PlanError when no sharding fits the memory, or when the
/// time limit passes before any is found.
[[nodiscard]] AutoSharding auto_shard(const models::Graph& g, const strategies::Plan& plan, const Cluster& cluster,
                                      const DeviceProfile& device, const AutoShardingOptions& options);

}  // namespace parasim::sim
