#include "models/graph.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <boost/graph/topological_sort.hpp>

#include "common/error.hpp"

namespace parasim::models {

std::string_view to_string(MlpKind k) {
  switch (k) {
    case MlpKind::Gelu: return "gelu";
    case MlpKind::SwiGLU: return "swiglu";
    case MlpKind::SquaredRelu: return "squared_relu";
  }
  return "gelu";
}

std::optional<MlpKind> mlp_kind_from_string(std::string_view s) {
  for (MlpKind k : {MlpKind::Gelu, MlpKind::SwiGLU, MlpKind::SquaredRelu})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

std::string_view to_string(AttentionKind k) { return k == AttentionKind::Fused ? "fused" : "eager"; }

std::optional<AttentionKind> attention_kind_from_string(std::string_view s) {
  if (s == "fused") return AttentionKind::Fused;
  if (s == "eager") return AttentionKind::Eager;
  return std::nullopt;
}

std::int32_t Graph::add_layer(std::string name) {
  layers_.push_back(Layer{std::move(name)});
  return static_cast<std::int32_t>(layers_.size() - 1);
}

OpId Graph::add_op(Operator op) { return boost::add_vertex(std::move(op), g_); }

void Graph::connect(OpId from, OpId to, int slot) {
  PARASIM_CHECK(from < op_count() && to < op_count(), "connect: operator id out of range");
  boost::add_edge(from, to, TensorEdge{slot}, g_);
}

std::vector<OpId> Graph::producers(OpId id) const {
  std::vector<OpId> out(g_[id].inputs.size(), std::numeric_limits<OpId>::max());
  for (auto [it, end] = boost::in_edges(id, g_); it != end; ++it) {
    const int slot = g_[*it].input_slot;
    if (slot >= 0 && static_cast<std::size_t>(slot) < out.size()) out[static_cast<std::size_t>(slot)] = boost::source(*it, g_);
  }
  return out;
}

std::vector<std::pair<OpId, int>> Graph::consumers(OpId id) const {
  std::vector<std::pair<OpId, int>> out;
  for (auto [it, end] = boost::out_edges(id, g_); it != end; ++it) out.emplace_back(boost::target(*it, g_), g_[*it].input_slot);
  return out;
}

std::vector<std::tuple<OpId, OpId, int>> Graph::edges() const {
  std::vector<std::tuple<OpId, OpId, int>> out;
  out.reserve(edge_count());
  for (auto [it, end] = boost::edges(g_); it != end; ++it)
    out.emplace_back(boost::source(*it, g_), boost::target(*it, g_), g_[*it].input_slot);
  // Edge iteration order follows source vertices; sort so the order does not depend on storage.
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<1>(a), std::get<2>(a), std::get<0>(a)) < std::tie(std::get<1>(b), std::get<2>(b), std::get<0>(b));
  });
  return out;
}

std::vector<OpId> Graph::topological_order() const {
  std::vector<OpId> reversed;
  reversed.reserve(op_count());
  boost::topological_sort(g_, std::back_inserter(reversed));
  return {reversed.rbegin(), reversed.rend()};
}

namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string shape_string(const Operator& o, const TensorSpec& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.dims.size(); ++i) out += (i ? ", " : "") + std::to_string(o.dim_size(t.dims[i]));
  return out + "]";
}

// The edges of one cycle, in order, or nothing. An iterative depth-first search (user graphs may be
// deep); a grey vertex reached again closes a cycle, which the parent edges then trace back.
std::vector<std::tuple<OpId, OpId, int>> find_cycle(const Graph::Storage& g) {
  using Edge = Graph::Storage::edge_descriptor;
  using OutIt = Graph::Storage::out_edge_iterator;
  const std::size_t n = boost::num_vertices(g);
  enum : char { kWhite, kGrey, kBlack };
  std::vector<char> colour(n, kWhite);
  std::vector<Edge> parent(n);
  struct Frame {
    OpId v;
    OutIt it, end;
  };
  for (OpId root = 0; root < n; ++root) {
    if (colour[root] != kWhite) continue;
    std::vector<Frame> stack;
    auto [b0, e0] = boost::out_edges(root, g);
    stack.push_back({root, b0, e0});
    colour[root] = kGrey;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.it == f.end) {
        colour[f.v] = kBlack;
        stack.pop_back();
        continue;
      }
      const Edge e = *f.it++;
      const OpId w = boost::target(e, g);
      if (colour[w] == kWhite) {
        parent[w] = e;
        colour[w] = kGrey;
        auto [b, en] = boost::out_edges(w, g);
        stack.push_back({w, b, en});
      } else if (colour[w] == kGrey) {
        std::vector<std::tuple<OpId, OpId, int>> cycle{{boost::source(e, g), w, g[e].input_slot}};
        for (OpId v = boost::source(e, g); v != w;) {
          const Edge pe = parent[v];
          cycle.emplace_back(boost::source(pe, g), v, g[pe].input_slot);
          v = boost::source(pe, g);
        }
        std::reverse(cycle.begin(), cycle.end());
        return cycle;
      }
    }
  }
  return {};
}

}  // namespace

