#pragma once
/// Automatic inter-operator plans (Alpa, Zheng et al., OSDI'22, §5): where a plan on a named mesh
/// has pipeline stages (pp > 1) and asks for automatic sharding, the graph's layers are cut into
/// stages by dynamic programming over intra-operator costs, and each stage's operators are then
/// sharded by the integer program of sim/auto_sharding.hpp on its own.
///
///  1. Every graph layer's cost: the integer program on that layer alone (its operators and the
///     edges among them; no memory row), per micro-batch: (objective − exposed reductions) / m —
///     its kernels, its reshards, its optimizer pass spread over the micro-batches. Layers alike
///     (the same operators, by their layer-free names, kinds and shapes) are solved once.
///  2. Every boundary's cost: the tensors that cross from layers ≤ l to later ones, at the layout the
///     layer's program chose, sent forward and their gradients back between two devices one stage
///     apart (sim/collectives.hpp, send-recv).
///  3. The cut (strategies/pipeline_cut.hpp, Alpa's eq. 2): minimises
///     T = Σ_s t_s + (m − 1) · max_s t_s over contiguous stages, refusing a stage whose layers'
///     least memory — state + activations × the micro-batches its schedule holds — passes the
///     device's usable memory.
///  4. Each stage's sharding: the integer program on its layers, with its memory row (its in-flight
///     micro-batches, strategies/schedule.hpp).
///
/// Departures from Alpa, said here and in docs/validation.md: every stage has the same sub-mesh (the
/// plan's mesh: the pipeline axis × the user's axes; parasim's plans give each stage as many devices),
/// so the physical sub-mesh sizes are the search's pp values, not a per-stage choice; the logical
/// shapes of a stage's sub-mesh Alpa tries ((n, d), (n·d, 1), (1, n·d) for n nodes of d devices) are
/// within each stage's program, which may put both axes of a node × device mesh on one dim; a stage's
/// cost in the cut is the sum of its layers' (edges between layers of a stage are priced in step 4
/// only); the weight-gradient reductions, which every stage runs at once after its last backward, are
/// left out of T (the stages' programs price them).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/auto_sharding.hpp"
#include "strategies/pipeline_cut.hpp"

namespace parasim::sim {

struct AutoPipeline {
  strategies::PipelineCut cut;  ///< layers per stage; latency_s: the cut's T, in seconds
  bool cut_chosen = false;      ///< by the dynamic programme (false: the plan's own stage_layers)
  std::vector<AutoSharding> stages;                          ///< per stage, its program's outcome
  std::vector<strategies::ShardingAnnotation> annotations;   ///< every stage's, in stage order
  std::vector<double> layer_seconds;  ///< per graph layer: its cost per micro-batch (step 1)
  std::vector<double> boundary_s;     ///< per graph layer: its boundary's send and receive (step 2)
  std::size_t layer_programs = 0;     ///< distinct per-layer programs solved
  /// "optimal", or "feasible, gap 1.2%" (the largest of the stages').
  [[nodiscard]] std::string outcome() const;
};

/// Cuts `g` into `plan.pp` stages (or takes `stage_layers`, where not empty: layers per stage) and
/// shards each (see above) on `cluster`, whose device 0 is of kind `device`. Preconditions: plan.pp > 1,
/// plan.virtual_stages == 1, the plan has a named mesh. Throws PlanError where no cut fits the memory
/// or a stage's program finds no sharding that does. `options.time_limit_s` bounds each program (a
/// layer's, a stage's); the layer range and memory fields of `options` are set here.
[[nodiscard]] AutoPipeline auto_pipeline(const models::Graph& g, const strategies::Plan& plan, const Cluster& cluster,
                                         const DeviceProfile& device, const AutoShardingOptions& options,
                                         const std::vector<std::int64_t>& stage_layers = {});

}  // namespace parasim::sim
