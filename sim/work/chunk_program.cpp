#include "sim/work/chunk_program.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/error.hpp"
#include "sim/work/program_builder.hpp"
#include "sim/work/weight_gathers.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::sim {
namespace {

using models::Graph;
using models::OpId;
using models::Operator;
using strategies::Plan;

double elem_bytes(models::DType t) { return static_cast<double>(models::bytes_of(t)); }

/// Bytes of a weight: fp32 in fp32 and tf32 training, else 16-bit.
double weight_elem_bytes(const Plan& plan) { return elem_bytes(models::weight_dtype(plan.precision)); }

bool is_attention_core(const Operator& o) {
  if (o.kind == models::OpKind::Matmul || o.kind == models::OpKind::Softmax) return true;
  return o.kind == models::OpKind::Dropout && o.find_dim("q") != nullptr;
}

bool recomputable_layer(const Graph& g, std::int32_t layer) {
  if (!g.transformer()) return true;
  return layer >= 1 && layer <= g.transformer()->layers;  // Megatron recomputes the transformer layers
}

/// Writes the programs of one chunk. Holds what every rule reads: the graph's edges, which chunk
/// each operator is in, and the chunk's operators, layers and boundary tensors.
class ChunkWriter {
 public:
  /// `topo`: the graph's operators in topological order.
  ChunkWriter(const Graph& g, const Plan& plan, const std::vector<OpId>& topo, std::int32_t chunk, StepWork& step)
      : g_(g), plan_(plan), chunk_(chunk), step_(step) {
    for (OpId op : topo)
      if (chunk_of(op) == chunk) ops_.push_back(op);
    find_boundaries();
    for (OpId op : ops_)
      if (layers_.empty() || layers_.back() != g.op(op).layer) layers_.push_back(g.op(op).layer);
  }

  [[nodiscard]] ChunkWork write() {
    ChunkWork out;
    write_forward(out.forward);
    write_backward(out.backward);
    return out;
  }

 private:
  [[nodiscard]] std::int32_t chunk_of(OpId op) const { return plan_.chunk_of_layer[static_cast<std::size_t>(g_.op(op).layer)]; }
  [[nodiscard]] const strategies::DeviceMesh& mesh() const { return plan_.mesh; }
  [[nodiscard]] bool expert_parallel() const { return plan_.ep_axis >= 0 && plan_.ep() > 1; }

  [[nodiscard]] double local_out_bytes(OpId p) const {
    const auto& o = g_.op(p);
    return strategies::local_elements(mesh(), plan_.sharding[p], o, o.output) * elem_bytes(o.output.dtype);
  }
  /// The bytes a device sends in the all-to-all at token-routing operator `op` (a dispatch or a
  /// combine): its tokens' routed copies, the expert side's tensor [e, c, h] (k copies of each token,
  /// the same before dispatch and after combine), times the plan's expert_imbalance: every rank waits
  /// for the busiest, which receives that many times the balanced share (and sends it back).
  [[nodiscard]] double routed_bytes(OpId op) const {
    const auto& o = g_.op(op);
    const auto& out = o.output.dims;
    const bool expert_side_out = std::find(out.begin(), out.end(), "e") != out.end();
    return (expert_side_out ? local_out_bytes(op) : local_in_bytes(op, 0)) * plan_.expert_imbalance;
  }
  [[nodiscard]] double local_in_bytes(OpId op, std::size_t slot) const {
    const auto& o = g_.op(op);
    return strategies::local_elements(mesh(), plan_.sharding[op], o, o.inputs[slot]) * elem_bytes(o.inputs[slot].dtype);
  }
  /// The tensor-parallel axis over which a boundary tensor is replicated (scatter/gather applies), or -1.
  [[nodiscard]] int scatter_gather_axis(const Layout& l) const {
    const int tp = plan_.tp_axis;
    if (tp < 0 || mesh().axes[static_cast<std::size_t>(tp)].size <= 1) return -1;
    return replicated_over(l, tp) ? tp : -1;
  }
  /// A boundary tensor's bytes on each sender: 1/t of it under scatter/gather.
  [[nodiscard]] double send_bytes(OpId p, const Layout& l) const {
    const int sg = scatter_gather_axis(l);
    const double parts = sg >= 0 ? static_cast<double>(mesh().axes[static_cast<std::size_t>(sg)].size) : 1.0;
    return local_out_bytes(p) / parts;
  }

