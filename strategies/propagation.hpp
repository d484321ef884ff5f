#pragma once
/// Sharding propagation: from a few annotated tensors to a sharding of every operator (GSPMD, Xu et al.
/// 2021, §3.5). Every operator is an einsum over named dims (models/operator.hpp), so a sharding is a
/// choice of mesh axes per dim, and a tensor's layout is read off its operator's dims. Propagation
/// carries a dim's axes along the graph's edges: position k of a producer's output is position k of the
/// consumer's input, so the consumer's dim there takes the producer's axes (forward), and the reverse
/// (backward). Once every operator has its sharding, the lowering derives the collectives where layouts
/// meet (sim/work/layout.hpp): a split contraction's partial sum becomes an all-reduce or a
/// reduce-scatter, a split the consumer does not want an all-gather, a moved split an all-to-all.
///
/// The rules, in priority order (a dim, once given axes, keeps them):
///  1. Annotations. Each pins dims of the operators it names; two that pin one dim differently, an
///     unknown axis, an axis that does not divide the dim (a transformer's vocabulary excepted: it is
///     padded, as Megatron-LM pads it and the tp knob splits it), an axis on two dims of one operator, or a
///     dim that cannot be split (a norm's normalised dim, a window) are faults at the annotation.
///  2. The data axis, if the mesh has one, splits the batch dim `b` of every graph input.
///  3. Rounds until nothing changes; in each, a forward sweep in topological order (producer to
///     consumer), then operators holding one weight (tied embeddings) agree, then a backward sweep
///     in reverse order (consumer to producer). The first axes to reach a dim win. An offer is cut to
///     the axes the operator's other dims do not use; one that would split a dim that cannot be split
///     or does not divide it is refused, leaving the dim open to later offers.
///  4. A dim nothing reached is replicated.
/// Replicated is information like any other: a dim pinned replicated passes that on.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/graph.hpp"
#include "strategies/annotation.hpp"
#include "strategies/mesh.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

/// Where a dim's sharding came from.
struct DimOrigin {
  enum class Kind : std::uint8_t { Replicated, Annotation, Data, Forward, Backward, Tied };
  Kind kind = Kind::Replicated;
  /// Annotation: its index; Forward, Backward and Tied: the operator it came from; otherwise -1.
  std::int64_t from = -1;
  bool operator==(const DimOrigin&) const = default;
};

struct Propagation {
  std::vector<OpSharding> sharding;            ///< per operator; dims in the operator's dim order
  std::vector<std::vector<DimOrigin>> origin;  ///< per operator, per dim of Operator::dims
};

struct PropagationResult {
  Propagation propagation;
  std::optional<PlanProblem> problem;  ///< the first faulty annotation, at its pointer
};

/// Whether a split of `dim` may leave it uneven: a transformer's vocabulary, padded to a multiple of
/// the split as Megatron-LM pads it (--make-vocab-size-divisible-by), as the tp knob splits it too.
[[nodiscard]] bool split_may_pad(const models::Graph& g, const models::Dim& dim);

/// The annotations a plan with a mesh applies, in priority order: the graph's own (a graph file's
/// "shardings"), then the plan's. An automatically sharded plan applies its solution alone.
[[nodiscard]] std::vector<ShardingAnnotation> plan_annotations(const models::Graph& g, const PlanSpec& spec);

/// Propagates `annotations` over `g` on `mesh` (axes of the Pipeline role cannot split a tensor).
/// `data_axis`: the mesh's data axis, or -1.
[[nodiscard]] PropagationResult propagate_shardings(const models::Graph& g, const DeviceMesh& mesh, int data_axis,
                                                    const std::vector<ShardingAnnotation>& annotations);

}  // namespace parasim::strategies
