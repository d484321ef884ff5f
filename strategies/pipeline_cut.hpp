#pragma once
/// Pipeline stages for models whose layers are not uniform (ResNet, Wide-ResNet), as Alpa's
/// inter-operator pass cuts them (Zheng et al., OSDI'22, §5.2): dynamic programming over the layer
/// order that chooses where to cut and, for every stage, an intra-operator plan, minimising the
/// pipeline latency
///     T = Σ_s t_s + (m − 1) · max_s t_s            (Alpa eq. 2; GPipe's fill, steady state, drain)
/// where t_s is stage s's forward + backward time for one micro-batch and m the micro-batch count.
///
/// The intra-operator choice a stage makes here is how it uses the mesh's tensor axis, whose size is
/// the same for every stage of a Plan: split the operators' model dims over it (channel-split model
/// parallel, as make_plan does) or split the batch over it (data parallel inside the stage). Early
/// CNN layers — large activations, small weights — favour the second, late ones the first
/// (Krizhevsky 2014, "one weird trick"; Alpa's Wide-ResNet plans).
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

/// How a pipeline stage uses the tensor axis of the mesh.
enum class InnerAxisUse : std::uint8_t {
  Model,  ///< model dims split over it (make_plan's sharding)
  Data,   ///< the batch dim split over it; every weight whole on each device of the axis
};
[[nodiscard]] std::string_view to_string(InnerAxisUse u);  ///< "model", "data"

/// What the cut is chosen from, per graph layer in order.
struct LayerCostTable {
  /// seconds[o][l]: forward + backward (recomputation and exposed communication inside the stage
  /// included) of layer l for one micro-batch on one device of its stage, under option o. Every row
  /// has one entry per layer.
  std::vector<std::vector<double>> seconds;
  /// boundary_s[l]: sending layer l's output to the next stage and its gradient back, in seconds,
  /// paid by the stage that ends with layer l (not by the last stage).
  std::vector<double> boundary_s;
};

/// The chosen cut.
struct PipelineCut {
  std::vector<std::int64_t> stage_layers;  ///< layers per stage, in order; sums to the layer count
  std::vector<int> stage_option;           ///< per stage: the index of its option in the table
  double latency_s = 0;                    ///< T above
  bool operator==(const PipelineCut&) const = default;
};

/// The cut of the table's layers into `stages` contiguous non-empty stages, each with its cheapest
/// option, that minimises T for `micro_batches` micro-batches. Alpa's algorithm: for each candidate
/// bound t_max on the slowest stage (every distinct stage cost, ascending), a dynamic programme finds
/// the least Σ t_s with every t_s ≤ t_max; T = min over t_max of Σ + (m − 1)·t_max, stopping once
/// (m − 1)·t_max alone exceeds the best T. Ties go to the smaller t_max, the earliest cut and the
/// lowest option index, so the answer is deterministic. O(L² · (stages · L²)) for L layers.
/// `fits(stage, first, end)`, where given, says whether layers [first, end) fit a stage's devices as
/// stage `stage` (0-based; its schedule sets how many micro-batches' activations it holds): cuts it
/// refuses are never chosen (Alpa prunes stage–mesh pairs that run out of memory the same way).
/// Nothing when stages < 1, stages > layers, the table is empty or ragged, or no cut fits.
using StageFits = std::function<bool(std::size_t stage, std::size_t first, std::size_t end)>;
[[nodiscard]] std::optional<PipelineCut> cut_pipeline(const LayerCostTable& table, std::int64_t stages, std::int64_t micro_batches,
                                                      const StageFits& fits = {});

/// `plan` with each stage's operators sharded as `uses` says: a Data stage drops the tensor axis
/// from every operator's model dims and splits the batch dim b over it as well (after the data axes,
/// outermost first); inputs entering the graph keep their sharding. Preconditions: `uses` has one
/// entry per pipeline stage, virtual_stages == 1, and `plan` was made for `graph`. The description
/// is left to the caller.
[[nodiscard]] Plan apply_stage_uses(const models::Graph& graph, Plan plan, const std::vector<InnerAxisUse>& uses);

}  // namespace parasim::strategies
