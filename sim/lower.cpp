#include "sim/lower.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "sim/cost_model.hpp"
#include "sim/replicas.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/memory.hpp"
#include "strategies/schedule.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::sim {
namespace {

using models::Graph;
using models::OpId;
using models::Operator;
using strategies::DeviceMesh;
using strategies::OpSharding;
using strategies::Plan;
using AxisSet = std::vector<int>;  // sorted mesh-axis indices

constexpr TaskId kNoTask = UINT32_MAX;

// ---- layouts and resharding -------------------------------------------------------------------

/// Where a tensor lives: for each of its dims the axes splitting it, and the axes over which it is a
/// partial sum (still to be reduced).
struct Layout {
  std::vector<std::vector<int>> pos;
  AxisSet partial;
  auto operator<=>(const Layout&) const = default;
};

bool contains(const std::vector<int>& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); }
bool in_dims(const std::vector<std::string>& dims, const std::string& d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); }

Layout tensor_layout(const Operator& op, const OpSharding& sh, const std::vector<std::string>& dims, bool partial_over_missing) {
  Layout l;
  for (const auto& d : dims) l.pos.push_back(sh.axes_of(d));
  if (partial_over_missing) {
    for (const auto& ds : sh.dims)
      if (!in_dims(dims, ds.dim))
        for (int a : ds.axes)
          if (!contains(l.partial, a)) l.partial.push_back(a);
    std::sort(l.partial.begin(), l.partial.end());
  }
  (void)op;
  return l;
}
/// The output of `op`: a partial sum over the axes that split its contraction dims.
Layout output_layout(const Operator& op, const OpSharding& sh) { return tensor_layout(op, sh, op.output.dims, true); }
Layout input_layout(const Operator& op, const OpSharding& sh, std::size_t slot) {
  return tensor_layout(op, sh, op.inputs[slot].dims, false);
}
/// The gradient `op` produces for its input `slot`: a partial sum over the axes splitting dims the
/// input does not have (a column-parallel layer's input gradient sums over the split output dim).
Layout input_grad_layout(const Operator& op, const OpSharding& sh, std::size_t slot) {
  return tensor_layout(op, sh, op.inputs[slot].dims, true);
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

struct Need {
  CollectiveKind kind;
  int axis;
  double bytes;  // per the size convention of collectives.hpp
};

/// The collectives that turn a tensor in layout `from` into layout `to`, one mesh axis at a time.
/// `to_bytes`: the tensor's local size in `to`; `from_bytes`: in `from`.
std::vector<Need> reshard(const Layout& from, const Layout& to, double from_bytes, double to_bytes, const DeviceMesh& mesh) {
  std::vector<Need> needs;
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

// ---- programs ------------------------------------------------------------------------------------

enum class ItemKind : std::uint8_t { Compute, Collective, Send };
constexpr std::uint32_t kNoCollective = UINT32_MAX;

/// A collective's group: all its members price it, the simulated ones wait for it.
struct Group {
  std::uint32_t id = 0;                                  ///< the whole group (cost)
  std::uint32_t occupies = CollectiveSpec::kWholeGroup;  ///< the simulated members, when fewer
  std::vector<std::int64_t> members;                     ///< the simulated members
};

struct GradReady {
  AxisSet axes;
  double bytes;
};

struct Item {
  ItemKind kind = ItemKind::Compute;
  bool chained = true;  ///< depends on the previous chained item and becomes the new head of the chain
  Category category = Category::Forward;
  std::uint32_t label = 0;
  std::vector<Picoseconds> duration;  ///< compute: per device class
  CollectiveKind collective = CollectiveKind::AllReduce;
  AxisSet axes;
  double bytes = 0;
  std::int64_t peer_chunk = -1;  ///< send: the chunk receiving
  std::vector<std::uint32_t> extra_deps;  ///< earlier items of the same program
  std::vector<GradReady> grads;           ///< weight gradients complete once this item finishes
  /// Filled on first use (an item always runs on the same stage): its groups and, per group, the
  /// interned collective — they repeat for every micro-batch.
  mutable const std::vector<Group>* groups = nullptr;
  mutable std::vector<std::uint32_t> collective_ids;
  /// Its groups ordered by the block they lie in (CSR over the stage's blocks; one run of every
  /// group when the item's groups span blocks).
  mutable std::vector<std::uint32_t> group_order;
  mutable std::vector<std::size_t> group_block_begin;
  /// A send's collective per position in the stage (kNoCollective until first made).
  mutable std::vector<std::uint32_t> send_collective_ids;
};

struct Program {
  std::vector<Item> items;
};

struct Context {
  const Graph& g;
  const Plan& plan;
  const Cluster& cluster;
  TaskGraphBuilder& b;
  std::vector<std::int32_t> chunk_of_op;
  std::vector<OpId> topo;
  std::vector<std::vector<double>> fwd_s, bwd_s;  ///< [class][op]
  std::size_t classes = 1;
  std::vector<std::vector<std::pair<OpId, int>>> consumers;
  std::vector<std::vector<OpId>> producers;
};

double elem_bytes(models::DType t) { return static_cast<double>(models::bytes_of(t)); }

double local_out_bytes(const Context& cx, OpId p) {
  const auto& o = cx.g.op(p);
  return strategies::local_elements(cx.plan.mesh, cx.plan.sharding[p], o, o.output) * elem_bytes(o.output.dtype);
}
double local_in_bytes(const Context& cx, OpId op, std::size_t slot) {
  const auto& o = cx.g.op(op);
  return strategies::local_elements(cx.plan.mesh, cx.plan.sharding[op], o, o.inputs[slot]) * elem_bytes(o.inputs[slot].dtype);
}

Category category_of_axis(const DeviceMesh& mesh, int axis) {
  const auto& name = mesh.axes[static_cast<std::size_t>(axis)].name;
  if (name == "ep") return Category::ExpertComm;
  if (name == "dp") return Category::GradientComm;
  return Category::TensorComm;
}

std::uint8_t stream_of_axes(const DeviceMesh& mesh, const AxisSet& axes) {
  bool dp = false, ep = false;
  for (int a : axes) {
    const auto& name = mesh.axes[static_cast<std::size_t>(a)].name;
    dp |= name == "dp";
    ep |= name == "ep";
  }
  if (dp) return kDataStream;
  if (ep) return kExpertStream;
  return kTensorStream;
}

std::string_view short_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all-reduce";
    case CollectiveKind::ReduceScatter: return "reduce-scatter";
    case CollectiveKind::AllGather: return "all-gather";
    case CollectiveKind::AllToAll: return "all-to-all";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "send";
  }
  return "collective";
}

/// Accumulates operators into compute segments and emits collectives between them.
class ProgramBuilder {
 public:
  ProgramBuilder(Context& cx, Program& prog) : cx_(cx), prog_(prog), seconds_(cx.classes, 0.0) {}

