#include "sim/sharding_view.hpp"

#include <set>

#include "sim/work/layout.hpp"
#include "strategies/propagation.hpp"

namespace parasim::sim {
namespace {

using models::OpId;
using models::Operator;
using strategies::DimOrigin;

std::vector<std::string> axis_names(const strategies::DeviceMesh& mesh, const std::vector<int>& axes) {
  std::vector<std::string> out;
  for (int a : axes) out.push_back(mesh.axes[static_cast<std::size_t>(a)].name);
  return out;
}

TensorView tensor_view(const strategies::DeviceMesh& mesh, const std::vector<std::string>& dims, const Layout& l, std::string name) {
  TensorView t;
  t.name = std::move(name);
  for (std::size_t i = 0; i < dims.size(); ++i) t.dims.emplace_back(dims[i], axis_names(mesh, l.pos[i]));
  t.partial = axis_names(mesh, l.partial);
  return t;
}

std::string origin_text(const models::Graph& g, const std::vector<strategies::ShardingAnnotation>& annotations, const DimOrigin& o) {
  switch (o.kind) {
    case DimOrigin::Kind::Annotation: {
      const auto& a = annotations[static_cast<std::size_t>(o.from)];
      return "annotation " + (a.file.empty() ? "" : a.file + " ") + a.pointer;
    }
    case DimOrigin::Kind::Data: return "data axis";
    case DimOrigin::Kind::Forward: return "forward from " + g.op(static_cast<OpId>(o.from)).name;
    case DimOrigin::Kind::Backward: return "backward from " + g.op(static_cast<OpId>(o.from)).name;
    case DimOrigin::Kind::Tied: return "tied weight of " + g.op(static_cast<OpId>(o.from)).name;
    case DimOrigin::Kind::Replicated: break;
  }
  return "replicated (nothing reached it)";
}

void add_reshards(std::vector<ReshardView>& into, const strategies::DeviceMesh& mesh, const Layout& from, const Layout& to,
                  const std::string& tensor, const std::string& consumer, int slot) {
  for (const Reshard& r : reshard(from, to, 0, 0, mesh))
    into.push_back({tensor, consumer, slot, r.kind, mesh.axes[static_cast<std::size_t>(r.axis)].name});
}

}  // namespace

ShardingView view_shardings(const models::Graph& g, const strategies::Plan& plan, const strategies::PlanSpec& spec) {
  ShardingView v;
  v.plan = plan.description;
  v.annotated = plan.annotated;
  for (const auto& a : plan.mesh.axes) v.mesh.emplace_back(a.name, a.size);
  std::vector<std::vector<DimOrigin>> origins;
  std::vector<strategies::ShardingAnnotation> annotations;
  if (plan.annotated) {
    const int data_axis = plan.dp_axis;
    annotations = strategies::plan_annotations(g, spec);
    origins = strategies::propagate_shardings(g, plan.mesh, data_axis, annotations).propagation.origin;
  }
  for (OpId op : g.topological_order()) {
    const Operator& o = g.op(op);
    const strategies::OpSharding& sh = plan.sharding[op];
    OperatorView ov;
    ov.name = o.name;
    ov.kind = std::string(models::to_string(o.kind));
    for (std::size_t k = 0; k < o.dims.size(); ++k) {
      const auto& axes = sh.axes_of(o.dims[k].name);
      ov.dims.emplace_back(o.dims[k].name, axis_names(plan.mesh, axes));
      if (plan.annotated) ov.origin.push_back(origin_text(g, annotations, origins[op][k]));
      else ov.origin.push_back(axes.empty() ? "replicated" : "the plan's knobs (Megatron's sharding)");
    }
    ov.output = tensor_view(plan.mesh, o.output.dims, output_layout(o, sh), "");
    for (const auto& w : o.weights) {
      Layout l;
      for (const auto& d : w.spec.dims) l.pos.push_back(sh.axes_of(d));
      ov.weights.push_back(tensor_view(plan.mesh, w.spec.dims, l, w.name));
    }
    const auto producers = g.producers(op);
    std::set<std::pair<OpId, Layout>> done;
    for (std::size_t slot = 0; slot < producers.size() && slot < o.inputs.size(); ++slot) {
      const OpId p = producers[slot];
      if (g.op(p).kind == models::OpKind::Input || o.routing) continue;
      const Layout to = input_layout(o, sh, slot);
      if (!done.insert({p, to}).second) continue;
      add_reshards(ov.forward, plan.mesh, output_layout(g.op(p), plan.sharding[p]), to, g.op(p).name, o.name, static_cast<int>(slot));
    }
    if (o.kind != models::OpKind::Input) {
      const Layout to = without_partial(output_layout(o, sh));
      std::set<Layout> seen;
      for (auto [consumer, slot] : g.consumers(op)) {
        const Operator& q = g.op(consumer);
        if (q.routing) continue;
        const Layout from = input_grad_layout(q, plan.sharding[consumer], static_cast<std::size_t>(slot));
        if (!seen.insert(from).second) continue;
        add_reshards(ov.backward, plan.mesh, from, to, o.name, q.name, slot);
      }
    }
    v.operators.push_back(std::move(ov));
  }
  return v;
}

}  // namespace parasim::sim
