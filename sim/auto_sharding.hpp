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
///    the local shapes) × micro-batches, and the optimizer's pass over the local weights;
///  - weight-gradient reductions: each weight gradient that is a partial sum over some axes is
///    all-reduced over them once a step, priced at a gradient bucket's rate (sim/collectives.hpp on
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
  std::size_t groups = 0, candidates = 0, variables = 0, constraints = 0;
  double solve_seconds = 0;  ///< wall time of the solve (not deterministic: never in results)
  std::vector<AutoShardingChoice> choices;  ///< per group, in the graph's topological order
  /// One line: "optimal (ILP, 23 groups, 412 candidates, 5,130 variables)" or with the gap at the limit.
  [[nodiscard]] std::string outcome() const;
};

/// Solves the sharding of `g` on `plan`'s mesh (its current shardings are ignored) on `cluster`,
/// whose device 0 is of kind `device`. Throws PlanError when no sharding fits the memory, or when the
/// time limit passes before any is found.
[[nodiscard]] AutoSharding auto_shard(const models::Graph& g, const strategies::Plan& plan, const Cluster& cluster,
                                      const DeviceProfile& device, const AutoShardingOptions& options);

}  // namespace parasim::sim