  /// Boundary tensors: produced in another chunk and consumed here (incoming), or the reverse (outgoing).
  void find_boundaries() {
    for (OpId op : ops_) {
      for (OpId p : g_.producers(op))
        if (g_.op(p).kind != models::OpKind::Input && chunk_of(p) != chunk_ && std::find(incoming_.begin(), incoming_.end(), p) == incoming_.end())
          incoming_.push_back(p);
      for (auto [consumer, slot] : g_.consumers(op)) {
        (void)slot;
        const auto cc = chunk_of(consumer);
        if (cc != chunk_ && std::find(outgoing_[cc].begin(), outgoing_[cc].end(), op) == outgoing_[cc].end()) outgoing_[cc].push_back(op);
      }
    }
  }

  /// ZeRO-3's gathers for a program using the chunk's layers in `order` (none without ZeRO-3), in
  /// the implementation's gather units.
  [[nodiscard]] WeightGathers weight_gathers(const std::vector<std::int32_t>& order) const {
    std::vector<GatherUnitWork> units;
    if (plan_.zero >= 3 && plan_.dp() > 1 && !step_.data_axes.empty())
      for (std::int32_t l : order) append_units(l, units);
    return WeightGathers(step_.data_axes, std::move(units), plan_.implementation);
  }
  /// Layer `layer`'s gather units: its weights in the implementation's units, weights under the
  /// persistence threshold left out (they stay whole on every rank).
  void append_units(std::int32_t layer, std::vector<GatherUnitWork>& units) const {
    const strategies::Implementation& impl = plan_.implementation;
    const std::string& layer_name = g_.layers()[static_cast<std::size_t>(layer)].name;
    GatherUnitWork whole{layer, 0, 0, layer_name};
    std::set<std::string> seen;
    for (OpId op : ops_) {
      const auto& o = g_.op(op);
      if (o.layer != layer) continue;
      GatherUnitWork module{layer, 0, 0, o.name};
      for (const auto& w : o.weights) {
        if (!seen.insert(w.name).second) continue;
        const double elements = strategies::local_elements(mesh(), plan_.sharding[op], o, w.spec);
        if (elements <= 0 || elements < impl.persistence_elements) continue;
        const GatherUnitWork tensor{layer, elements * weight_elem_bytes(plan_), elements, w.name};
        if (impl.gather_unit == strategies::GatherUnit::Parameter) units.push_back(tensor);
        for (GatherUnitWork* into : {&module, &whole}) {
          into->bytes += tensor.bytes;
          into->elements += tensor.elements;
        }
      }
      if (impl.gather_unit == strategies::GatherUnit::Module && module.bytes > 0) units.push_back(module);
    }
    if (impl.gather_unit == strategies::GatherUnit::Layer && whole.bytes > 0) units.push_back(whole);
  }