std::optional<GraphProblem> Graph::check() const {
  auto at_op = [](OpId id, std::string field, std::string message) {
    return GraphProblem{std::move(message), id, std::move(field), std::nullopt, std::nullopt};
  };
  auto at_edge = [](OpId from, OpId to, int slot, std::string message) {
    return GraphProblem{std::move(message), std::nullopt, "", std::tuple<OpId, OpId, int>{from, to, slot}, std::nullopt};
  };
  std::set<std::string> layer_names;
  for (std::size_t l = 0; l < layers_.size(); ++l)
    if (!layer_names.insert(layers_[l].name).second)
      return GraphProblem{"duplicate layer name " + quoted(layers_[l].name), std::nullopt, "", std::nullopt,
                          static_cast<std::int32_t>(l)};

  std::set<std::string> names;
  // The first operator to use each weight, with its sizes: a shared weight must have one shape.
  std::map<std::string, std::pair<OpId, std::vector<std::int64_t>>> weight_shapes;
  for (OpId id = 0; id < op_count(); ++id) {
    const Operator& o = g_[id];
    const std::string who = "operator " + quoted(o.name);
    if (!names.insert(o.name).second) return at_op(id, "name", "duplicate operator name " + quoted(o.name));
    if (o.layer < 0 || static_cast<std::size_t>(o.layer) >= layers_.size())
      return at_op(id, "layer", who + " names layer " + std::to_string(o.layer) + ", but the graph has " +
                                    std::to_string(layers_.size()) + " layers");
    std::set<std::string> dim_names, loop_names;
    for (const auto* list : {&o.dims, &o.extent_dims}) {
      const std::string field = list == &o.dims ? "dims/" : "extent_dims/";
      for (std::size_t i = 0; i < list->size(); ++i) {
        const Dim& d = (*list)[i];
        if (d.size < 1)
          return at_op(id, field + std::to_string(i),
                       who + ": dim " + quoted(d.name) + " has size " + std::to_string(d.size) + "; sizes must be >= 1");
        if (!dim_names.insert(d.name).second) return at_op(id, field + std::to_string(i), who + ": dim " + quoted(d.name) + " appears twice");
        if (list == &o.dims) loop_names.insert(d.name);
      }
    }
    auto check_tensor = [&](const TensorSpec& t, const std::string& field, const std::string& what) -> std::optional<GraphProblem> {
      std::set<std::string> seen;
      for (const auto& d : t.dims) {
        if (!dim_names.count(d))
          return at_op(id, field, who + ": " + what + " names dim " + quoted(d) + ", which is not among the operator's dims");
        if (!seen.insert(d).second) return at_op(id, field, who + ": " + what + " names dim " + quoted(d) + " twice");
      }
      return std::nullopt;
    };
    for (std::size_t i = 0; i < o.inputs.size(); ++i)
      if (auto e = check_tensor(o.inputs[i], "inputs/" + std::to_string(i), "input " + std::to_string(i))) return e;
    if (auto e = check_tensor(o.output, "output", "the output")) return e;
    for (std::size_t i = 0; i < o.weights.size(); ++i)
      if (auto e = check_tensor(o.weights[i].spec, "weights/" + std::to_string(i), "weight " + quoted(o.weights[i].name))) return e;
    for (auto [field, gemm] : {std::pair{"gemm_batch", &o.gemm_batch}, {"gemm_m", &o.gemm_m}, {"gemm_n", &o.gemm_n}, {"gemm_k", &o.gemm_k}})
      for (const auto& d : *gemm)
        if (!loop_names.count(d))
          return at_op(id, field, who + ": its GEMM view names dim " + quoted(d) + ", which is not among the operator's loop dims");
    for (int s : o.saved_inputs)
      if (s < 0 || static_cast<std::size_t>(s) >= o.inputs.size())
        return at_op(id, "saved_inputs", who + ": saves input slot " + std::to_string(s) + ", which does not exist");
    for (auto [field, v] : {std::pair{"flops_per_point", o.flops_per_point}, {"bwd_flops_factor", o.bwd_flops_factor},
                            {"model_flops_per_point", o.model_flops_per_point},
                            {"saved_mask_bytes_per_element", o.saved_mask_bytes_per_element}})
      if (!std::isfinite(v) || v < 0) return at_op(id, field, who + ": " + field + " must be a finite number >= 0");
    for (std::size_t i = 0; i < o.weights.size(); ++i) {
      const Weight& w = o.weights[i];
      std::vector<std::int64_t> sizes;
      double elements = 1;
      for (const auto& d : w.spec.dims) {
        sizes.push_back(o.dim_size(d));
        elements *= static_cast<double>(sizes.back());
      }
      // Parameter counts are int64; 2^62 leaves room to sum many weights.
      if (elements > 4.6e18) return at_op(id, "weights/" + std::to_string(i), who + ": weight " + quoted(w.name) + " is too large to count");
      auto [it, first] = weight_shapes.emplace(w.name, std::pair{id, sizes});
      if (!first && it->second.second != sizes) {
        const Operator& other = g_[it->second.first];
        const Weight* ow = nullptr;
        for (const auto& x : other.weights)
          if (x.name == w.name) ow = &x;
        return at_op(id, "weights/" + std::to_string(i),
                     who + ": weight " + quoted(w.name) + " has shape " + shape_string(o, w.spec) + ", but operator " +
                         quoted(other.name) + " uses it with shape " + shape_string(other, ow->spec));
      }
    }

    std::vector<int> fed(o.inputs.size(), 0);
    // Edges in a fixed order (by slot, then producer) so the problem reported does not depend on storage.
    std::vector<std::pair<int, OpId>> in;
    for (auto [it, end] = boost::in_edges(id, g_); it != end; ++it) in.emplace_back(g_[*it].input_slot, boost::source(*it, g_));
    std::sort(in.begin(), in.end());
    for (const auto& [slot, from] : in) {
      const Operator& p = g_[from];
      const std::string edge = "the tensor from " + quoted(p.name) + " to " + who;
      if (slot < 0 || static_cast<std::size_t>(slot) >= o.inputs.size())
        return at_edge(from, id, slot, "a tensor from " + quoted(p.name) + " feeds input slot " + std::to_string(slot) + " of " + who +
                                           ", which has " + std::to_string(o.inputs.size()) + " inputs");
      if (++fed[static_cast<std::size_t>(slot)] > 1)
        return at_edge(from, id, slot, who + ": input slot " + std::to_string(slot) + " is fed by more than one tensor");
      const TensorSpec& t = o.inputs[static_cast<std::size_t>(slot)];
      if (t.dims.size() != p.output.dims.size())
        return at_edge(from, id, slot, edge + " has rank " + std::to_string(p.output.dims.size()) + " at the producer but rank " +
                                           std::to_string(t.dims.size()) + " at the consumer");
      for (std::size_t k = 0; k < t.dims.size(); ++k) {
        const Dim* pd = p.find_dim(p.output.dims[k]);
        const Dim* cd = o.find_dim(t.dims[k]);
        if (pd && cd && pd->size != cd->size)
          return at_edge(from, id, slot, edge + " has size " + std::to_string(pd->size) + " in position " + std::to_string(k) +
                                             " at the producer but " + std::to_string(cd->size) + " at the consumer");
      }
      if (t.dtype != p.output.dtype)
        return at_edge(from, id, slot, edge + " is " + std::string(to_string(p.output.dtype)) + " at the producer but " +
                                           std::string(to_string(t.dtype)) + " at the consumer");
    }
    for (std::size_t s = 0; s < fed.size(); ++s)
      if (fed[s] == 0)
        return at_op(id, "inputs/" + std::to_string(s), who + ": input slot " + std::to_string(s) + " is fed by no tensor (a dangling input)");
  }
  if (const auto cycle = find_cycle(g_); !cycle.empty()) {
    std::string path = quoted(g_[std::get<0>(cycle.front())].name);
    for (const auto& [from, to, slot] : cycle) path += " -> " + quoted(g_[to].name);
    const auto& [from, to, slot] = cycle.back();
    return at_edge(from, to, slot, "the graph has a cycle: " + path + "; operators must form a directed acyclic graph");
  }
  return std::nullopt;
}

