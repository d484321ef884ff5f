#pragma once
/// The plan search's evaluator (strategies::search::Evaluator) made of sim/'s lowering and engines:
/// strategies/search never includes sim/, so the search takes this as a parameter
/// (scenarios/search_evaluator.hpp builds one for a scenario).
///  - simulate: sim::simulate with the analytical engine and the data-parallel replica shortcut;
///  - refine: the same with the simgrid backend;
///  - layer_costs: per graph layer, one micro-batch's forward, backward (recomputation included) and
///    exposed intra-stage communication, and the send to a next stage, read from a *probe*: the
///    candidate's model, tensor parallelism, micro-batch size, recomputation and sequence parallelism
///    simulated for one micro-batch with every graph layer on a pipeline stage of its own (transformer
///    embeddings and head share the first and last block's stage), no data parallelism. The probe is
///    the lowering's own answer — the same segments, collectives and sends — at a few thousandths of
///    the cost of a step; probes are cached per (tp, cp, micro-batch, ep, recompute, sequence
///    parallel, stage use).
///  - estimate: a closed form over the probe's layer costs (see search_estimate.cpp):
///       T = (m − 1)·max_s W_s + (Σ_s W_s + (v − 1)·max_s W_s)/v        pipeline (Narayanan et al. 2021 §2.2)
///         + pipeline sends on the fill and drain path
///         + max_s (exposed gradient reduction_s + optimizer_s)
///    with W_s stage s's per-micro-batch work, m micro-batches, v virtual stages; gradient reduction
///    and ZeRO-3 gathers priced by sim's collective cost on the plan's real data-parallel groups.
/// Every function is thread-safe: clusters and probes are built once under a lock and then shared.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/graph.hpp"
#include "sim/cluster.hpp"
#include "sim/cluster_spec.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/profile.hpp"
#include "strategies/search/evaluation.hpp"

namespace parasim::sim {

/// One layer's costs from a probe, per micro-batch on one device of its stage, in seconds.
struct ProbeLayer {
  double forward_s = 0;
  double backward_s = 0;  ///< recomputation included
  double comm_s = 0;      ///< exposed tensor-parallel and expert communication
  double optimizer_s = 0; ///< the optimizer step of the layer's weights, without ZeRO
  double boundary_s = 0;  ///< the layer's output to a next stage and its gradient back
  double weight_bytes = 0;  ///< the layer's weights on one device (for ZeRO-3 gathers)
  /// ZeRO-3's all-gathers of the layer per pass, in the plan's gather units (strategies/implementation.hpp;
  /// its weights split evenly between them).
  double gather_units = 1;
  double grad_bytes = 0;    ///< the layer's gradients on one device (for their reduction)
};

/// The two micro-batch counts a search simulates a plan's step at, to extrapolate to its own count
/// (SearchEvaluator::simulate); {0, 0} when it simulates the step whole (few micro-batches, or a count
/// the schedule's period does not divide).
struct SteadyState {
  std::int64_t low = 0;
  std::int64_t high = 0;
};
[[nodiscard]] SteadyState steady_state_counts(const strategies::Plan& plan);

class SearchEvaluator {
 public:
  /// The model's graph for `batch` samples. Called from several threads at once.
  using GraphBuilder = std::function<models::Graph(std::int64_t batch)>;

  /// `cluster`: a checked cluster spec (a candidate's node count replaces its own); `profile`: the
  /// one it is checked against; `build_graph`: the model the search plans; `file`: the scenario file,
  /// named by the errors about its cluster; `input`: the input pipeline of every simulated plan
  /// (none: inputs on the devices).
  SearchEvaluator(ClusterSpec cluster, Profile profile, GraphBuilder build_graph, std::string file, std::optional<InputPipeline> input = std::nullopt);
  SearchEvaluator(const SearchEvaluator&) = delete;
  SearchEvaluator& operator=(const SearchEvaluator&) = delete;

  /// The functions the search calls; they borrow this object, which must outlive them.
  [[nodiscard]] strategies::search::Evaluator evaluator() const;

  /// The cluster of `nodes` nodes (the cluster spec's, with that node count). Throws InputError naming
  /// the problem when the cluster spec cannot have that many nodes.
  [[nodiscard]] const Cluster& cluster(std::int64_t nodes) const;
  [[nodiscard]] const Profile& profile() const { return profile_; }
  /// The input pipeline each simulated plan runs with (a scenario's "data"). The estimates leave it
  /// out: the plans simulated are ranked with it.
  [[nodiscard]] const std::optional<InputPipeline>& input_pipeline() const { return input_; }

  [[nodiscard]] strategies::search::Evaluation estimate(const strategies::search::Candidate& c, const models::Graph& graph,
                                                        const strategies::Plan& plan) const;
  /// The step simulated — at two smaller micro-batch counts and extrapolated where the plan has
  /// many (steady_state_counts) — with the analytical engine, or SimGrid when `simgrid`.
  [[nodiscard]] strategies::search::Evaluation simulate(const strategies::search::Candidate& c, const models::Graph& graph,
                                                        const strategies::Plan& plan, bool simgrid) const;
  /// Per graph layer, for the candidate's tp, micro-batch, ep, recompute and sequence parallel.
  [[nodiscard]] const std::vector<ProbeLayer>& probe(const strategies::search::Candidate& c, strategies::InnerAxisUse use) const;

 private:
  using ProbeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, bool, int>;
  struct ProbeSlot {
    std::once_flag once;
    std::vector<ProbeLayer> layers;
  };
  [[nodiscard]] std::vector<ProbeLayer> run_probe(const strategies::search::Candidate& c, strategies::InnerAxisUse use) const;

  ClusterSpec cluster_spec_;
  Profile profile_;
  GraphBuilder build_graph_;
  std::string file_;
  std::optional<InputPipeline> input_;
  mutable std::mutex mutex_;
  mutable std::map<std::int64_t, std::unique_ptr<Cluster>> clusters_;
  mutable std::map<ProbeKey, std::unique_ptr<ProbeSlot>> probes_;
};

}  // namespace parasim::sim