  /// Reshards of one consumer's tensor in `layout` into `to`, each a collective labelled `what`.
  void emit_reshards(ProgramBuilder& pb, const Layout& from, const Layout& to, double from_bytes, double to_bytes, const std::string& what) {
    for (const Reshard& n : reshard(from, to, from_bytes, to_bytes, mesh())) {
      const Category category = category_of_axis(mesh(), n.axis);
      const bool ring = n.axis == plan_.cp_axis;  // context parallel: a ring of K/V blocks under attention
      const std::string under = ring ? " (under attention)" : " (under the GEMMs)";
      if (overlapped(n.kind, n.axis) && n.kind == CollectiveKind::AllGather && ring) {
        // Ring attention: the consumers start on the first block while the other n − 1 arrive.
        const double pieces = static_cast<double>(mesh().axes[static_cast<std::size_t>(n.axis)].size);
        const std::uint32_t first = pb.collective(n.kind, {n.axis}, n.bytes / pieces, category, what + " (first chunk)");
        const std::uint32_t rest = pb.collective(n.kind, {n.axis}, n.bytes * (pieces - 1) / pieces, category, what + under, false);
        pb.add_dependency(rest, first);
        gather_rests_.push_back({rest, models::OpClass::Attention});
      } else if (overlapped(n.kind, n.axis) && n.kind == CollectiveKind::AllGather) {
        // Transformer Engine's ring exchange: the GEMM starts on the device's own chunk as the first
        // exchange begins, and the other n − 1 chunks arrive under the GEMMs (userbuffers'
        // split_overlap_ag): the whole all-gather runs beside them, none of it before.
        pb.flush();
        const std::int64_t before = pb.last_chained();
        const std::uint32_t rest = pb.collective(n.kind, {n.axis}, n.bytes, category, what + under, false);
        if (before >= 0) pb.add_dependency(rest, static_cast<std::uint32_t>(before));
        pb.run_on(rest, CommKernel::RingExchange);
        gather_rests_.push_back({rest, models::OpClass::Gemm});
      } else if (overlapped(n.kind, n.axis) && n.kind == CollectiveKind::ReduceScatter && runs_.count(n.axis)) {
        // Pipelined: every chunk but the last is reduce-scattered while the run produces the next
        // (a ring passes the K/V gradients on as the attention blocks finish: cp chunks).
        const double pieces = ring ? static_cast<double>(mesh().axes[static_cast<std::size_t>(n.axis)].size) : kTpOverlapSplits;
        pb.flush();
        Run& run = runs_.at(n.axis);
        const std::uint32_t rest = pb.collective(n.kind, {n.axis}, n.bytes * (pieces - 1) / pieces, category, what + under, false);
        if (run.before >= 0) pb.add_dependency(rest, static_cast<std::uint32_t>(run.before));
        const std::uint32_t last = pb.collective(n.kind, {n.axis}, n.bytes / pieces, category, what + " (last chunk)");
        pb.add_dependency(last, rest);
        if (!ring) {
          pb.run_on(rest, CommKernel::Pipelined);
          pb.run_on(last, CommKernel::Pipelined);
        }
        run.scattered = true;
      } else {
        pb.collective(n.kind, {n.axis}, n.bytes, category, what);
      }
    }
  }

  // Communication overlapped with the compute that consumes or produces it.
  //  - Tensor parallel (plan.tp_comm_overlap; Megatron-Core --tp-comm-overlap, as Transformer
  //    Engine's userbuffers do it): a sequence-parallel all-gather runs as a ring exchange of tp
  //    chunks, the GEMMs starting on the device's own chunk and consuming each other chunk as it
  //    arrives, so all of it runs under the GEMMs (the first operator that is not such a GEMM waits
  //    for it); a
  //    reduce-scatter is pipelined in kTpOverlapSplits chunks with the GEMMs producing it, so only the
  //    last chunk is exposed. They run on userbuffers' own kernels (CommKernel), which take less
  //    from the GEMMs than NCCL's (sim/interference.hpp).
  //  - Context parallel with cp_comm p2p (ring attention, Liu et al. 2023; Megatron-Core's default):
  //    K and V pass around the cp ranks in cp blocks, each step's send posted before the current
  //    block's attention (Transformer Engine's context-parallel attention), so only the first block is
  //    exposed and the rest runs under the attention kernel; in backward the K/V gradients travel the
  //    ring the same way and only the last block is exposed. (The backward ring also carries K and V
  //    again beside their gradients, which is not counted.)
  static constexpr double kTpOverlapSplits = 4;  // Transformer Engine's default num_splits for the pipelined reduce-scatters
  [[nodiscard]] bool overlapped(CollectiveKind kind, int axis) const {
    const bool gather_or_scatter = kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter;
    if (plan_.tp_comm_overlap && axis == plan_.tp_axis) return gather_or_scatter;
    return axis >= 0 && axis == plan_.cp_axis && plan_.cp_comm == strategies::CpComm::P2P && gather_or_scatter;
  }
  /// Before `op`'s pass is added: closes an overlapped all-gather's window at the first operator that
  /// is not of the class it runs under, and opens a run whose result is reduce-scattered: GEMMs whose
  /// result is a partial sum over the tensor axis, or an attention whose result (its K/V gradient in
  /// backward) is one over the context axis.
  void overlap_before(ProgramBuilder& pb, OpId op, bool backward) {
    const Operator& o = g_.op(op);
    const models::OpClass cls = models::op_class(o.kind);
    for (auto it = gather_rests_.begin(); it != gather_rests_.end();) {
      if (it->second == cls) {
        ++it;
        continue;
      }
      pb.flush();
      pb.depend_on(it->first);
      it = gather_rests_.erase(it);
    }
    // A tensor-parallel run ends at the first operator after its reduce-scatter that is not a GEMM; a
    // context-parallel one lasts the layer (its K and V gradients leave as the projections' backward
    // passes reach them).
    if (auto it = runs_.find(plan_.tp_axis); it != runs_.end() && it->second.scattered && cls != models::OpClass::Gemm) runs_.erase(it);
    auto partial_over = [&](int axis) {
      if (axis < 0) return false;
      auto has = [&](const Layout& l) { return std::find(l.partial.begin(), l.partial.end(), axis) != l.partial.end(); };
      if (!backward) return has(output_layout(o, plan_.sharding[op]));
      for (std::size_t slot = 0; slot < o.inputs.size(); ++slot)
        if (has(input_grad_layout(o, plan_.sharding[op], slot))) return true;
      return false;
    };
    int axis = -1;
    if (plan_.tp_comm_overlap && cls == models::OpClass::Gemm && partial_over(plan_.tp_axis)) axis = plan_.tp_axis;
    else if (overlapped(CollectiveKind::ReduceScatter, plan_.cp_axis) && cls == models::OpClass::Attention && partial_over(plan_.cp_axis))
      axis = plan_.cp_axis;
    if (axis < 0 || runs_.count(axis)) return;
    pb.flush();
    runs_[axis] = Run{pb.last_chained(), false};
  }
  void reset_overlap() {
    gather_rests_.clear();
    runs_.clear();
  }
  /// A run of operators whose result is reduce-scattered over an axis: the last chained item before it
  /// (-1 for none), and whether a reduce-scatter of it was emitted.
  struct Run {
    std::int64_t before = -1;
    bool scattered = false;
  };
  std::vector<std::pair<std::uint32_t, models::OpClass>> gather_rests_;  ///< overlapped gathers' rests and the class they run under
  std::map<int, Run> runs_;  ///< open runs by axis