  void compute(OpId op, const std::vector<double>& seconds_per_class, Category category, const std::string& prefix) {
    if (open_ && category != category_) flush();
    if (!open_) {
      open_ = true;
      category_ = category;
      label_ = prefix + cx_.g.op(op).name;
      first_layer_ = cx_.g.op(op).layer;
    }
    for (std::size_t c = 0; c < cx_.classes; ++c) seconds_[c] += seconds_per_class[c];
  }
  /// Extra dependency of the current (or next) compute segment on an earlier item.
  void depend_on(std::uint32_t item) { pending_extra_.push_back(item); }
  /// Extra dependency of item `item`, already emitted, on an earlier item.
  void add_dependency(std::uint32_t item, std::uint32_t on) { prog_.items[item].extra_deps.push_back(on); }
  [[nodiscard]] std::size_t item_count() const { return prog_.items.size(); }
  void grads_ready(const AxisSet& axes, double bytes) { pending_grads_.push_back({axes, bytes}); }

  void flush() {
    if (!open_) return;
    Item it;
    it.kind = ItemKind::Compute;
    it.category = category_;
    it.label = cx_.b.label(label_);
    for (double s : seconds_) it.duration.push_back(Picoseconds::from_seconds(s));
    it.extra_deps = std::move(pending_extra_);
    it.grads = std::move(pending_grads_);
    prog_.items.push_back(std::move(it));
    pending_extra_.clear();
    pending_grads_.clear();
    std::fill(seconds_.begin(), seconds_.end(), 0.0);
    open_ = false;
  }

  std::uint32_t collective(CollectiveKind kind, AxisSet axes, double bytes, Category category, const std::string& what, bool chained = true) {
    if (chained) flush();
    Item it;
    it.kind = ItemKind::Collective;
    it.chained = chained;
    it.collective = kind;
    it.axes = std::move(axes);
    it.bytes = bytes;
    it.category = category;
    std::string axes_name;
    for (int a : it.axes) axes_name += (axes_name.empty() ? "" : "+") + cx_.plan.mesh.axes[static_cast<std::size_t>(a)].name;
    it.label = cx_.b.label(std::string(short_name(kind)) + " " + axes_name + " " + what);
    prog_.items.push_back(std::move(it));
    return static_cast<std::uint32_t>(prog_.items.size() - 1);
  }

  void send(std::int64_t peer_chunk, double bytes, const std::string& what) {
    flush();
    Item it;
    it.kind = ItemKind::Send;
    it.chained = false;
    it.peer_chunk = peer_chunk;
    it.bytes = bytes;
    it.category = Category::PipelineComm;
    it.label = cx_.b.label("send " + what);
    prog_.items.push_back(std::move(it));
  }

 private:
  Context& cx_;
  Program& prog_;
  std::vector<double> seconds_;
  bool open_ = false;
  Category category_ = Category::Forward;
  std::string label_;
  std::int32_t first_layer_ = 0;
  std::vector<std::uint32_t> pending_extra_;
  std::vector<GradReady> pending_grads_;
};

