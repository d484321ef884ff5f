#include "sim/task_estimate.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "strategies/local_shape.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::sim {
namespace {

using models::Graph;
using models::OpId;
using models::Operator;
using strategies::OpSharding;
using strategies::Plan;
using AxisSet = std::vector<int>;

// The layout rules below are sim/lower.cpp's (a tensor's split axes per dim and the axes it is a
// partial sum over; a reshard emits one collective per mesh axis whose role changes). They are
// restated here, reduced to what decides how many items a program has, so the estimate needs no
// TaskGraph; tests/sim/task_estimate_test.cpp checks the two agree.
struct Layout {
  std::vector<std::vector<int>> pos;
  AxisSet partial;
  auto operator<=>(const Layout&) const = default;
};

bool contains(const std::vector<int>& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); }
bool in_dims(const std::vector<std::string>& dims, const std::string& d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); }

Layout tensor_layout(const OpSharding& sh, const std::vector<std::string>& dims, bool partial_over_missing) {
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
Layout output_layout(const Operator& op, const OpSharding& sh) { return tensor_layout(sh, op.output.dims, true); }
Layout input_layout(const Operator& op, const OpSharding& sh, std::size_t slot) { return tensor_layout(sh, op.inputs[slot].dims, false); }
Layout input_grad_layout(const Operator& op, const OpSharding& sh, std::size_t slot) { return tensor_layout(sh, op.inputs[slot].dims, true); }
Layout without_partial(Layout l) {
  l.partial.clear();
  return l;
}
bool replicated_over(const Layout& l, int axis) {
  for (const auto& p : l.pos)
    if (contains(p, axis)) return false;
  return !contains(l.partial, axis);
}

/// The mesh axes a reshard from `from` to `to` communicates over, one collective each.
std::vector<int> reshard_axes(const Layout& from, const Layout& to, const strategies::DeviceMesh& mesh) {
  std::vector<int> axes;
  if (from.pos.size() != to.pos.size()) return axes;
  for (int a = 0; a < static_cast<int>(mesh.axes.size()); ++a) {
    if (mesh.axes[static_cast<std::size_t>(a)].size <= 1) continue;
    int pf = -1, pt = -1;
    for (std::size_t i = 0; i < from.pos.size(); ++i) {
      if (contains(from.pos[i], a)) pf = static_cast<int>(i);
      if (contains(to.pos[i], a)) pt = static_cast<int>(i);
    }
    if (contains(from.partial, a) || (pf != pt && pf >= 0)) axes.push_back(a);
  }
  return axes;
}

enum class ItemKind : std::uint8_t { Compute, Collective, Send };
enum class Phase : std::uint8_t { Forward, Recompute, Backward };

struct GradReady {
  AxisSet axes;
  double bytes;
};

/// One item of a program: a compute segment (with the weight gradients complete after it), a
/// collective over some mesh axes, or a pipeline send.
struct Item {
  ItemKind kind;
  AxisSet axes;
  std::vector<GradReady> grads;
};

/// sim/lower.cpp's ProgramBuilder, keeping only what sizes the TaskGraph: consecutive compute of one
/// phase merges into one segment until a chained collective or a send ends it (or the caller flushes).
class ProgramCounter {
 public:
  explicit ProgramCounter(std::vector<Item>& items) : items_(items) {}
  void compute(Phase phase) {
    if (open_ && phase != phase_) flush();
    open_ = true;
    phase_ = phase;
  }
  void grads_ready(AxisSet axes, double bytes) { pending_grads_.push_back({std::move(axes), bytes}); }
  void flush() {
    if (!open_) return;
    items_.push_back({ItemKind::Compute, {}, std::move(pending_grads_)});
    pending_grads_.clear();
    open_ = false;
  }
  void collective(AxisSet axes, bool chained = true) {
    if (chained) flush();
    items_.push_back({ItemKind::Collective, std::move(axes), {}});
  }
  void send() {
    flush();
    items_.push_back({ItemKind::Send, {}, {}});
  }

 private:
  std::vector<Item>& items_;
  bool open_ = false;
  Phase phase_ = Phase::Forward;
  std::vector<GradReady> pending_grads_;
};

struct Context {
  const Graph& g;
  const Plan& plan;
  std::vector<std::int32_t> chunk_of_op;
  std::vector<OpId> topo;
  std::vector<std::vector<OpId>> producers;
  std::vector<std::vector<std::pair<OpId, int>>> consumers;
};

bool is_input(const Context& cx, OpId op) { return cx.g.op(op).kind == models::OpKind::Input; }

bool is_attention_core(const Operator& o) {
  if (o.kind == models::OpKind::Matmul || o.kind == models::OpKind::Softmax) return true;
  return o.kind == models::OpKind::Dropout && o.find_dim("q") != nullptr;
}

bool recomputable_layer(const Graph& g, std::int32_t layer) {
  if (!g.transformer()) return true;
  return layer >= 1 && layer <= g.transformer()->layers;
}

int scatter_gather_axis(const Context& cx, const Layout& l) {
  const int tp = cx.plan.tp_axis;
  if (tp < 0 || cx.plan.mesh.axes[static_cast<std::size_t>(tp)].size <= 1) return -1;
  return replicated_over(l, tp) ? tp : -1;
}

bool expert_parallel(const Plan& plan) { return plan.ep_axis >= 0 && plan.ep() > 1; }

/// Forward compute runs on across layers, except into a layer whose weights a ZeRO-3 gather
/// (`gathered_layers`) must bring first.
void count_forward(const Context& cx, ProgramCounter& pc, const std::vector<OpId>& ops, std::int32_t chunk, Phase phase,
                   std::set<std::pair<OpId, Layout>>& materialized, const std::set<std::int32_t>& gathered_layers) {
  std::int32_t current_layer = -1;
  for (OpId op : ops) {
    const Operator& o = cx.g.op(op);
    if (o.kind == models::OpKind::Input) continue;
    if (o.layer != current_layer) {
      if (current_layer >= 0 && gathered_layers.count(o.layer)) pc.flush();
      current_layer = o.layer;
    }
    for (std::size_t slot = 0; slot < o.inputs.size(); ++slot) {
      const OpId p = cx.producers[op][slot];
      if (is_input(cx, p)) continue;
      if (o.routing) {
        if (slot == 0 && expert_parallel(cx.plan) && materialized.insert({p, Layout{}}).second) pc.collective({cx.plan.ep_axis});
        continue;
      }
      Layout from = output_layout(cx.g.op(p), cx.plan.sharding[p]);
      if (cx.chunk_of_op[p] != chunk) from = without_partial(from);
      const Layout to = input_layout(o, cx.plan.sharding[op], slot);
      if (!materialized.insert({p, to}).second) continue;
      for (int a : reshard_axes(from, to, cx.plan.mesh)) pc.collective({a});
    }
    pc.compute(phase);
  }
  pc.flush();
}

struct ChunkItems {
  std::vector<Item> fwd, bwd;
};

ChunkItems count_chunk(const Context& cx, std::int32_t chunk) {
  ChunkItems out;
  const auto& mesh = cx.plan.mesh;
  std::vector<OpId> ops;
  for (OpId op : cx.topo)
    if (cx.chunk_of_op[op] == chunk) ops.push_back(op);

  std::vector<OpId> incoming;
  std::map<std::int32_t, std::vector<OpId>> outgoing;
  for (OpId op : ops) {
    for (OpId p : cx.producers[op])
      if (!is_input(cx, p) && cx.chunk_of_op[p] != chunk && std::find(incoming.begin(), incoming.end(), p) == incoming.end())
        incoming.push_back(p);
    for (auto [consumer, slot] : cx.consumers[op]) {
      (void)slot;
      const auto cc = cx.chunk_of_op[consumer];
      if (cc != chunk && std::find(outgoing[cc].begin(), outgoing[cc].end(), op) == outgoing[cc].end()) outgoing[cc].push_back(op);
    }
  }

  std::vector<std::int32_t> layers;
  for (OpId op : ops)
    if (layers.empty() || layers.back() != cx.g.op(op).layer) layers.push_back(cx.g.op(op).layer);
  AxisSet data_axes;
  for (int a : {cx.plan.dp_axis, cx.plan.ep_axis})
    if (a >= 0 && mesh.axes[static_cast<std::size_t>(a)].size > 1) data_axes.push_back(a);
  std::sort(data_axes.begin(), data_axes.end());
  const bool zero3 = cx.plan.zero >= 3 && cx.plan.dp() > 1 && !data_axes.empty();
  const double weight_bytes = static_cast<double>(models::bytes_of(cx.plan.precision == models::DType::F32 ? models::DType::F32 : models::DType::F16));
  // ZeRO-3 gathers one layer's weights before its forward and again before its backward; returns
  // the layers gathered.
  auto count_gathers = [&](ProgramCounter& pc) {
    std::set<std::int32_t> gathered;
    if (!zero3) return gathered;
    for (std::int32_t l : layers) {
      bool has_weights = false;
      for (OpId op : ops) {
        const auto& o = cx.g.op(op);
        if (o.layer != l) continue;
        for (const auto& w : o.weights) has_weights |= strategies::local_elements(mesh, cx.plan.sharding[op], o, w.spec) > 0;
      }
      if (has_weights) {
        pc.collective(data_axes, false);
        gathered.insert(l);
      }
    }
    return gathered;
  };

  {
    ProgramCounter pc(out.fwd);
    const std::set<std::int32_t> gathered = count_gathers(pc);
    for (OpId p : incoming)
      if (const int sg = scatter_gather_axis(cx, without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p]))); sg >= 0) pc.collective({sg});
    std::set<std::pair<OpId, Layout>> materialized;
    count_forward(cx, pc, ops, chunk, Phase::Forward, materialized, gathered);
    for (const auto& [cc, producers] : outgoing) {
      (void)cc;
      for (OpId p : producers) {
        for (int a : output_layout(cx.g.op(p), cx.plan.sharding[p]).partial) pc.collective({a});
        pc.send();
      }
    }
  }

  {
    ProgramCounter pc(out.bwd);
    (void)count_gathers(pc);
    for (const auto& [cc, producers] : outgoing) {
      (void)cc;
      for (OpId p : producers)
        if (const int sg = scatter_gather_axis(cx, without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p]))); sg >= 0) pc.collective({sg});
    }
    std::set<std::string> seen_weights;
    for (auto layer_it = layers.rbegin(); layer_it != layers.rend(); ++layer_it) {
      const std::int32_t layer = *layer_it;
      std::vector<OpId> layer_ops;
      for (OpId op : ops)
        if (cx.g.op(op).layer == layer) layer_ops.push_back(op);
      if (cx.plan.recompute == strategies::Recompute::Full && recomputable_layer(cx.g, layer)) {
        std::set<std::pair<OpId, Layout>> materialized;
        count_forward(cx, pc, layer_ops, chunk, Phase::Recompute, materialized, {});
      }
      if (cx.plan.recompute == strategies::Recompute::Selective) {
        for (OpId op : layer_ops)
          if (is_attention_core(cx.g.op(op))) pc.compute(Phase::Recompute);
        pc.flush();
      }
      for (auto it = layer_ops.rbegin(); it != layer_ops.rend(); ++it) {
        const OpId op = *it;
        const Operator& o = cx.g.op(op);
        if (o.kind == models::OpKind::Input) continue;
        const Layout to = without_partial(output_layout(o, cx.plan.sharding[op]));
        std::set<Layout> done;
        for (auto [consumer, slot] : cx.consumers[op]) {
          if (cx.chunk_of_op[consumer] != chunk) continue;
          const Operator& q = cx.g.op(consumer);
          if (q.routing) {
            if (slot == 0 && expert_parallel(cx.plan) && done.insert(Layout{}).second) pc.collective({cx.plan.ep_axis});
            continue;
          }
          const Layout from = input_grad_layout(q, cx.plan.sharding[consumer], static_cast<std::size_t>(slot));
          if (!done.insert(from).second) continue;
          for (int a : reshard_axes(from, to, mesh)) pc.collective({a});
        }
        pc.compute(Phase::Backward);
        const auto& sh = cx.plan.sharding[op];
        for (const auto& w : o.weights) {
          if (!seen_weights.insert(w.name).second) continue;
          // The axes over which the weight's gradient is a partial sum (lower.cpp's
          // weight_grad_partial_axes): a weight with only output dims sums over the output dims it
          // lacks, any other over every split dim it lacks.
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
          if (!axes.empty()) pc.grads_ready(std::move(axes), strategies::local_elements(mesh, sh, o, w.spec) * weight_bytes);
        }
      }
      pc.flush();
    }
    pc.flush();
    for (OpId p : incoming) {
      const Layout to = without_partial(output_layout(cx.g.op(p), cx.plan.sharding[p]));
      std::set<Layout> done;
      for (auto [consumer, slot] : cx.consumers[p]) {
        if (cx.chunk_of_op[consumer] != chunk) continue;
        const Layout from = input_grad_layout(cx.g.op(consumer), cx.plan.sharding[consumer], static_cast<std::size_t>(slot));
        if (!done.insert(from).second) continue;
        for (int a : reshard_axes(from, to, mesh)) pc.collective({a});
      }
      pc.send();
    }
  }
  return out;
}