  /// Forward items of `ops` (in topological order). `gathers`, when given, enters each layer as it
  /// begins (ZeRO-3); otherwise forward items may run on into the next layer (only backward needs
  /// an item boundary per layer, so that gradient buckets start as layers finish).
  void write_forward_ops(ProgramBuilder& pb, const std::vector<OpId>& ops, Pass pass, Category category, const char* prefix,
                         WeightGathers* gathers) {
    std::set<std::pair<OpId, Layout>> materialized;  // resharded inputs, made once per program run
    std::int32_t current_layer = -1;
    for (OpId op : ops) {
      const Operator& o = g_.op(op);
      if (o.kind == models::OpKind::Input) continue;
      if (o.layer != current_layer) {
        current_layer = o.layer;
        if (gathers) gathers->enter(pb, o.layer);
      }
      const auto producers = g_.producers(op);
      for (std::size_t slot = 0; slot < o.inputs.size(); ++slot) {
        const OpId p = producers[slot];
        if (g_.op(p).kind == models::OpKind::Input) continue;
        if (o.routing) {
          if (slot == 0 && expert_parallel() && materialized.insert({p, Layout{}}).second)
            pb.collective(CollectiveKind::AllToAll, {plan_.ep_axis}, routed_bytes(op), Category::ExpertComm, o.name);
          continue;
        }
        Layout from = output_layout(g_.op(p), plan_.sharding[p]);
        if (chunk_of(p) != chunk_) from = without_partial(from);  // the sender reduced it
        const Layout to = input_layout(o, plan_.sharding[op], slot);
        if (!materialized.insert({p, to}).second) continue;
        emit_reshards(pb, from, to, local_out_bytes(p), local_in_bytes(op, slot), o.name);
      }
      overlap_before(pb, op, false);
      pb.compute(op, pass, category, prefix);
    }
    pb.flush();
    reset_overlap();
  }