/// The axes over which a weight's gradient is a partial sum on each device. A weight all of whose dims
/// are output dims (a bias, a norm's scale) is applied after any contraction, so its gradient sums
/// over the output dims it lacks; any other weight's gradient sums over every iteration dim it lacks
/// (a linear layer's weight gradient sums over the tokens).
AxisSet weight_grad_partial_axes(const Operator& o, const OpSharding& sh, const models::Weight& w) {
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

bool is_attention_core(const Operator& o) {
  if (o.kind == models::OpKind::Matmul || o.kind == models::OpKind::Softmax) return true;
  return o.kind == models::OpKind::Dropout && o.find_dim("q") != nullptr;
}

bool recomputable_layer(const Graph& g, std::int32_t layer) {
  if (!g.transformer()) return true;
  return layer >= 1 && layer <= g.transformer()->layers;  // Megatron recomputes the transformer layers
}

std::vector<double> seconds_of(const std::vector<std::vector<double>>& per_class, OpId op) {
  std::vector<double> s;
  for (const auto& c : per_class) s.push_back(c[op]);
  return s;
}

// Tensor-parallel axis over which a boundary tensor is replicated (scatter/gather applies), or -1.
int scatter_gather_axis(const Context& cx, const Layout& l) {
  const int tp = cx.plan.tp_axis;
  if (tp < 0 || cx.plan.mesh.axes[static_cast<std::size_t>(tp)].size <= 1) return -1;
  return replicated_over(l, tp) ? tp : -1;
}

/// Forward items of a set of operators (in topological order) of one chunk. `materialized` dedupes
/// resharded inputs within a unit.
/// `enter_layer`, when set, is called as each layer begins (ZeRO-3's gathers, WeightGathers::enter);
/// otherwise forward segments may run on into the next layer (only backward needs a task boundary
/// per layer, so that gradient buckets start as layers finish).
void emit_forward(Context& cx, ProgramBuilder& pb, const std::vector<OpId>& ops, std::int32_t chunk, Category category,
                  const std::string& prefix, std::set<std::pair<OpId, Layout>>& materialized,
                  const std::function<void(std::int32_t)>& enter_layer = {}) {
  const auto& mesh = cx.plan.mesh;
  std::int32_t current_layer = -1;
  for (OpId op : ops) {
    const Operator& o = cx.g.op(op);
    if (o.kind == models::OpKind::Input) continue;
    if (o.layer != current_layer) {
      current_layer = o.layer;
      if (enter_layer) enter_layer(o.layer);
    }
    for (std::size_t slot = 0; slot < o.inputs.size(); ++slot) {
      const OpId p = cx.producers[op][slot];
      if (cx.g.op(p).kind == models::OpKind::Input) continue;
      if (o.routing) {
        if (slot == 0 && cx.plan.ep_axis >= 0 && cx.plan.ep() > 1 && materialized.insert({p, Layout{}}).second)
          pb.collective(CollectiveKind::AllToAll, {cx.plan.ep_axis}, local_in_bytes(cx, op, slot), Category::ExpertComm, o.name);
        continue;
      }
      Layout from = output_layout(cx.g.op(p), cx.plan.sharding[p]);
      if (cx.chunk_of_op[p] != chunk) from = without_partial(from);  // the sender reduced it
      const Layout to = input_layout(o, cx.plan.sharding[op], slot);
      if (!materialized.insert({p, to}).second) continue;
      for (const Need& n : reshard(from, to, local_out_bytes(cx, p), local_in_bytes(cx, op, slot), mesh))
        pb.collective(n.kind, {n.axis}, n.bytes, category_of_axis(mesh, n.axis), o.name);
    }
    pb.compute(op, seconds_of(cx.fwd_s, op), category, prefix);
  }
  pb.flush();
}

struct ChunkPrograms {
  Program fwd, bwd;
};

/// Layers ZeRO-3 gathers ahead of the one computing (see strategies/memory.hpp, which budgets them).
constexpr auto kPrefetchLayers = static_cast<std::size_t>(strategies::kZero3PrefetchLayers);

/// ZeRO-3's weight all-gathers for one program (a chunk's forward or its backward): each layer's
/// weights are gathered before the layer runs, in the order the program uses the layers (the
/// backward's is the reverse of the forward's), every micro-batch (Rajbhandari et al. 2020, §5.3).
/// The first kPrefetchLayers + 1 gathers are issued when the program starts; as layer i begins, the
/// gather of layer i + kPrefetchLayers is issued to start once layer i − 1 has finished and freed its
/// gathered weights. So no more layers are gathered at once than the memory model counts.
class WeightGathers {
 public:
  /// `order`: the layers holding weights, in the order the program uses them; `bytes[k]`: layer
  /// order[k]'s gathered bytes per device; `names[k]`: its name.
  WeightGathers(AxisSet axes, std::vector<std::int32_t> order, std::vector<double> bytes, std::vector<std::string> names)
      : axes_(std::move(axes)), order_(std::move(order)), bytes_(std::move(bytes)), names_(std::move(names)) {}

  /// The gathers issued as the program starts.
  void start(ProgramBuilder& pb) {
    for (std::size_t k = 0; k <= kPrefetchLayers && k < order_.size(); ++k) issue(pb, k, std::nullopt);
  }

  /// Layer `layer` begins: the previous layer's work ends here (so the next prefetch can wait for
  /// it), the gather kPrefetchLayers ahead is issued, and the layer's work waits for its own gather.
  void enter(ProgramBuilder& pb, std::int32_t layer) {
    const auto it = std::find(order_.begin(), order_.end(), layer);
    if (it == order_.end()) return;  // a layer without weights (or no ZeRO-3): its work may join the previous layer's
    pb.flush();
    const auto k = static_cast<std::size_t>(it - order_.begin());
    if (k >= 1 && k + kPrefetchLayers < order_.size()) issue(pb, k + kPrefetchLayers, last_work_item(pb));
    pb.depend_on(gather_item_.at(layer));
  }

 private:
  void issue(ProgramBuilder& pb, std::size_t k, std::optional<std::uint32_t> after) {
    const std::uint32_t item = pb.collective(CollectiveKind::AllGather, axes_, bytes_[k], Category::GradientComm, names_[k] + " weights", false);
    if (after) pb.add_dependency(item, *after);
    gather_item_[order_[k]] = item;
    gathers_.insert(item);
  }
  /// The last item the program emitted other than a gather: the end of the previous layer.
  std::optional<std::uint32_t> last_work_item(const ProgramBuilder& pb) const {
    for (std::size_t i = pb.item_count(); i-- > 0;)
      if (!gathers_.count(static_cast<std::uint32_t>(i))) return static_cast<std::uint32_t>(i);
    return std::nullopt;
  }

  AxisSet axes_;
  std::vector<std::int32_t> order_;
  std::vector<double> bytes_;
  std::vector<std::string> names_;
  std::map<std::int32_t, std::uint32_t> gather_item_;
  std::set<std::uint32_t> gathers_;
};

ChunkPrograms build_chunk(Context& cx, std::int32_t chunk) {
  ChunkPrograms out;
  const auto& mesh = cx.plan.mesh;
  std::vector<OpId> ops;
  for (OpId op : cx.topo)
    if (cx.chunk_of_op[op] == chunk) ops.push_back(op);

  // Boundary tensors: produced in another chunk and consumed here (incoming), or the reverse (outgoing).
  std::vector<OpId> incoming;
  std::map<std::int32_t, std::vector<OpId>> outgoing;  // consumer chunk → producers
  for (OpId op : ops) {
    for (OpId p : cx.producers[op])
      if (cx.g.op(p).kind != models::OpKind::Input && cx.chunk_of_op[p] != chunk &&
          std::find(incoming.begin(), incoming.end(), p) == incoming.end())
        incoming.push_back(p);
    for (auto [consumer, slot] : cx.consumers[op]) {
      (void)slot;
      const auto cc = cx.chunk_of_op[consumer];
      if (cc != chunk && std::find(outgoing[cc].begin(), outgoing[cc].end(), op) == outgoing[cc].end()) outgoing[cc].push_back(op);
    }
  }

  // Layers of this chunk, in order, and their ZeRO-3 weight bytes.
  std::vector<std::int32_t> layers;
  for (OpId op : ops)
    if (layers.empty() || layers.back() != cx.g.op(op).layer) layers.push_back(cx.g.op(op).layer);
  const bool zero3 = cx.plan.zero >= 3 && cx.plan.dp() > 1;
  AxisSet data_axes;
  for (int a : {cx.plan.dp_axis, cx.plan.ep_axis})
    if (a >= 0 && mesh.axes[static_cast<std::size_t>(a)].size > 1) data_axes.push_back(a);
  std::sort(data_axes.begin(), data_axes.end());
  const double weight_bytes = elem_bytes(cx.plan.precision == models::DType::F32 ? models::DType::F32 : models::DType::F16);
  auto layer_weight_bytes = [&](std::int32_t layer) {
    double bytes = 0;
    std::set<std::string> seen;
    for (OpId op : ops) {
      const auto& o = cx.g.op(op);
      if (o.layer != layer) continue;
      for (const auto& w : o.weights)
        if (seen.insert(w.name).second)
          bytes += strategies::local_elements(mesh, cx.plan.sharding[op], o, w.spec) * weight_bytes;
    }
    return bytes;
  };
  // ZeRO-3's gathers for a program using the chunk's layers in `order` (none without ZeRO-3).
  auto weight_gathers = [&](const std::vector<std::int32_t>& order) {
    std::vector<std::int32_t> held;
    std::vector<double> bytes;
    std::vector<std::string> names;
    if (zero3 && !data_axes.empty()) {
      for (std::int32_t l : order) {
        const double b = layer_weight_bytes(l);
        if (b <= 0) continue;
        held.push_back(l);
        bytes.push_back(b);
        names.push_back(cx.g.layers()[static_cast<std::size_t>(l)].name);
      }
    }
    return WeightGathers(data_axes, std::move(held), std::move(bytes), std::move(names));
  };

  // ---- forward ----
  {
    ProgramBuilder pb(cx, out.fwd);
    WeightGathers gathers = weight_gathers(layers);
    gathers.start(pb);
    for (OpId p : incoming) {
      const int sg = scatter_gather_axis(cx, without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p])));
      if (sg >= 0) pb.collective(CollectiveKind::AllGather, {sg}, local_out_bytes(cx, p), Category::PipelineComm, "received " + cx.g.op(p).name);
    }
    std::set<std::pair<OpId, Layout>> materialized;
    emit_forward(cx, pb, ops, chunk, Category::Forward, "F ", materialized, [&](std::int32_t layer) { gathers.enter(pb, layer); });
    for (const auto& [cc, producers] : outgoing) {
      for (OpId p : producers) {
        const Layout l = output_layout(cx.g.op(p), cx.plan.sharding[p]);
        for (int a : l.partial) pb.collective(CollectiveKind::AllReduce, {a}, local_out_bytes(cx, p), category_of_axis(mesh, a), cx.g.op(p).name);
        const int sg = scatter_gather_axis(cx, without_partial(l));
        const double parts = sg >= 0 ? static_cast<double>(mesh.axes[static_cast<std::size_t>(sg)].size) : 1.0;
        pb.send(cc, local_out_bytes(cx, p) / parts, cx.g.op(p).name);
      }
    }
  }

  // ---- backward (with recomputation, layer by layer from the last) ----
  {
    ProgramBuilder pb(cx, out.bwd);
    WeightGathers gathers = weight_gathers(std::vector<std::int32_t>(layers.rbegin(), layers.rend()));
    gathers.start(pb);
    for (const auto& [cc, producers] : outgoing) {
      (void)cc;
      for (OpId p : producers) {
        const int sg = scatter_gather_axis(cx, without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p])));
        if (sg >= 0)
          pb.collective(CollectiveKind::AllGather, {sg}, local_out_bytes(cx, p), Category::PipelineComm, "received gradient of " + cx.g.op(p).name);
      }
    }
    std::set<std::string> seen_weights;
    for (auto layer_it = layers.rbegin(); layer_it != layers.rend(); ++layer_it) {
      const std::int32_t layer = *layer_it;
      std::vector<OpId> layer_ops;
      for (OpId op : ops)
        if (cx.g.op(op).layer == layer) layer_ops.push_back(op);
      gathers.enter(pb, layer);
      if (cx.plan.recompute == strategies::Recompute::Full && recomputable_layer(cx.g, layer)) {
        std::set<std::pair<OpId, Layout>> materialized;
        emit_forward(cx, pb, layer_ops, chunk, Category::Recompute, "R ", materialized, {});
      }
      if (cx.plan.recompute == strategies::Recompute::Selective) {
        // Selective recompute (Korthikanti et al. 2022) recomputes the attention core (scores,
        // softmax, dropout, context) before its backward; it needs no communication.
        for (OpId op : layer_ops)
          if (is_attention_core(cx.g.op(op))) pb.compute(op, seconds_of(cx.fwd_s, op), Category::Recompute, "R ");
        pb.flush();
      }
      for (auto it = layer_ops.rbegin(); it != layer_ops.rend(); ++it) {
        const OpId op = *it;
        const Operator& o = cx.g.op(op);
        if (o.kind == models::OpKind::Input) continue;
        // Bring the gradient of this operator's output into its output layout: one reshard per distinct
        // layout the consumers in this chunk produce it in (their contributions are summed locally).
        const Layout to = without_partial(output_layout(o, cx.plan.sharding[op]));
        std::set<Layout> done;
        for (auto [consumer, slot] : cx.consumers[op]) {
          if (cx.chunk_of_op[consumer] != chunk) continue;
          const Operator& q = cx.g.op(consumer);
          if (q.routing) {
            if (slot == 0 && cx.plan.ep_axis >= 0 && cx.plan.ep() > 1 && done.insert(Layout{}).second)
              pb.collective(CollectiveKind::AllToAll, {cx.plan.ep_axis}, local_in_bytes(cx, consumer, static_cast<std::size_t>(slot)),
                            Category::ExpertComm, "gradient of " + o.name);
            continue;
          }
          const Layout from = input_grad_layout(q, cx.plan.sharding[consumer], static_cast<std::size_t>(slot));
          if (!done.insert(from).second) continue;
          for (const Need& n : reshard(from, to, local_in_bytes(cx, consumer, static_cast<std::size_t>(slot)), local_out_bytes(cx, op), mesh))
            pb.collective(n.kind, {n.axis}, n.bytes, category_of_axis(mesh, n.axis), "gradient of " + o.name);
        }
        pb.compute(op, seconds_of(cx.bwd_s, op), Category::Backward, "B ");
        // Weight gradients that are partial sums over some mesh axes must be reduced over them.
        const auto& sh = cx.plan.sharding[op];
        for (const auto& w : o.weights) {
          if (!seen_weights.insert(w.name).second) continue;
          const AxisSet axes = weight_grad_partial_axes(o, sh, w);
          if (axes.empty()) continue;
          pb.grads_ready(axes, strategies::local_elements(mesh, sh, o, w.spec) * weight_bytes);
        }
      }
      pb.flush();  // one backward task per layer at least, so gradient buckets can start as layers finish
    }
    pb.flush();
    // Gradients of tensors that came from earlier chunks go back to them.
    for (OpId p : incoming) {
      const Layout to = without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p]));
      std::set<Layout> done;
      for (auto [consumer, slot] : cx.consumers[p]) {
        if (cx.chunk_of_op[consumer] != chunk) continue;
        const Layout from = input_grad_layout(cx.g.op(consumer), cx.plan.sharding[consumer], static_cast<std::size_t>(slot));
        if (!done.insert(from).second) continue;
        for (const Need& n : reshard(from, to, local_in_bytes(cx, consumer, static_cast<std::size_t>(slot)), local_out_bytes(cx, p), mesh))
          pb.collective(n.kind, {n.axis}, n.bytes, category_of_axis(mesh, n.axis), "gradient of " + cx.g.op(p).name);
      }
      const int sg = scatter_gather_axis(cx, to);
      const double parts = sg >= 0 ? static_cast<double>(mesh.axes[static_cast<std::size_t>(sg)].size) : 1.0;
      pb.send(cx.chunk_of_op[p], local_out_bytes(cx, p) / parts, "gradient of " + cx.g.op(p).name);
    }
  }
  return out;
}