std::uint64_t u64(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

// Saturating arithmetic: a plan may ask for more than 2^64 tasks (a huge batch on a huge mesh); the
// estimate then says "at least UINT64_MAX" instead of wrapping to a small number.
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
void accumulate(std::uint64_t& total, std::uint64_t a, std::uint64_t times) { total = add(total, mul(a, times)); }

}  // namespace

// Memory, array by array, of the two phases that hold the whole graph (each a resident peak: arrays
// are filled, so their pages are touched; a reserve beyond that is not):
//  - the lowering, when TaskGraphBuilder::finish lays out the queues — per task: the TaskGraph's kind 1
//    + stream 1 + owner 4 + duration 8 + category 1 + micro-batch 4 + label 4 + dep_begin 4 = 27 B and
//    finish's count of each task's enqueues 4 B: 31 B; per queue entry: the builder's per-resource
//    queue 4 B (8 B once a vector has doubled), the CSR queue 4 B and the lowering's per-device task
//    list 4 B (8 B): 20 B; per dependency: TaskGraph deps 4 B;
//  - the engine (simulate_fifo) — per task: the TaskGraph's 27 B, the pending count 4, successor
//    offsets 4, ready time 8 and the Timeline's start time 8: 51 B; per queue entry: the CSR queue
//    4 B; per dependency: TaskGraph deps 4 B and the successor list 4 B: 8 B.
// Measured against this: GPT-3 175B on 1024 A100 (scenarios/examples/gpt3-175b-1024-a100.json with
// its interleaved schedule, --no-replica-shortcut) estimates 11.6 million tasks, 18.5 million queue
// entries and 19.3 million dependencies: an engine phase of 821 MB, 1,027 MB with the slack; the run
// peaks at 848 MB resident.
TaskEstimate estimate_task_graph(const Graph& g, const Plan& plan, const TaskEstimateOptions& options) {
  const auto& mesh = plan.mesh;
  Context cx{g, plan, {}, g.topological_order(), {}, {}};
  cx.chunk_of_op.resize(g.op_count());
  cx.producers.resize(g.op_count());
  cx.consumers.resize(g.op_count());
  for (OpId op = 0; op < g.op_count(); ++op) {
    cx.chunk_of_op[op] = plan.chunk_of_layer[static_cast<std::size_t>(g.op(op).layer)];
    cx.producers[op] = g.producers(op);
    cx.consumers[op] = g.consumers(op);
  }

  const std::int64_t pp = std::max<std::int64_t>(plan.pp, 1);
  const bool one_replica = options.one_data_parallel_replica && plan.dp_axis >= 0 && mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size > 1;
  // Devices of one stage that get tasks, and the groups a collective over `axes` forms among them
  // (with one replica simulated, the dp axis contributes no members).
  const std::uint64_t replicas = one_replica ? u64(mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size) : 1;
  const std::uint64_t stage_devices = u64(mesh.device_count()) / u64(pp) / replicas;
  auto groups = [&](const AxisSet& axes) {
    std::uint64_t members = 1;
    for (int a : axes)
      if (!(one_replica && a == plan.dp_axis)) members *= u64(mesh.axes[static_cast<std::size_t>(a)].size);
    return stage_devices / std::max<std::uint64_t>(members, 1);
  };

  TaskEstimate e;
  std::uint64_t sends = 0;
  const std::uint64_t m = u64(plan.micro_batches);
  std::vector<std::map<AxisSet, double>> held(static_cast<std::size_t>(pp));
  auto add_collective = [&](const AxisSet& axes, std::uint64_t times) {
    accumulate(e.tasks, groups(axes), times);
    accumulate(e.queue_entries, stage_devices, times);  // the groups of one stage cover its devices once
  };
  for (std::int64_t c = 0; c < plan.chunks(); ++c) {
    const ChunkItems items = count_chunk(cx, static_cast<std::int32_t>(c));
    for (const auto* prog : {&items.fwd, &items.bwd}) {
      for (const Item& it : *prog) {
        if (it.kind == ItemKind::Collective) {
          add_collective(it.axes, m);
        } else {
          accumulate(e.tasks, stage_devices, m);
          accumulate(e.queue_entries, stage_devices, m);
          if (it.kind == ItemKind::Send) accumulate(sends, stage_devices, m);
        }
      }
    }
    // Gradient buckets (lower.cpp's run_unit): reduced after the last micro-batch's backward, or
    // after every one under ZeRO-2/3; with overlap a bucket leaves once it holds grad_bucket_bytes.
    const std::uint64_t sync_units = plan.zero >= 2 ? m : 1;
    std::map<AxisSet, double> bucket;
    std::vector<AxisSet> emitted;
    for (const Item& it : items.bwd) {
      for (const auto& gr : it.grads) bucket[gr.axes] += gr.bytes;
      if (plan.overlap_grad_reduce)
        for (auto& [axes, bytes] : bucket)
          if (bytes >= plan.grad_bucket_bytes) {
            emitted.push_back(axes);
            bytes = 0;
          }
    }
    if (plan.overlap_grad_reduce) {
      for (const auto& [axes, bytes] : bucket)
        if (bytes > 0) emitted.push_back(axes);
      for (const auto& axes : emitted) add_collective(axes, sync_units);
    } else {
      // Every unit but the last micro-batch's (ZeRO-2/3 only) reduces at its end; the last
      // micro-batch's gradients wait for the stage's whole backward, one bucket per axis set.
      for (const auto& [axes, bytes] : bucket)
        if (bytes > 0) add_collective(axes, sync_units - 1);
      auto& stage_held = held[static_cast<std::size_t>(c % pp)];
      for (const auto& [axes, bytes] : bucket) stage_held[axes] += bytes;
      if (c == c % pp)  // the stage's first chunk: its backward is the stage's last
        for (const auto& [axes, bytes] : stage_held)
          if (bytes > 0) add_collective(axes, 1);
    }
  }

  // A tied weight's gradient: one all-reduce per device of the first stage holding it, over the
  // stages holding it.
  std::map<std::string, std::set<std::int64_t>> tied;
  for (const auto& sw : strategies::stage_weights(g, plan))
    if (sw.shared_across_stages) tied[sw.weight->name].insert(sw.stage);
  for (const auto& [name, stages] : tied) {
    (void)name;
    accumulate(e.tasks, stage_devices, 1);
    accumulate(e.queue_entries, stage_devices, stages.size());
  }
  // The optimizer step on every device, then (ZeRO 1–2) the parameter all-gather over the data axes.
  accumulate(e.tasks, stage_devices, u64(pp));
  accumulate(e.queue_entries, stage_devices, u64(pp));
  AxisSet data_axes;
  for (int a : {plan.dp_axis, plan.ep_axis})
    if (a >= 0 && mesh.axes[static_cast<std::size_t>(a)].size > 1) data_axes.push_back(a);
  std::sort(data_axes.begin(), data_axes.end());
  if (plan.zero >= 1 && plan.zero < 3 && !data_axes.empty()) add_collective(data_axes, u64(pp));

  // Each queue entry waits on the previous task of its device stream (a collective on each member's);
  // each receive on its send.
  e.dependencies = add(e.queue_entries, sends);
  auto phase = [&](const PhaseBytes& p) {
    std::uint64_t bytes = 0;
    accumulate(bytes, e.tasks, p.per_task);
    accumulate(bytes, e.queue_entries, p.per_queue_entry);
    accumulate(bytes, e.dependencies, p.per_dependency);
    return bytes;
  };
  const std::uint64_t peak = std::max(phase(kLoweringBytes), phase(kEngineBytes));
  e.memory_bytes = add(mul(peak / kMemorySlackDenominator, kMemorySlackNumerator),
                       peak % kMemorySlackDenominator * kMemorySlackNumerator / kMemorySlackDenominator);
  return e;
}

}  // namespace parasim::sim