  void write_forward(Program& program) {
    ProgramBuilder pb(step_, program, g_, mesh());
    WeightGathers gathers = weight_gathers(layers_);
    gathers.start(pb);
    for (OpId p : incoming_) {
      const int sg = scatter_gather_axis(without_partial(output_layout(g_.op(p), plan_.sharding[p])));
      if (sg >= 0) pb.collective(CollectiveKind::AllGather, {sg}, local_out_bytes(p), Category::PipelineComm, "received " + g_.op(p).name);
    }
    write_forward_ops(pb, ops_, Pass::Forward, Category::Forward, "F ", &gathers);
    for (const auto& [cc, producers] : outgoing_) {
      for (OpId p : producers) {
        const Layout l = output_layout(g_.op(p), plan_.sharding[p]);
        for (int a : l.partial) pb.collective(CollectiveKind::AllReduce, {a}, local_out_bytes(p), category_of_axis(mesh(), a), g_.op(p).name);
        pb.send(cc, send_bytes(p, without_partial(l)), g_.op(p).name);
      }
    }
  }

  /// The gradient of `op`'s output brought into its output layout: one reshard per distinct layout
  /// the consumers in this chunk produce it in (their contributions are summed locally).
  void write_output_gradient(ProgramBuilder& pb, OpId op) {
    const Operator& o = g_.op(op);
    const Layout to = without_partial(output_layout(o, plan_.sharding[op]));
    std::set<Layout> done;
    for (auto [consumer, slot] : g_.consumers(op)) {
      if (chunk_of(consumer) != chunk_) continue;
      const Operator& q = g_.op(consumer);
      const auto s = static_cast<std::size_t>(slot);
      if (q.routing) {
        if (slot == 0 && expert_parallel() && done.insert(Layout{}).second)
          pb.collective(CollectiveKind::AllToAll, {plan_.ep_axis}, routed_bytes(consumer), Category::ExpertComm, "gradient of " + o.name);
        continue;
      }
      const Layout from = input_grad_layout(q, plan_.sharding[consumer], s);
      if (!done.insert(from).second) continue;
      emit_reshards(pb, from, to, local_in_bytes(consumer, s), local_out_bytes(op), "gradient of " + o.name);
    }
  }

  /// One layer's backward: its recomputation, then its operators in reverse with their weight
  /// gradients marked ready.
  void write_layer_backward(ProgramBuilder& pb, std::int32_t layer, std::set<std::string>& seen_weights, WeightGathers& gathers) {
    std::vector<OpId> layer_ops;
    for (OpId op : ops_)
      if (g_.op(op).layer == layer) layer_ops.push_back(op);
    if (plan_.recompute == strategies::Recompute::Full && recomputable_layer(g_, layer)) {
      write_forward_ops(pb, layer_ops, Pass::Recompute, Category::Recompute, "R ", nullptr);
      gathers.regather(pb, layer);
    }
    if (plan_.recompute == strategies::Recompute::Selective) {
      // Selective recompute (Korthikanti et al. 2022) recomputes the attention core (scores,
      // softmax, dropout, context) before its backward; it needs no communication.
      for (OpId op : layer_ops)
        if (is_attention_core(g_.op(op))) pb.compute(op, Pass::Recompute, Category::Recompute, "R ");
      pb.flush();
    }
    for (auto it = layer_ops.rbegin(); it != layer_ops.rend(); ++it) {
      const OpId op = *it;
      const Operator& o = g_.op(op);
      if (o.kind == models::OpKind::Input) continue;
      write_output_gradient(pb, op);
      overlap_before(pb, op, true);
      pb.compute(op, Pass::Backward, Category::Backward, "B ");
      // Weight gradients that are partial sums over some mesh axes must be reduced over them.
      const auto& sh = plan_.sharding[op];
      for (const auto& w : o.weights) {
        if (!seen_weights.insert(w.name).second) continue;
        const AxisSet axes = weight_grad_partial_axes(o, sh, w);
        if (axes.empty()) continue;
        pb.grads_ready(axes, strategies::local_elements(mesh(), sh, o, w.spec) * elem_bytes(plan_.grad_dtype));
      }
    }
    pb.flush();  // one backward item per layer at least, so gradient buckets can start as layers finish
    reset_overlap();
  }