/// A unit is one pass (forward or backward) of one micro-batch j through one chunk c on its stage's
/// devices; of m micro-batches and C chunks, this numbers it among all 2·m·C units.
std::uint32_t unit_index(bool forward, std::int64_t j, std::int64_t c, std::int64_t m, std::int64_t C) {
  return static_cast<std::uint32_t>(((forward ? 0 : m) + j) * C + c);
}

/// The order in which the lowering makes units (one pass, forward or backward, of one micro-batch
/// through one chunk): each stage's units in its schedule's order (strategies::pipeline_order),
/// stages taken in turn, a stage's next unit made as soon as the units sending to it are made — a
/// list schedule of the pipeline, which exists because every schedule is deadlock-free. So every
/// stage's issue order follows the order the units are made in, and every send precedes its receiver.
std::vector<strategies::PipelineStep> unit_order(const std::vector<ChunkPrograms>& programs, strategies::Schedule schedule, std::int64_t pp,
                                                 std::int64_t v, std::int64_t m) {
  const auto C = static_cast<std::int64_t>(programs.size());
  // senders[direction][c]: the chunks whose forward (0) or backward (1) program sends to chunk c.
  std::array<std::vector<std::vector<std::int64_t>>, 2> senders;
  for (std::size_t dir = 0; dir < 2; ++dir) {
    senders[dir].resize(static_cast<std::size_t>(C));
    for (std::int64_t c = 0; c < C; ++c) {
      const Program& prog = dir == 0 ? programs[static_cast<std::size_t>(c)].fwd : programs[static_cast<std::size_t>(c)].bwd;
      for (const Item& it : prog.items) {
        if (it.kind != ItemKind::Send) continue;
        auto& to = senders[dir][static_cast<std::size_t>(it.peer_chunk)];
        if (std::find(to.begin(), to.end(), c) == to.end()) to.push_back(c);
      }
    }
  }
  std::vector<std::vector<strategies::PipelineStep>> orders;
  for (std::int64_t stage = 0; stage < pp; ++stage) orders.push_back(strategies::pipeline_order(schedule, pp, v, m, stage));
  auto key = [&](bool forward, std::int64_t j, std::int64_t c) { return unit_index(forward, j, c, m, C); };
  const auto units = static_cast<std::size_t>(2 * m * C);
  std::vector<char> made(units, 0);
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<strategies::PipelineStep> out;
  out.reserve(units);
  while (out.size() < units) {
    bool progressed = false;
    for (std::size_t stage = 0; stage < orders.size(); ++stage) {
      for (; next[stage] < orders[stage].size(); ++next[stage]) {
        const strategies::PipelineStep& u = orders[stage][next[stage]];
        const auto& from = senders[u.forward ? 0 : 1][static_cast<std::size_t>(u.chunk)];
        if (!std::all_of(from.begin(), from.end(), [&](std::int64_t c) { return made[key(u.forward, u.micro_batch, c)] != 0; })) break;
        made[key(u.forward, u.micro_batch, u.chunk)] = 1;
        out.push_back(u);
        progressed = true;
      }
    }
    PARASIM_CHECK(progressed, "the pipeline schedule deadlocks: no stage can make its next pass");
  }
  return out;
}

}  // namespace

