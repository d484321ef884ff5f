#include "sim/work/layout.hpp"

#include <algorithm>

namespace parasim::sim {
namespace {

bool contains(const std::vector<int>& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); }
bool in_dims(const std::vector<std::string>& dims, const std::string& d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); }

Layout tensor_layout(const strategies::OpSharding& sh, const std::vector<std::string>& dims, bool partial_over_missing) {
  Layout l;
  for (const auto& d : dims) l.pos.push_back(sh.axes_of(d));
  if (partial_over_missing) {
    for (const auto& ds : sh.dims)
      if (!in_dims(dims, ds.dim))
        for (int a : ds.axes)
          if (!contains(l.partial, a)) l.partial.push_back(a);
    std::sort(l.partial.begin(), l.partial.end());
  }
  return l;
}

}  // namespace

Layout output_layout(const models::Operator& op, const strategies::OpSharding& sh) { return tensor_layout(sh, op.output.dims, true); }
Layout input_layout(const models::Operator& op, const strategies::OpSharding& sh, std::size_t slot) {
  return tensor_layout(sh, op.inputs[slot].dims, false);
}
Layout input_grad_layout(const models::Operator& op, const strategies::OpSharding& sh, std::size_t slot) {
  return tensor_layout(sh, op.inputs[slot].dims, true);
}
Layout without_partial(Layout l) {
  l.partial.clear();
  return l;
}
bool replicated_over(const Layout& l, int axis) {
  for (const auto& p : l.pos)
    if (contains(p, axis)) return false;
  return !contains(l.partial, axis);
}

std::vector<Reshard> reshard(const Layout& from, const Layout& to, double from_bytes, double to_bytes, const strategies::DeviceMesh& mesh) {
  std::vector<Reshard> needs;
  if (from.pos.size() != to.pos.size()) return needs;
  for (int a = 0; a < static_cast<int>(mesh.axes.size()); ++a) {
    const auto size = static_cast<double>(mesh.axes[static_cast<std::size_t>(a)].size);
    if (size <= 1) continue;
    int pf = -1, pt = -1;
    for (std::size_t i = 0; i < from.pos.size(); ++i) {
      if (contains(from.pos[i], a)) pf = static_cast<int>(i);
      if (contains(to.pos[i], a)) pt = static_cast<int>(i);
    }
    if (contains(from.partial, a)) {
      if (pt < 0) needs.push_back({CollectiveKind::AllReduce, a, to_bytes});
      else needs.push_back({CollectiveKind::ReduceScatter, a, to_bytes * size});
    } else if (pf == pt || pf < 0) {
      // unchanged, or a local slice of a replicated tensor
    } else if (pt < 0) {
      needs.push_back({CollectiveKind::AllGather, a, to_bytes});
    } else {
      needs.push_back({CollectiveKind::AllToAll, a, from_bytes});
    }
  }
  return needs;
}

AxisSet weight_grad_partial_axes(const models::Operator& o, const strategies::OpSharding& sh, const models::Weight& w) {
  bool applied_after_contraction = true;
  for (const auto& d : w.spec.dims) applied_after_contraction &= in_dims(o.output.dims, d);
  AxisSet axes;
  for (const auto& ds : sh.dims) {
    if (in_dims(w.spec.dims, ds.dim)) continue;
    if (applied_after_contraction && !in_dims(o.output.dims, ds.dim)) continue;
    for (int a : ds.axes)
      if (!contains(axes, a)) axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

}  // namespace parasim::sim