  void write_backward(Program& program) {
    ProgramBuilder pb(step_, program, g_, mesh());
    WeightGathers gathers = weight_gathers(std::vector<std::int32_t>(layers_.rbegin(), layers_.rend()));
    gathers.start(pb);
    for (const auto& [cc, producers] : outgoing_) {
      (void)cc;
      for (OpId p : producers) {
        const int sg = scatter_gather_axis(without_partial(output_layout(g_.op(p), plan_.sharding[p])));
        if (sg >= 0)
          pb.collective(CollectiveKind::AllGather, {sg}, local_out_bytes(p), Category::PipelineComm, "received gradient of " + g_.op(p).name);
      }
    }
    std::set<std::string> seen_weights;
    for (auto layer_it = layers_.rbegin(); layer_it != layers_.rend(); ++layer_it) {
      gathers.enter(pb, *layer_it);
      write_layer_backward(pb, *layer_it, seen_weights, gathers);
    }
    pb.flush();
    // Gradients of tensors that came from earlier chunks go back to them.
    for (OpId p : incoming_) {
      const Layout to = without_partial(output_layout(g_.op(p), plan_.sharding[p]));
      std::set<Layout> done;
      for (auto [consumer, slot] : g_.consumers(p)) {
        if (chunk_of(consumer) != chunk_) continue;
        const auto s = static_cast<std::size_t>(slot);
        const Layout from = input_grad_layout(g_.op(consumer), plan_.sharding[consumer], s);
        if (!done.insert(from).second) continue;
        emit_reshards(pb, from, to, local_in_bytes(consumer, s), local_out_bytes(p), "gradient of " + g_.op(p).name);
      }
      pb.send(chunk_of(p), send_bytes(p, to), "gradient of " + g_.op(p).name);
    }
  }

  const Graph& g_;
  const Plan& plan_;
  std::int32_t chunk_;
  StepWork& step_;
  std::vector<OpId> ops_;
  std::vector<std::int32_t> layers_;
  std::vector<OpId> incoming_;
  std::map<std::int32_t, std::vector<OpId>> outgoing_;  // consumer chunk → producers
};

/// The step's end: each stage's parameters and the share its optimizer updates, and the weights
/// several stages hold.
void describe_step_end(const Graph& g, const Plan& plan, StepWork& step) {
  const auto pp = static_cast<std::size_t>(plan.pp);
  step.stage_gathered.assign(pp, 0);
  step.stage_updated.assign(pp, 0);
  step.chunk_gathered.assign(static_cast<std::size_t>(plan.chunks()), 0);
  step.chunk_weight_layers.assign(static_cast<std::size_t>(plan.chunks()), 0);
  const auto held = strategies::stage_weights(g, plan);
  std::set<std::int32_t> weight_layers;
  for (const auto& sw : held) {
    const auto stage = static_cast<std::size_t>(sw.stage);
    if (sw.zero_replicas > 1) {
      step.stage_gathered[stage] += sw.local_elements;
      step.chunk_gathered[static_cast<std::size_t>(sw.chunk)] += sw.local_elements;
    }
    if (weight_layers.insert(g.op(sw.op).layer).second) ++step.chunk_weight_layers[static_cast<std::size_t>(sw.chunk)];
    step.stage_updated[stage] += plan.zero >= 1 ? sw.local_elements / sw.zero_replicas : sw.local_elements;
  }
  std::map<std::string, std::pair<std::set<std::int64_t>, double>> shared;
  for (const auto& sw : held)
    if (sw.shared_across_stages) {
      auto& entry = shared[sw.weight->name];
      entry.first.insert(sw.stage);
      entry.second = sw.local_elements * elem_bytes(plan.grad_dtype);  // the tied weights' gradient all-reduce
    }
  for (const auto& [name, entry] : shared)
    step.tied.push_back({name, std::vector<std::int64_t>(entry.first.begin(), entry.first.end()), entry.second});
  for (std::size_t s = 0; s < pp; ++s) step.computes.push_back({0, 0, static_cast<std::int64_t>(s)});
}

}  // namespace

