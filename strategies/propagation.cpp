#include "strategies/propagation.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/did_you_mean.hpp"

namespace parasim::strategies {
namespace {

using models::Graph;
using models::OpId;
using models::Operator;
using Kind = DimOrigin::Kind;

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

int loop_index(const Operator& o, std::string_view dim) {
  for (std::size_t i = 0; i < o.dims.size(); ++i)
    if (o.dims[i].name == dim) return static_cast<int>(i);
  return -1;
}

bool padded(const Graph& g, const models::Dim& dim) { return split_may_pad(g, dim); }

std::string dim_names(const std::vector<models::Dim>& dims) {
  std::string out;
  for (const auto& d : dims) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

/// The propagation's state: per operator and loop dim, the axes given so far (none: still open).
class Propagator {
 public:
  Propagator(const Graph& g, const DeviceMesh& mesh, const std::vector<ShardingAnnotation>& annotations)
      : g_(g), mesh_(mesh), annotations_(annotations), axes_(g.op_count()), origin_(g.op_count()) {
    for (OpId op = 0; op < g.op_count(); ++op) {
      axes_[op].resize(g.op(op).dims.size());
      origin_[op].resize(g.op(op).dims.size());
    }
  }

  std::optional<PlanProblem> annotate() {
    for (std::size_t i = 0; i < annotations_.size(); ++i)
      if (auto p = apply(i)) {
        p->file = annotations_[i].file;
        return p;
      }
    return std::nullopt;
  }

  void seed_data(int data_axis) {
    if (data_axis < 0 || mesh_.axes[static_cast<std::size_t>(data_axis)].size <= 1) return;
    for (OpId op = 0; op < g_.op_count(); ++op)
      if (g_.op(op).kind == models::OpKind::Input)
        if (const int k = loop_index(g_.op(op), "b"); k >= 0) offer(op, k, {data_axis}, {Kind::Data, -1});
  }

  void propagate() {
    const std::vector<OpId> topo = g_.topological_order();
    std::map<std::string, std::vector<OpId>> holders;  // weight name → the operators holding it
    for (OpId op : topo)
      for (const auto& w : g_.op(op).weights) holders[w.name].push_back(op);
    for (bool changed = true; changed;) {
      changed = false;
      for (OpId op : topo) {
        const auto producers = g_.producers(op);
        for (std::size_t slot = 0; slot < producers.size(); ++slot) changed |= carry(producers[slot], op, slot, true);
      }
      for (const auto& [name, ops] : holders)
        for (OpId from : ops)
          for (OpId to : ops)
            if (from != to) changed |= tie(name, from, to);
      for (auto it = topo.rbegin(); it != topo.rend(); ++it)
        for (auto [consumer, slot] : g_.consumers(*it)) changed |= carry(*it, consumer, static_cast<std::size_t>(slot), false);
    }
  }

  Propagation result() const {
    Propagation out;
    out.sharding.resize(g_.op_count());
    out.origin = origin_;
    for (OpId op = 0; op < g_.op_count(); ++op) {
      const Operator& o = g_.op(op);
      for (std::size_t k = 0; k < o.dims.size(); ++k) {
        if (!axes_[op][k]) continue;
        std::vector<int> kept;
        for (int a : *axes_[op][k])
          if (mesh_.axes[static_cast<std::size_t>(a)].size > 1) kept.push_back(a);
        if (!kept.empty()) out.sharding[op].dims.push_back(DimSharding{o.dims[k].name, std::move(kept)});
      }
    }
    return out;
  }

 private:
  // ---- annotations ----

  /// A preset: on every weight, its first dim the preset names, over the preset's axis.
  std::optional<PlanProblem> apply_preset(std::size_t index) {
    const ShardingAnnotation& a = annotations_[index];
    static const std::vector<std::string> megatron{"g", "f", "v"}, channels{"co", "c"};
    const std::vector<std::string>* order = a.pattern == "megatron" ? &megatron : a.pattern == "channels" ? &channels : nullptr;
    if (order == nullptr)
      return PlanProblem{a.pointer + "/preset", "unknown preset " + quoted(a.pattern) + "; expected \"megatron\" or \"channels\""};
    std::size_t pinned = 0;
    for (OpId op = 0; op < g_.op_count(); ++op) {
      const Operator& o = g_.op(op);
      for (const auto& w : o.weights) {
        for (const auto& d : *order) {
          if (std::find(w.spec.dims.begin(), w.spec.dims.end(), d) == w.spec.dims.end()) continue;
          const int k = loop_index(o, d);
          if (k < 0) break;
          if (auto p = pin(index, op, k, {a.axis}, a.pointer + "/axis")) return p;
          ++pinned;
          break;
        }
      }
    }
    if (pinned == 0)
      return PlanProblem{a.pointer + "/preset", "the preset " + quoted(a.pattern) + " finds no weight with a dim it splits (" +
                                                     (a.pattern == "megatron" ? "heads g, MLP width f, vocabulary v" : "channels co, c") +
                                                     ") in this model"};
    return std::nullopt;
  }

  std::optional<PlanProblem> apply(std::size_t index) {
    const ShardingAnnotation& a = annotations_[index];
    if (a.target == AnnotationTarget::Preset) return apply_preset(index);
    const std::string key(to_string(a.target));
    std::size_t matched = 0;
    std::vector<std::string> names;  // for a suggestion when nothing matches
    for (OpId op = 0; op < g_.op_count(); ++op) {
      const Operator& o = g_.op(op);
      if (a.target == AnnotationTarget::Weight) {
        for (const auto& w : o.weights) {
          names.push_back(w.name);
          if (!name_matches(a.pattern, w.name)) continue;
          ++matched;
          if (auto p = pin_tensor(index, op, w.spec.dims, "weight " + quoted(w.name))) return p;
        }
        continue;
      }
      names.push_back(o.name);
      if (!name_matches(a.pattern, o.name)) continue;
      ++matched;
      if (a.target == AnnotationTarget::Output) {
        if (auto p = pin_tensor(index, op, o.output.dims, "the output of " + quoted(o.name))) return p;
        if (auto p = pin_partial(index, op)) return p;
      } else {
        for (const auto& [dim, axes] : a.dims) {
          const std::string at = a.pointer + "/dims/" + dim;
          const int k = loop_index(o, dim);
          if (k < 0) return PlanProblem{at, "operator " + quoted(o.name) + " has no dim " + quoted(dim) + "; its dims are " + dim_names(o.dims)};
          if (auto p = pin(index, op, k, axes, at)) return p;
        }
      }
    }
    if (matched == 0)
      return PlanProblem{a.pointer + "/" + key, "no " + key + " of the model is named " + quoted(a.pattern) + did_you_mean(a.pattern, names)};
    return std::nullopt;
  }

  std::optional<PlanProblem> pin_tensor(std::size_t index, OpId op, const std::vector<std::string>& dims, const std::string& what) {
    const ShardingAnnotation& a = annotations_[index];
    if (a.spec.size() != dims.size()) {
      std::string listed;
      for (const auto& d : dims) listed += (listed.empty() ? "" : ", ") + d;
      return PlanProblem{a.pointer + "/spec", what + " has " + std::to_string(dims.size()) + " dims (" + listed + "), but the spec lists " +
                                                  std::to_string(a.spec.size())};
    }
    const Operator& o = g_.op(op);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const std::string at = a.pointer + "/spec/" + std::to_string(i);
      const int k = loop_index(o, dims[i]);
      if (k < 0) {
        if (a.spec[i].empty()) continue;  // a window's extent, left whole
        return PlanProblem{at, "dim " + std::to_string(i) + " of " + what + " (" + quoted(dims[i]) + ") is a window or token extent of " +
                                   quoted(o.name) + ", which cannot be split; expected null"};
      }
      if (auto p = pin(index, op, k, a.spec[i], at)) return p;
    }
    return std::nullopt;
  }

  std::optional<PlanProblem> pin_partial(std::size_t index, OpId op) {
    const ShardingAnnotation& a = annotations_[index];
    if (a.partial.empty()) return std::nullopt;
    const Operator& o = g_.op(op);
    std::vector<int> contracted;
    for (std::size_t k = 0; k < o.dims.size(); ++k)
      if (std::find(o.output.dims.begin(), o.output.dims.end(), o.dims[k].name) == o.output.dims.end()) contracted.push_back(static_cast<int>(k));
    const std::string at = a.pointer + "/partial";
    if (contracted.empty())
      return PlanProblem{at, "operator " + quoted(o.name) + " contracts no dim, so its output cannot be a partial sum; expected no \"partial\""};
    if (contracted.size() > 1) {
      std::string listed;
      for (int k : contracted) listed += (listed.empty() ? "" : ", ") + o.dims[static_cast<std::size_t>(k)].name;
      return PlanProblem{at, "operator " + quoted(o.name) + " contracts dims " + listed +
                                 "; say which one is split with an \"operator\" annotation on its dims instead"};
    }
    return pin(index, op, contracted.front(), a.partial, at);
  }

  std::optional<PlanProblem> pin(std::size_t index, OpId op, int k, const std::vector<std::string>& names, const std::string& at) {
    const Operator& o = g_.op(op);
    const models::Dim& dim = o.dims[static_cast<std::size_t>(k)];
    std::vector<int> axes;
    std::int64_t parts = 1;
    std::vector<std::string> mesh_names;
    for (const auto& ax : mesh_.axes)
      if (ax.role != AxisRole::Pipeline) mesh_names.push_back(ax.name);
    for (const auto& name : names) {
      const int a = mesh_.axis_index(name);
      if (a < 0) return PlanProblem{at, "unknown mesh axis " + quoted(name) + "; the mesh has " + quoted_list(mesh_names) + did_you_mean(name, mesh_names)};
      if (mesh_.axes[static_cast<std::size_t>(a)].role == AxisRole::Pipeline)
        return PlanProblem{at, "the pipeline axis " + quoted(name) + " cannot split a tensor: pipeline stages come from \"pp\"; expected one of " +
                                   quoted_list(mesh_names)};
      if (std::find(axes.begin(), axes.end(), a) != axes.end()) return PlanProblem{at, "mesh axis " + quoted(name) + " is listed twice"};
      axes.push_back(a);
      parts *= mesh_.axes[static_cast<std::size_t>(a)].size;
    }
    const std::string where = "dim " + quoted(dim.name) + " of operator " + quoted(o.name);
    if (!axes.empty() && parts > 1 && !dim.splittable)
      return PlanProblem{at, where + " cannot be split (a normalised or windowed dim); expected it replicated"};
    if (dim.size % parts != 0 && !padded(g_, dim))
      return PlanProblem{at, "the split over " + std::to_string(parts) + " devices does not divide " + where + " (size " + std::to_string(dim.size) + ")"};
    auto& slot = axes_[op][static_cast<std::size_t>(k)];
    if (slot) {
      if (*slot == axes) return std::nullopt;
      const std::int64_t earlier = origin_[op][static_cast<std::size_t>(k)].from;
      const ShardingAnnotation& first = annotations_[static_cast<std::size_t>(earlier)];
      return PlanProblem{at, "contradicts " + (first.file.empty() ? "" : first.file + " at ") + first.pointer + ", which splits " + where + " over " +
                                 axes_text(*slot) + ", not " + axes_text(axes)};
    }
    for (std::size_t j = 0; j < o.dims.size(); ++j) {
      if (static_cast<int>(j) == k || !axes_[op][j]) continue;
      for (int a : axes)
        if (std::find(axes_[op][j]->begin(), axes_[op][j]->end(), a) != axes_[op][j]->end())
          return PlanProblem{at, "mesh axis " + quoted(mesh_.axes[static_cast<std::size_t>(a)].name) + " would split both dim " + quoted(o.dims[j].name) +
                                     " and " + where + "; an axis splits at most one dim of an operator"};
    }
    slot = axes;
    origin_[op][static_cast<std::size_t>(k)] = {Kind::Annotation, static_cast<std::int64_t>(index)};
    return std::nullopt;
  }

  [[nodiscard]] std::string axes_text(const std::vector<int>& axes) const {
    if (axes.empty()) return "nothing (replicated)";
    std::string out;
    for (int a : axes) out += (out.empty() ? "" : " × ") + quoted(mesh_.axes[static_cast<std::size_t>(a)].name);
    return out;
  }

  // ---- propagation ----

  /// Offers `axes` to dim k of `op` (open dims only); true when it took them.
  bool offer(OpId op, int k, const std::vector<int>& axes, DimOrigin origin) {
    auto& slot = axes_[op][static_cast<std::size_t>(k)];
    if (slot) return false;
    const Operator& o = g_.op(op);
    std::vector<int> kept;
    for (int a : axes) {
      bool used = false;
      for (std::size_t j = 0; j < o.dims.size() && !used; ++j)
        if (static_cast<int>(j) != k && axes_[op][j]) used = std::find(axes_[op][j]->begin(), axes_[op][j]->end(), a) != axes_[op][j]->end();
      if (!used) kept.push_back(a);
    }
    if (kept.empty() != axes.empty()) return false;  // every axis it offered is taken here: leave the dim open
    std::int64_t parts = 1;
    for (int a : kept) parts *= mesh_.axes[static_cast<std::size_t>(a)].size;
    const models::Dim& dim = o.dims[static_cast<std::size_t>(k)];
    if (parts > 1 && (!dim.splittable || (dim.size % parts != 0 && !padded(g_, dim)))) return false;
    slot = std::move(kept);
    origin_[op][static_cast<std::size_t>(k)] = origin;
    return true;
  }

  /// Carries the dims of the tensor on the edge producer → consumer (input `slot`) one way.
  bool carry(OpId producer, OpId consumer, std::size_t slot, bool forward) {
    const Operator& p = g_.op(producer);
    const Operator& c = g_.op(consumer);
    if (slot >= c.inputs.size() || c.routing) return false;  // token routing moves rows between devices: not a layout to copy
    const auto& in = c.inputs[slot].dims;
    bool changed = false;
    for (std::size_t i = 0; i < in.size() && i < p.output.dims.size(); ++i) {
      const int pk = loop_index(p, p.output.dims[i]);
      const int ck = loop_index(c, in[i]);
      if (pk < 0 || ck < 0) continue;
      const auto& from = forward ? axes_[producer][static_cast<std::size_t>(pk)] : axes_[consumer][static_cast<std::size_t>(ck)];
      if (!from) continue;
      changed |= forward ? offer(consumer, ck, *from, {Kind::Forward, static_cast<std::int64_t>(producer)})
                         : offer(producer, pk, *from, {Kind::Backward, static_cast<std::int64_t>(consumer)});
    }
    return changed;
  }

  /// Operators holding one weight split it alike.
  bool tie(const std::string& name, OpId from, OpId to) {
    const Operator& f = g_.op(from);
    const Operator& t = g_.op(to);
    const models::Weight* wf = nullptr;
    const models::Weight* wt = nullptr;
    for (const auto& w : f.weights)
      if (w.name == name) wf = &w;
    for (const auto& w : t.weights)
      if (w.name == name) wt = &w;
    bool changed = false;
    for (std::size_t i = 0; i < wf->spec.dims.size() && i < wt->spec.dims.size(); ++i) {
      const int fk = loop_index(f, wf->spec.dims[i]);
      const int tk = loop_index(t, wt->spec.dims[i]);
      if (fk < 0 || tk < 0 || !axes_[from][static_cast<std::size_t>(fk)]) continue;
      changed |= offer(to, tk, *axes_[from][static_cast<std::size_t>(fk)], {Kind::Tied, static_cast<std::int64_t>(from)});
    }
    return changed;
  }

  const Graph& g_;
  const DeviceMesh& mesh_;
  const std::vector<ShardingAnnotation>& annotations_;
  std::vector<std::vector<std::optional<std::vector<int>>>> axes_;
  std::vector<std::vector<DimOrigin>> origin_;
};

}  // namespace

bool split_may_pad(const Graph& g, const models::Dim& dim) { return g.transformer().has_value() && dim.name == "v"; }

std::vector<ShardingAnnotation> plan_annotations(const Graph& g, const PlanSpec& spec) {
  if (spec.auto_sharding) return spec.shardings;
  std::vector<ShardingAnnotation> all = g.annotations();
  all.insert(all.end(), spec.shardings.begin(), spec.shardings.end());
  return all;
}

PropagationResult propagate_shardings(const Graph& g, const DeviceMesh& mesh, int data_axis, const std::vector<ShardingAnnotation>& annotations) {
  Propagator prop(g, mesh, annotations);
  PropagationResult out;
  if ((out.problem = prop.annotate())) return out;
  prop.seed_data(data_axis);
  prop.propagate();
  out.propagation = prop.result();
  return out;
}

}  // namespace parasim::strategies
