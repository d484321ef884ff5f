#pragma once
/// Layouts: where a tensor lives on the mesh, and the collectives that move it from one layout to
/// another (GSPMD's resharding, one mesh axis at a time). The chunk programs (sim/work/chunk_program.hpp)
/// derive every tensor- and expert-parallel collective from these rules.
#include <string>
#include <vector>

#include "models/operator.hpp"
#include "sim/collectives.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// Sorted mesh-axis indices.
using AxisSet = std::vector<int>;

/// Where a tensor lives: for each of its dims the axes splitting it, and the axes over which it is a
/// partial sum (still to be reduced).
struct Layout {
  std::vector<std::vector<int>> pos;
  AxisSet partial;
  auto operator<=>(const Layout&) const = default;
};

/// The output of `op`: a partial sum over the axes that split its contraction dims.
[[nodiscard]] Layout output_layout(const models::Operator& op, const strategies::OpSharding& sh);
/// Input `slot` of `op` as the operator reads it (never a partial sum).
[[nodiscard]] Layout input_layout(const models::Operator& op, const strategies::OpSharding& sh, std::size_t slot);
/// The gradient `op` produces for its input `slot`: a partial sum over the axes splitting dims the
/// input does not have (a column-parallel layer's input gradient sums over the split output dim).
[[nodiscard]] Layout input_grad_layout(const models::Operator& op, const strategies::OpSharding& sh, std::size_t slot);
[[nodiscard]] Layout without_partial(Layout l);
/// Whether `l` is neither split nor partial over `axis`.
[[nodiscard]] bool replicated_over(const Layout& l, int axis);

/// One collective of a reshard.
struct Reshard {
  CollectiveKind kind;
  int axis;
  double bytes;  ///< per the size convention of collectives.hpp
};

/// The collectives that turn a tensor in layout `from` into layout `to`, one mesh axis at a time:
/// a partial sum becomes an all-reduce (a reduce-scatter when `to` splits it over the axis), an axis
/// that splits `from` but not `to` an all-gather, an axis that moves to another dim an all-to-all.
/// `from_bytes`, `to_bytes`: the tensor's local size in each layout.
[[nodiscard]] std::vector<Reshard> reshard(const Layout& from, const Layout& to, double from_bytes, double to_bytes,
                                           const strategies::DeviceMesh& mesh);

/// The axes over which a weight's gradient is a partial sum on each device. A weight all of whose
/// dims are output dims (a bias, a norm's scale) is applied after any contraction, so its gradient
/// sums over the output dims it lacks; any other weight's gradient sums over every split dim it
/// lacks (a linear layer's weight gradient sums over the tokens).
[[nodiscard]] AxisSet weight_grad_partial_axes(const models::Operator& op, const strategies::OpSharding& sh, const models::Weight& w);

}  // namespace parasim::sim