StepWork describe_step(const Graph& g, const Plan& plan) {
  PARASIM_CHECK(plan.sharding.size() == g.op_count(), "one sharding per operator");
  StepWork step;
  step.op_work.reserve(g.op_count());
  for (OpId op = 0; op < g.op_count(); ++op) {
    step.op_work.push_back(op_work(g.op(op), plan.mesh, plan.sharding[op], plan.precision, plan.micro_batches,
                                   plan.expert_imbalance));
    // The attention implementation is the run's software choice, not the operator's: it travels with the work.
    if (step.op_work.back().cls == models::OpClass::Attention) step.op_work.back().attention_kernel = plan.attention_kernel;
    const auto producers = g.producers(op);
    step.first_producer.push_back(producers.empty() || producers.front() >= g.op_count() ? SIZE_MAX : producers.front());
  }
  // Gradients are reduced (and ZeRO-sharded) over the data, expert and context axes.
  for (int a : {plan.dp_axis, plan.ep_axis, plan.cp_axis})
    if (a >= 0 && plan.mesh.axes[static_cast<std::size_t>(a)].size > 1) step.data_axes.push_back(a);
  std::sort(step.data_axes.begin(), step.data_axes.end());
  const std::vector<OpId> topo = g.topological_order();
  for (std::int32_t c = 0; c < plan.chunks(); ++c) step.chunks.push_back(ChunkWriter(g, plan, topo, c, step).write());
  describe_step_end(g, plan, step);
  return step;
}

Category category_of_axis(const strategies::DeviceMesh& mesh, int axis) {
  switch (mesh.axes[static_cast<std::size_t>(axis)].role) {
    case strategies::AxisRole::Expert: return Category::ExpertComm;
    default: return Category::TensorComm;
  }
}

Stream stream_of_axes(const strategies::DeviceMesh& mesh, const AxisSet& axes) {
  bool data = false, expert = false;
  for (int a : axes) {
    const auto role = mesh.axes[static_cast<std::size_t>(a)].role;
    data |= role == strategies::AxisRole::Data;
    expert |= role == strategies::AxisRole::Expert;
  }
  if (data) return Stream::DataComm;
  if (expert) return Stream::ExpertComm;
  return Stream::TensorComm;
}

GradientBuckets gradient_buckets(const Program& backward, const Plan& plan) {
  GradientBuckets out;
  out.after.resize(backward.items.size());
  // Per set of reduction axes, the last item completing a gradient of it: there its last bucket is
  // complete, however small, and leaves (a bucket is ready once all its gradients are, as in
  // PyTorch DDP and Megatron-LM's buffers; weights reduced over other axes — experts, an annotated
  // plan's split weights — fill buckets of their own).
  std::map<AxisSet, std::size_t> last;
  for (std::size_t i = 0; i < backward.items.size(); ++i)
    for (const auto& gr : backward.items[i].grads) last[gr.axes] = i;
  for (std::size_t i = 0; i < backward.items.size(); ++i) {
    if (plan.implementation.reduce_per_parameter && plan.overlap_grad_reduce) {
      // One reduction per weight tensor as its gradient completes (DeepSpeed before v0.6).
      for (const auto& gr : backward.items[i].grads) out.after[i].emplace_back(gr.axes, gr.bytes);
      continue;
    }
    for (const auto& gr : backward.items[i].grads) out.rest[gr.axes] += gr.bytes;
    if (!plan.overlap_grad_reduce) continue;
    for (auto& [axes, bytes] : out.rest) {
      if (bytes > 0 && (bytes >= plan.grad_bucket_bytes || last[axes] == i)) {
        out.after[i].emplace_back(axes, bytes);
        bytes = 0;
      }
    }
  }
  return out;
}

CollectiveKind gradient_bucket_kind(const Plan& plan) { return plan.zero >= 1 ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce; }

bool syncs_gradients(const Plan& plan, std::int64_t micro_batch) { return micro_batch == plan.micro_batches - 1 || plan.zero >= 2; }

std::uint64_t syncing_micro_batches(const Plan& plan) {
  return plan.zero >= 2 ? static_cast<std::uint64_t>(std::max<std::int64_t>(plan.micro_batches, 0)) : 1;
}

double recompute_flops(const Graph& g, const Plan& plan) {
  double recompute = 0;
  for (OpId op = 0; op < g.op_count(); ++op) {
    const auto& o = g.op(op);
    if (plan.recompute == strategies::Recompute::Full && recomputable_layer(g, o.layer)) recompute += o.fwd_flops();
    if (plan.recompute == strategies::Recompute::Selective && is_attention_core(o)) recompute += o.fwd_flops();
  }
  return recompute;
}

}  // namespace parasim::sim