LoweredStep lower(const Graph& g, const Plan& plan, const Cluster& cluster, const Profile& profile, const LowerOptions& options) {
  const DeviceMesh& mesh = plan.mesh;
  const std::int64_t devices = mesh.device_count();
  PARASIM_CHECK(devices == cluster.device_count(), "the plan's mesh must cover the cluster's devices");
  PARASIM_CHECK(plan.sharding.size() == g.op_count(), "one sharding per operator");

  TaskGraphBuilder b(devices, {"compute", "comm.tp", "comm.dp", "comm.ep", "p2p"});
  Context cx{g, plan, cluster, b, {}, g.topological_order(), {}, {}, 1, {}, {}};
  cx.chunk_of_op.resize(g.op_count());
  cx.consumers.resize(g.op_count());
  cx.producers.resize(g.op_count());
  for (OpId op = 0; op < g.op_count(); ++op) {
    cx.chunk_of_op[op] = plan.chunk_of_layer[static_cast<std::size_t>(g.op(op).layer)];
    cx.producers[op] = g.producers(op);
    cx.consumers[op] = g.consumers(op);
  }

  // Device classes: devices of the same kind and speed share their compute durations.
  std::vector<std::size_t> class_of(static_cast<std::size_t>(devices));
  std::vector<std::pair<std::string, double>> classes;
  for (const auto& d : cluster.devices) {
    const auto key = std::make_pair(d.kind, d.speed_factor);
    auto it = std::find(classes.begin(), classes.end(), key);
    if (it == classes.end()) {
      classes.push_back(key);
      it = classes.end() - 1;
    }
    class_of[static_cast<std::size_t>(d.id)] = static_cast<std::size_t>(it - classes.begin());
  }
  cx.classes = classes.size();
  // Gradient accumulation over micro-batches: a memory-bound pass over each weight's gradient
  // (see strategies::GradAccumulation); the program is the same for every micro-batch, so autograd's
  // cost, paid from the second micro-batch on, is spread as (m − 1)/m of a pass.
  const double m_batches = static_cast<double>(plan.micro_batches);
  double accumulate_passes = 0, accumulate_bytes_per_param = 0;  // passes per micro-batch, bytes per pass
  switch (plan.grad_accumulation) {
    case strategies::GradAccumulation::Fused: break;
    case strategies::GradAccumulation::Autograd:
      accumulate_passes = (m_batches - 1) / m_batches;
      accumulate_bytes_per_param = 6;
      break;
    case strategies::GradAccumulation::Fp32Buffer:
      accumulate_passes = 1;
      accumulate_bytes_per_param = 10;
      break;
  }
  for (const auto& [kind, speed] : classes) {
    const DeviceProfile& dev = profile.device(kind);
    std::vector<double> f(g.op_count()), bw(g.op_count());
    for (OpId op = 0; op < g.op_count(); ++op) {
      const models::Operator& o = g.op(op);
      const OpCost c = op_cost(dev, o, mesh, plan.sharding[op], plan.precision);
      f[op] = c.fwd_s / speed;
      bw[op] = c.bwd_s / speed;
      if (accumulate_passes > 0 && !o.weights.empty()) {
        double params = 0;
        for (const auto& w : o.weights) params += strategies::local_elements(mesh, plan.sharding[op], o, w.spec);
        // One addition per parameter per pass.
        bw[op] += kernel_seconds(dev, models::OpClass::MemoryBound, plan.precision, params * accumulate_passes,
                                 params * accumulate_bytes_per_param * accumulate_passes, 0, 1) /
                  speed;
      }
    }
    cx.fwd_s.push_back(std::move(f));
    cx.bwd_s.push_back(std::move(bw));
  }

  const std::int64_t C = plan.chunks(), pp = plan.pp, m = plan.micro_batches, v = plan.virtual_stages;
  std::vector<ChunkPrograms> programs;
  for (std::int32_t c = 0; c < C; ++c) programs.push_back(build_chunk(cx, c));

  std::vector<std::vector<std::int64_t>> coords(static_cast<std::size_t>(devices));
  for (std::int64_t d = 0; d < devices; ++d) coords[static_cast<std::size_t>(d)] = mesh.coords_of(d);
  auto peer_device = [&](std::int64_t d, std::int64_t stage) {
    auto c = coords[static_cast<std::size_t>(d)];
    if (plan.pp_axis >= 0) c[static_cast<std::size_t>(plan.pp_axis)] = stage;
    return mesh.device_at(c);
  };

  // The data-parallel replica shortcut: simulate the devices of replica 0 only, when every replica
  // would simulate as it does (same devices and same links at the same place of the other axes).
  const bool shortcut = options.replicate_data_parallel && data_parallel_replicas_alike(plan, cluster);
  auto simulated = [&](std::int64_t d) {
    return !shortcut || coords[static_cast<std::size_t>(d)][static_cast<std::size_t>(plan.dp_axis)] == 0;
  };

  // Simulated devices of each stage and each one's position in its stage.
  std::vector<std::vector<std::int64_t>> stage_devices(static_cast<std::size_t>(pp));
  std::vector<std::size_t> pos_in_stage(static_cast<std::size_t>(devices));
  std::vector<std::int64_t> simulated_devices;
  for (std::int64_t d = 0; d < devices; ++d) {
    if (!simulated(d)) continue;
    simulated_devices.push_back(d);
    const std::int64_t stage = plan.pp_axis >= 0 ? coords[static_cast<std::size_t>(d)][static_cast<std::size_t>(plan.pp_axis)] : 0;
    pos_in_stage[static_cast<std::size_t>(d)] = stage_devices[static_cast<std::size_t>(stage)].size();
    stage_devices[static_cast<std::size_t>(stage)].push_back(d);
  }

  auto make_group = [&](std::vector<std::int64_t> all) {
    Group grp;
    grp.id = b.group(all);
    for (std::int64_t x : all)
      if (simulated(x)) grp.members.push_back(x);
    if (grp.members.size() != all.size()) grp.occupies = b.group(grp.members);
    return grp;
  };
  // Groups per (axis set, stage), interned in the builder.
  std::map<std::pair<AxisSet, std::int64_t>, std::vector<Group>> group_cache;
  auto groups_of = [&](const AxisSet& axes, std::int64_t stage) -> const std::vector<Group>& {
    auto key = std::make_pair(axes, stage);
    auto it = group_cache.find(key);
    if (it != group_cache.end()) return it->second;
    std::vector<Group> gs;
    std::set<std::int64_t> seen;
    for (std::int64_t d : stage_devices[static_cast<std::size_t>(stage)]) {
      if (seen.count(d)) continue;
      auto all = mesh.group_of(d, axes);
      for (auto x : all) seen.insert(x);
      gs.push_back(make_group(std::move(all)));
    }
    return group_cache.emplace(key, std::move(gs)).first->second;
  };

  // Blocks: the devices of a stage that differ only in the mesh axes other than pipeline, data and
  // expert (tensor-parallel groups) — see run_unit for why tasks are laid out block by block.
  AxisSet block_axes;
  for (int a = 0; a < static_cast<int>(mesh.axes.size()); ++a)
    if (a != plan.pp_axis && a != plan.dp_axis && a != plan.ep_axis) block_axes.push_back(a);
  struct StageBlocks {
    std::size_t count = 0;
    std::vector<std::size_t> of;         ///< per position in the stage: its block
    std::vector<std::size_t> begin{0};   ///< CSR over blocks into `devices`
    std::vector<std::int64_t> devices;   ///< simulated members, block by block
  };
  std::vector<std::optional<StageBlocks>> blocks_cache(static_cast<std::size_t>(pp));
  auto stage_blocks = [&](std::int64_t stage) -> const StageBlocks& {
    auto& cached = blocks_cache[static_cast<std::size_t>(stage)];
    if (cached) return *cached;
    // Not interned as groups of the task graph: blocks only order the tasks.
    StageBlocks sb;
    const auto& in_stage = stage_devices[static_cast<std::size_t>(stage)];
    constexpr std::size_t kUnassigned = SIZE_MAX;
    sb.of.assign(in_stage.size(), kUnassigned);
    for (std::int64_t first : in_stage) {
      if (sb.of[pos_in_stage[static_cast<std::size_t>(first)]] != kUnassigned) continue;
      for (std::int64_t d : mesh.group_of(first, block_axes)) {
        if (!simulated(d)) continue;
        sb.of[pos_in_stage[static_cast<std::size_t>(d)]] = sb.count;
        sb.devices.push_back(d);
      }
      sb.begin.push_back(sb.devices.size());
      ++sb.count;
    }
    return *(cached = std::move(sb));
  };

  auto unit_key = [&](bool forward, std::int64_t j, std::int64_t c) { return unit_index(forward, j, c, m, C); };
  // Per device: the sends addressed to it that a unit not yet made will receive (receiving unit's
  // key, send task); the receiving unit's first chained item depends on them.
  std::vector<std::vector<std::pair<std::uint32_t, TaskId>>> pending_recv(static_cast<std::size_t>(devices));
  // Per device: the last task made on it, and its gradient reductions (the optimizer waits for them).
  std::vector<TaskId> last_task(static_cast<std::size_t>(devices), kNoTask);
  std::vector<std::vector<TaskId>> dev_grad_tasks(static_cast<std::size_t>(devices));
  std::vector<TaskId> prev(static_cast<std::size_t>(devices), kNoTask);
  std::vector<TaskId> item_tasks;
  std::vector<TaskId> deps;
  std::vector<std::map<AxisSet, double>> held_buckets(static_cast<std::size_t>(pp));

  auto run_unit = [&](bool forward, std::int64_t j, std::int64_t c) {
    const Program& prog = forward ? programs[static_cast<std::size_t>(c)].fwd : programs[static_cast<std::size_t>(c)].bwd;
    const std::int64_t stage = c % pp;
    const auto& devs = stage_devices[static_cast<std::size_t>(stage)];
    const std::size_t S = devs.size();
    const std::uint32_t key = unit_key(forward, j, c);
    for (std::int64_t d : devs) prev[static_cast<std::size_t>(d)] = kNoTask;
    item_tasks.assign(prog.items.size() * S, kNoTask);
    // Gradients are reduced after the last micro-batch — or after every one under ZeRO-2/3, whose
    // devices keep only their gradient shard (DeepSpeed reduce-scatters each micro-batch's gradients).
    const bool last_micro_batch = j == m - 1;
    const bool sync_grads = !forward && (last_micro_batch || plan.zero >= 2);
    std::map<AxisSet, double> bucket;
    const auto mb = static_cast<std::int32_t>(j);

    auto member_deps = [&](std::int64_t d, const Item& it, bool first) {
      const auto ud = static_cast<std::size_t>(d);
      if (it.chained && prev[ud] != kNoTask) deps.push_back(prev[ud]);
      if (first) {
        auto& inbox = pending_recv[ud];
        for (const auto& [to, send] : inbox)
          if (to == key) deps.push_back(send);
        std::erase_if(inbox, [&](const auto& entry) { return entry.first == key; });
      }
      for (std::uint32_t e : it.extra_deps) {
        const TaskId t = item_tasks[e * S + pos_in_stage[ud]];
        if (t != kNoTask) deps.push_back(t);
      }
    };
    auto emit_bucket = [&](const AxisSet& axes, double bytes, std::size_t after_item) {
      const CollectiveKind kind = plan.zero >= 1 && !axes.empty() ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
      for (const Group& grp : groups_of(axes, stage)) {
        const auto& members = grp.members;
        deps.clear();
        for (std::int64_t mdev : members) {
          const auto ud = static_cast<std::size_t>(mdev);
          const TaskId t = after_item == SIZE_MAX ? prev[ud] : item_tasks[after_item * S + pos_in_stage[ud]];
          if (t != kNoTask) deps.push_back(t);
        }
        const auto cid = b.collective(CollectiveSpec{kind, CollectiveAlgorithm::Auto, grp.id, bytes, -1, grp.occupies});
        const TaskId t = b.add_collective(cid, stream_of_axes(mesh, axes), Category::GradientComm, mb, b.label("gradient bucket"), deps);
        for (std::int64_t mdev : members) {
          last_task[static_cast<std::size_t>(mdev)] = t;
          dev_grad_tasks[static_cast<std::size_t>(mdev)].push_back(t);
        }
      }
    };

    const std::size_t n_items = prog.items.size();
    // Which items take the unit's incoming sends: the first chained one.
    std::vector<char> takes_recv(n_items, 0);
    for (std::size_t i = 0; i < n_items; ++i)
      if (prog.items[i].chained) {
        takes_recv[i] = 1;
        break;
      }
    // Gradient buckets leave once enough gradient has accumulated; which item each follows depends
    // on the program alone, so it is worked out before any task is made.
    std::vector<std::vector<std::pair<AxisSet, double>>> buckets_after(n_items);
    if (sync_grads) {
      for (std::size_t i = 0; i < n_items; ++i) {
        for (const auto& gr : prog.items[i].grads) bucket[gr.axes] += gr.bytes;
        if (plan.overlap_grad_reduce) {
          for (auto& [axes, bytes] : bucket) {
            if (bytes >= plan.grad_bucket_bytes) {
              buckets_after[i].emplace_back(axes, bytes);
              bytes = 0;
            }
          }
        }
      }
    }

    // One item on some devices of the stage: `devs` for per-device items, the groups `gis` of a
    // collective item.
    // Flattened: GCC otherwise leaves every vector append in it as a call, millions of times a step.
    auto emit_item = [&](std::size_t i, std::span<const std::int64_t> item_devs, std::span<const std::uint32_t> gis) __attribute__((flatten)) {
      const Item& it = prog.items[i];
      const bool first = takes_recv[i] != 0;
      switch (it.kind) {
        case ItemKind::Compute:
          for (std::int64_t d : item_devs) {
            const auto ud = static_cast<std::size_t>(d);
            deps.clear();
            member_deps(d, it, first);
            const TaskId t = b.add(TaskKind::Compute, d, kComputeStream, it.duration[class_of[ud]], it.category, mb, it.label, deps);
            prev[ud] = t;
            item_tasks[i * S + pos_in_stage[ud]] = t;
            last_task[ud] = t;
          }
          break;
        case ItemKind::Collective: {
          const std::uint8_t stream = stream_of_axes(mesh, it.axes);
          const auto& item_groups = *it.groups;
          for (const std::uint32_t gi : gis) {
            const auto& members = item_groups[gi].members;
            deps.clear();
            for (std::int64_t mdev : members) member_deps(mdev, it, first);
            std::sort(deps.begin(), deps.end());
            deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
            const auto cid = it.collective_ids[gi];
            const TaskId t = b.add_collective(cid, stream, it.category, mb, it.label, deps);
            for (std::int64_t mdev : members) {
              const auto ud = static_cast<std::size_t>(mdev);
              if (it.chained) prev[ud] = t;
              item_tasks[i * S + pos_in_stage[ud]] = t;
              last_task[ud] = t;
            }
          }
          break;
        }
        case ItemKind::Send: {
          const std::int64_t peer_stage = it.peer_chunk % pp;
          for (std::int64_t d : item_devs) {
            const auto ud = static_cast<std::size_t>(d);
            deps.clear();
            member_deps(d, it, first);
            if (prev[ud] != kNoTask && std::find(deps.begin(), deps.end(), prev[ud]) == deps.end()) deps.push_back(prev[ud]);
            const std::int64_t peer = peer_device(d, peer_stage);
            // The send's collective is the same for every micro-batch: interned once per device.
            if (it.send_collective_ids.empty()) it.send_collective_ids.assign(S, kNoCollective);
            std::uint32_t& cid = it.send_collective_ids[pos_in_stage[ud]];
            if (cid == kNoCollective) {
              const std::array<std::int64_t, 2> pair{std::min(d, peer), std::max(d, peer)};
              cid = b.collective(
                  CollectiveSpec{CollectiveKind::SendRecv, CollectiveAlgorithm::Auto, b.group(pair), it.bytes, d, CollectiveSpec::kWholeGroup});
            }
            // A blocking send occupies the sender's compute stream: the stage computes nothing until
            // the transfer completes, in its schedule order.
            const std::uint8_t stream = plan.blocking_p2p ? kComputeStream : kPipelineStream;
            const TaskId t = b.add_collective(cid, stream, Category::PipelineComm, mb, it.label, deps);
            pending_recv[static_cast<std::size_t>(peer)].emplace_back(unit_key(forward, j, it.peer_chunk), t);
            item_tasks[i * S + pos_in_stage[ud]] = t;
            last_task[ud] = t;
          }
          break;
        }
      }
    };

    // Task ids are laid out block by block: a run of items whose collectives stay inside one block
    // (the devices sharing every mesh coordinate but tensor/sequence ones: a tensor-parallel group)
    // is made for one block after another, so a device's consecutive tasks lie a block's width apart
    // rather than a stage's, and the engine and the summary, which follow one device or one block
    // at a time, find them in cache. Items whose collectives span blocks (data-parallel and expert
    // groups, ZeRO-3 gathers) and the gradient buckets are made for the whole stage where they
    // stand. Each device's tasks keep the program's order either way, so the timeline is the same.
    const StageBlocks& blocks = stage_blocks(stage);
    auto block_local = [&](const Item& it) {
      return it.kind != ItemKind::Collective || std::includes(block_axes.begin(), block_axes.end(), it.axes.begin(), it.axes.end());
    };
    auto prepare_groups = [&](const Item& it) {
      if (it.kind != ItemKind::Collective || it.groups) return;
      it.groups = &groups_of(it.axes, stage);
      it.group_block_begin.assign(blocks.count + 1, 0);
      std::vector<std::pair<std::size_t, std::uint32_t>> by_block;
      for (std::uint32_t gi = 0; gi < it.groups->size(); ++gi) {
        const Group& grp = (*it.groups)[gi];
        it.collective_ids.push_back(b.collective(CollectiveSpec{it.collective, CollectiveAlgorithm::Auto, grp.id, it.bytes, -1, grp.occupies}));
        by_block.emplace_back(block_local(it) ? blocks.of[pos_in_stage[static_cast<std::size_t>(grp.members.front())]] : 0, gi);
      }
      std::stable_sort(by_block.begin(), by_block.end());
      for (const auto& [blk, gi] : by_block) {
        ++it.group_block_begin[blk + 1];
        it.group_order.push_back(gi);
      }
      for (std::size_t k = 0; k < blocks.count; ++k) it.group_block_begin[k + 1] += it.group_block_begin[k];
    };
    auto emit_buckets_after = [&](std::size_t i) {
      for (const auto& [axes, bytes] : buckets_after[i]) emit_bucket(axes, bytes, i);
    };
    for (std::size_t i = 0; i < n_items;) {
      prepare_groups(prog.items[i]);
      if (!block_local(prog.items[i])) {
        emit_item(i, devs, prog.items[i].group_order);
        emit_buckets_after(i);
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (buckets_after[j - 1].empty() && j < n_items && block_local(prog.items[j])) prepare_groups(prog.items[j++]);
      for (std::size_t blk = 0; blk < blocks.count; ++blk) {
        const std::span<const std::int64_t> block_devs(blocks.devices.data() + blocks.begin[blk], blocks.begin[blk + 1] - blocks.begin[blk]);
        for (std::size_t k = i; k < j; ++k) {
          const Item& it = prog.items[k];
          std::span<const std::uint32_t> gis;
          if (it.kind == ItemKind::Collective)
            gis = {it.group_order.data() + it.group_block_begin[blk], it.group_block_begin[blk + 1] - it.group_block_begin[blk]};
          emit_item(k, block_devs, gis);
        }
      }
      emit_buckets_after(j - 1);
      i = j;
    }
    if (sync_grads) {
      if (plan.overlap_grad_reduce || !last_micro_batch) {
        for (const auto& [axes, bytes] : bucket)
          if (bytes > 0) emit_bucket(axes, bytes, SIZE_MAX);
      } else {
        // Without overlap the reduction starts once the stage's whole backward is done: keep the
        // gradients until the stage's last backward unit (the last micro-batch of its first chunk: last in
        // every schedule, so made last too).
        auto& held = held_buckets[static_cast<std::size_t>(stage)];
        for (const auto& [axes, bytes] : bucket) held[axes] += bytes;
        if (c == stage)
          for (const auto& [axes, bytes] : held)
            if (bytes > 0) emit_bucket(axes, bytes, SIZE_MAX);
      }
    }
  };

  {
    // Reserve the task arrays: every unit of chunk c instantiates its items on the stage's devices.
    std::size_t estimate = static_cast<std::size_t>(devices) * 2;
    for (std::int64_t c = 0; c < C; ++c)
      for (const Program* prog : {&programs[static_cast<std::size_t>(c)].fwd, &programs[static_cast<std::size_t>(c)].bwd})
        estimate += prog->items.size() * stage_devices[static_cast<std::size_t>(c % pp)].size() * static_cast<std::size_t>(m);
    b.reserve(estimate);
  }
  // Units are made in an order every stage's schedule follows and in which each unit comes after
  // the units that send to it, so every resource's issue order follows the task ids
  // (TaskGraph::queues_follow_ids) and the engine simulates the step in one pass over them.
  for (const strategies::PipelineStep& u : unit_order(programs, plan.schedule, pp, v, m))
    run_unit(u.forward, u.micro_batch, u.chunk);

  // Optimizer step, then (ZeRO 1–2) the all-gather of the updated parameter shards.
  {
    const double bytes_per_param = optimizer_bytes_per_parameter(plan.optimizer, plan.precision);
    const auto opt_label = b.label("optimizer step");
    // Local parameters per stage and their ZeRO divisor.
    std::vector<double> stage_params(static_cast<std::size_t>(pp), 0), stage_updated(static_cast<std::size_t>(pp), 0);
    const auto held = strategies::stage_weights(g, plan);
    const double grad_bytes = elem_bytes(plan.precision == models::DType::F32 ? models::DType::F32 : models::DType::F16);
    for (const auto& sw : held) {
      const auto stage = static_cast<std::size_t>(sw.stage);
      stage_params[stage] += sw.local_elements;
      stage_updated[stage] += plan.zero >= 1 ? sw.local_elements / sw.zero_replicas : sw.local_elements;
    }
    // A weight held by several stages (a tied embedding) has its gradient summed over them, between
    // the devices at the same place of every other mesh axis, before the optimizer step.
    std::map<std::string, std::pair<std::set<std::int64_t>, double>> shared;
    for (const auto& sw : held)
      if (sw.shared_across_stages) {
        auto& entry = shared[sw.weight->name];
        entry.first.insert(sw.stage);
        entry.second = sw.local_elements * grad_bytes;
      }
    for (const auto& [name, entry] : shared) {
      const auto& [stages, bytes] = entry;
      const auto label = b.label("tied-weight gradient all-reduce " + name);
      for (std::int64_t d : stage_devices[static_cast<std::size_t>(*stages.begin())]) {
        std::vector<std::int64_t> members;
        for (std::int64_t st : stages) members.push_back(peer_device(d, st));
        std::sort(members.begin(), members.end());
        deps.clear();
        for (std::int64_t mdev : members)
          if (last_task[static_cast<std::size_t>(mdev)] != kNoTask) deps.push_back(last_task[static_cast<std::size_t>(mdev)]);
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllReduce, CollectiveAlgorithm::Auto, b.group(members), bytes, -1,
                                                     CollectiveSpec::kWholeGroup});
        const TaskId t = b.add_collective(cid, kDataStream, Category::GradientComm, -1, label, deps);
        for (std::int64_t mdev : members) {
          last_task[static_cast<std::size_t>(mdev)] = t;
          dev_grad_tasks[static_cast<std::size_t>(mdev)].push_back(t);
        }
      }
    }
    AxisSet data_axes;
    for (int a : {plan.dp_axis, plan.ep_axis})
      if (a >= 0 && mesh.axes[static_cast<std::size_t>(a)].size > 1) data_axes.push_back(a);
    std::sort(data_axes.begin(), data_axes.end());
    std::vector<TaskId> opt_task(static_cast<std::size_t>(devices), kNoTask);
    for (std::int64_t d : simulated_devices) {
      const auto ud = static_cast<std::size_t>(d);
      const auto stage = static_cast<std::size_t>(plan.pp_axis >= 0 ? coords[ud][static_cast<std::size_t>(plan.pp_axis)] : 0);
      const DeviceProfile& dev = profile.device(cluster.devices[ud].kind);
      const double updated = stage_updated[stage];
      const double seconds = kernel_seconds(dev, models::OpClass::MemoryBound, plan.precision, 12 * updated, bytes_per_param * updated, 0, 1) /
                             cluster.devices[ud].speed_factor;
      const TaskId t = b.add(TaskKind::Compute, d, kComputeStream, Picoseconds::from_seconds(seconds), Category::Optimizer, -1, opt_label,
                             dev_grad_tasks[ud]);
      opt_task[ud] = t;
      last_task[ud] = t;
    }
    if (plan.zero >= 1 && plan.zero < 3 && !data_axes.empty()) {
      const double weight_bytes = elem_bytes(plan.precision == models::DType::F32 ? models::DType::F32 : models::DType::F16);
      for (std::int64_t stage = 0; stage < pp; ++stage) {
        for (const Group& grp : groups_of(data_axes, stage)) {
          const auto& members = grp.members;
          deps.clear();
          for (std::int64_t mdev : members) deps.push_back(opt_task[static_cast<std::size_t>(mdev)]);
          const auto cid = b.collective(CollectiveSpec{CollectiveKind::AllGather, CollectiveAlgorithm::Auto, grp.id,
                                                       stage_params[static_cast<std::size_t>(stage)] * weight_bytes, -1, grp.occupies});
          const TaskId t = b.add_collective(cid, stream_of_axes(mesh, data_axes), Category::GradientComm, -1, b.label("parameter all-gather"), deps);
          for (std::int64_t mdev : members) last_task[static_cast<std::size_t>(mdev)] = t;
        }
      }
    }
  }

  LoweredStep out;
  out.tasks = std::move(b).finish_in_id_order();
  out.replica_shortcut = shortcut;
  out.simulated_devices = std::move(simulated_devices);
  const double per_micro_batch = g.fwd_flops() + g.bwd_flops();
  double recompute = 0;
  for (OpId op = 0; op < g.op_count(); ++op) {
    const auto& o = g.op(op);
    if (plan.recompute == strategies::Recompute::Full && recomputable_layer(g, o.layer)) recompute += o.fwd_flops();
    if (plan.recompute == strategies::Recompute::Selective && is_attention_core(o)) recompute += o.fwd_flops();
  }
  out.model_flops = per_micro_batch * static_cast<double>(m);
  out.hardware_flops = (per_micro_batch + recompute) * static_cast<double>(m);
  out.samples = plan.global_batch;
  out.tokens = plan.global_batch * (g.transformer() ? g.transformer()->seq_len : 1);
  return out;
}

}  // namespace parasim::sim