std::optional<std::string> Graph::validate() const {
  if (auto problem = check()) return problem->message;
  return std::nullopt;
}

std::int64_t Graph::param_count() const {
  std::set<std::string> seen;
  std::int64_t n = 0;
  for (OpId id = 0; id < op_count(); ++id) {
    const Operator& o = g_[id];
    for (const auto& w : o.weights) {
      if (!seen.insert(w.name).second) continue;
      std::int64_t e = 1;
      for (const auto& d : w.spec.dims) e *= o.dim_size(d);
      n += e;
    }
  }
  return n;
}

std::int64_t Graph::layer_param_count(std::int32_t layer) const {
  // A weight shared across layers (a tied embedding) belongs to the first layer that uses it.
  std::map<std::string, std::int32_t> owner;
  for (OpId id = 0; id < op_count(); ++id)
    for (const auto& w : g_[id].weights) owner.emplace(w.name, g_[id].layer);
  std::set<std::string> seen;
  std::int64_t n = 0;
  for (OpId id = 0; id < op_count(); ++id) {
    const Operator& o = g_[id];
    if (o.layer != layer) continue;
    for (const auto& w : o.weights) {
      if (owner.at(w.name) != layer || !seen.insert(w.name).second) continue;
      std::int64_t e = 1;
      for (const auto& d : w.spec.dims) e *= o.dim_size(d);
      n += e;
    }
  }
  return n;
}

