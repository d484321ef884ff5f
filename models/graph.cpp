#include "models/graph.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include <boost/graph/topological_sort.hpp>

#include "common/error.hpp"

namespace parasim::models {

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

std::optional<std::string> Graph::validate() const {
  std::set<std::string> names;
  for (OpId id = 0; id < op_count(); ++id) {
    const Operator& o = g_[id];
    const std::string who = "operator \"" + o.name + "\"";
    if (!names.insert(o.name).second) return "duplicate operator name \"" + o.name + "\"";
    if (o.layer < 0 || static_cast<std::size_t>(o.layer) >= layers_.size())
      return who + " names layer " + std::to_string(o.layer) + ", but the graph has " + std::to_string(layers_.size()) + " layers";
    std::set<std::string> dim_names;
    for (const auto& d : o.dims) {
      if (d.size < 1) return who + ": dim \"" + d.name + "\" has size " + std::to_string(d.size) + "; sizes must be >= 1";
      if (!dim_names.insert(d.name).second) return who + ": dim \"" + d.name + "\" appears twice";
    }
    auto check_tensor = [&](const TensorSpec& t, const std::string& what) -> std::optional<std::string> {
      for (const auto& d : t.dims)
        if (!dim_names.count(d)) return who + ": " + what + " names dim \"" + d + "\", which is not among the operator's dims";
      return std::nullopt;
    };
    for (std::size_t i = 0; i < o.inputs.size(); ++i)
      if (auto e = check_tensor(o.inputs[i], "input " + std::to_string(i))) return e;
    if (auto e = check_tensor(o.output, "the output")) return e;
    for (const auto& w : o.weights)
      if (auto e = check_tensor(w.spec, "weight \"" + w.name + "\"")) return e;
    for (const auto* gemm : {&o.gemm_batch, &o.gemm_m, &o.gemm_n, &o.gemm_k})
      for (const auto& d : *gemm)
        if (!dim_names.count(d)) return who + ": its GEMM view names dim \"" + d + "\", which is not among the operator's dims";
    for (int s : o.saved_inputs)
      if (s < 0 || static_cast<std::size_t>(s) >= o.inputs.size()) return who + ": saves input slot " + std::to_string(s) + ", which does not exist";

    std::vector<int> fed(o.inputs.size(), 0);
    for (auto [it, end] = boost::in_edges(id, g_); it != end; ++it) {
      const int slot = g_[*it].input_slot;
      const Operator& p = g_[boost::source(*it, g_)];
      if (slot < 0 || static_cast<std::size_t>(slot) >= o.inputs.size())
        return "a tensor from \"" + p.name + "\" feeds input slot " + std::to_string(slot) + " of " + who + ", which has " +
               std::to_string(o.inputs.size()) + " inputs";
      ++fed[static_cast<std::size_t>(slot)];
      const TensorSpec& in = o.inputs[static_cast<std::size_t>(slot)];
      if (in.dims.size() != p.output.dims.size())
        return "the tensor from \"" + p.name + "\" to " + who + " has rank " + std::to_string(p.output.dims.size()) +
               " at the producer but rank " + std::to_string(in.dims.size()) + " at the consumer";
      for (std::size_t k = 0; k < in.dims.size(); ++k) {
        const Dim* pd = p.find_dim(p.output.dims[k]);
        const Dim* cd = o.find_dim(in.dims[k]);
        if (pd && cd && pd->size != cd->size)
          return "the tensor from \"" + p.name + "\" to " + who + " has size " + std::to_string(pd->size) + " in position " +
                 std::to_string(k) + " at the producer but " + std::to_string(cd->size) + " at the consumer";
      }
    }
    for (std::size_t s = 0; s < fed.size(); ++s) {
      if (fed[s] == 0) return who + ": input slot " + std::to_string(s) + " is fed by no tensor (a dangling input)";
      if (fed[s] > 1) return who + ": input slot " + std::to_string(s) + " is fed by " + std::to_string(fed[s]) + " tensors";
    }
  }
  try {
    (void)topological_order();
  } catch (const boost::not_a_dag&) {
    return std::string("the graph has a cycle; operators must form a directed acyclic graph");
  }
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
  if (name_ != other.name_ || batch_ != other.batch_ || transformer_ != other.transformer_ || layers_ != other.layers_ ||
      op_count() != other.op_count())
    return false;
  for (OpId id = 0; id < op_count(); ++id)
    if (!(g_[id] == other.g_[id])) return false;
  return edges() == other.edges();
}

}  // namespace parasim::models