double Graph::fwd_flops() const {
  double f = 0;
  for (OpId id = 0; id < op_count(); ++id) f += g_[id].fwd_flops();
  return f;
}

double Graph::bwd_flops() const {
  double f = 0;
  for (OpId id = 0; id < op_count(); ++id) f += g_[id].bwd_flops();
  return f;
}

double Graph::model_flops() const {
  double f = 0;
  for (OpId id = 0; id < op_count(); ++id) f += g_[id].model_flops();
  return f;
}

double Graph::layer_fwd_flops(std::int32_t layer) const {
  double f = 0;
  for (OpId id = 0; id < op_count(); ++id)
    if (g_[id].layer == layer) f += g_[id].fwd_flops();
  return f;
}

double Graph::layer_bwd_flops(std::int32_t layer) const {
  double f = 0;
  for (OpId id = 0; id < op_count(); ++id)
    if (g_[id].layer == layer) f += g_[id].bwd_flops();
  return f;
}

std::size_t Graph::layer_op_count(std::int32_t layer) const {
  std::size_t n = 0;
  for (OpId id = 0; id < op_count(); ++id)
    if (g_[id].layer == layer) ++n;
  return n;
}

namespace {
// Saved bytes of the operators accepted by `in_scope`, each saved tensor (identified by its
// producer) counted once.
template <class Pred>
double saved_bytes_where(const Graph& g, Pred in_scope) {
  std::set<OpId> saved_tensors;
  double bytes = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Operator& o = g.op(id);
    if (!in_scope(o)) continue;
    const auto prods = g.producers(id);
    for (int slot : o.saved_inputs) {
      const OpId p = prods[static_cast<std::size_t>(slot)];
      if (saved_tensors.insert(p).second) bytes += g.op(p).fwd_bytes_written();
    }
    if (o.saved_output && saved_tensors.insert(id).second) bytes += o.fwd_bytes_written();
    bytes += o.saved_mask_bytes_per_element * o.elements(o.output);
  }
  return bytes;
}
}  // namespace

double Graph::saved_activation_bytes() const {
  return saved_bytes_where(*this, [](const Operator& o) { return o.kind != OpKind::Input; });
}

double Graph::layer_saved_activation_bytes(std::int32_t layer) const {
  return saved_bytes_where(*this, [layer](const Operator& o) { return o.layer == layer && o.kind != OpKind::Input; });
}

bool Graph::operator==(const Graph& other) const {
  if (name_ != other.name_ || batch_ != other.batch_ || transformer_ != other.transformer_ || annotations_ != other.annotations_ || layers_ != other.layers_ ||
      op_count() != other.op_count())
    return false;
  for (OpId id = 0; id < op_count(); ++id)
    if (!(g_[id] == other.g_[id])) return false;
  return edges() == other.edges();
}

}  // namespace parasim::models
