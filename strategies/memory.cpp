#include "strategies/memory.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/error.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/schedule.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::strategies {
namespace {

double dtype_bytes(models::DType t) { return static_cast<double>(models::bytes_of(t)); }

// Saved-for-backward bytes of one graph layer on one device for one micro-batch, each saved tensor
// counted once, sizes in the layout of the operator that keeps it.
double graph_layer_saved_bytes(const models::Graph& g, const Plan& plan, std::int32_t layer) {
  std::set<models::OpId> seen;
  double bytes = 0;
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    if (o.layer != layer || o.kind == models::OpKind::Input) continue;
    const auto& sh = plan.sharding[id];
    const auto producers = g.producers(id);
    for (int slot : o.saved_inputs) {
      const auto& in = o.inputs[static_cast<std::size_t>(slot)];
      if (seen.insert(producers[static_cast<std::size_t>(slot)]).second)
        bytes += local_elements(plan.mesh, sh, o, in) * dtype_bytes(in.dtype);
    }
    const double out_elements = local_elements(plan.mesh, sh, o, o.output);
    if (o.saved_output && seen.insert(id).second) bytes += out_elements * dtype_bytes(o.output.dtype);
    bytes += o.saved_mask_bytes_per_element * out_elements;
  }
  return bytes;
}

// Bytes of the tensors entering a layer from other layers (what full recompute keeps).
double graph_layer_input_bytes(const models::Graph& g, const Plan& plan, std::int32_t layer) {
  std::set<models::OpId> seen;
  double bytes = 0;
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    if (o.layer != layer) continue;
    const auto producers = g.producers(id);
    for (std::size_t slot = 0; slot < producers.size(); ++slot) {
      const models::OpId p = producers[slot];
      if (g.op(p).layer == layer || !seen.insert(p).second) continue;
      bytes += local_elements(plan.mesh, plan.sharding[id], o, o.inputs[slot]) * dtype_bytes(o.inputs[slot].dtype);
    }
  }
  return bytes;
}

bool is_block_layer(const models::Graph& g, std::int32_t layer) {
  return g.transformer() && layer >= 1 && layer <= g.transformer()->layers;
}

}  // namespace

BytesPerParameter bytes_per_parameter(models::DType precision, Optimizer optimizer) {
  const bool mixed = models::mixed_precision(precision);
  BytesPerParameter b;
  // fp8 training keeps bf16 weights and gradients (the fp8 casts are per GEMM).
  b.weights = mixed ? 2 : 4;
  b.gradients = b.weights;
  const double master = mixed ? 4 : 0;
  switch (optimizer) {
    case Optimizer::Adam:
    case Optimizer::AdamW: b.optimizer = master + 8; break;
    case Optimizer::SGDMomentum: b.optimizer = master + 4; break;
    case Optimizer::SGD:
    case Optimizer::Adafactor: b.optimizer = master; break;
  }
  return b;
}

BytesPerParameter bytes_per_parameter(const Plan& plan) {
  BytesPerParameter b = bytes_per_parameter(plan.precision, plan.optimizer);
  b.gradients = static_cast<double>(models::bytes_of(plan.grad_dtype));
  return b;
}

double korthikanti_layer_activation_bytes(std::int64_t s_, std::int64_t b_, std::int64_t h_, std::int64_t a_, std::int64_t t_,
                                          bool sequence_parallel, Recompute recompute) {
  const double s = static_cast<double>(s_), b = static_cast<double>(b_), h = static_cast<double>(h_), a = static_cast<double>(a_),
               t = static_cast<double>(t_);
  const double sbh = s * b * h;
  if (recompute == Recompute::Full) return sequence_parallel ? 2 * sbh / t : 2 * sbh;
  const double attention_core = recompute == Recompute::Selective ? 0.0 : 5 * a * s / h;
  if (sequence_parallel) return sbh / t * (34 + attention_core);
  return sbh * (10 + 24 / t + attention_core / t);
}

double layer_activation_bytes(const models::TransformerShape& shape, std::int64_t b_, std::int64_t t_, bool sequence_parallel,
                              Recompute recompute, models::DType precision, std::int64_t cp_, CpComm cp_comm, std::int64_t block,
                              double expert_imbalance) {
  const double s = static_cast<double>(shape.seq_len), b = static_cast<double>(b_), h = static_cast<double>(shape.hidden),
               a = static_cast<double>(shape.heads), g = static_cast<double>(shape.kv_heads), d = static_cast<double>(shape.head_dim),
               f = static_cast<double>(shape.ffn_hidden), t = static_cast<double>(t_);
  const double cp = static_cast<double>(cp_);
  const double tokens = s * b / cp;
  if (recompute == Recompute::Full) return 2 * tokens * h / (sequence_parallel ? t : 1);
  const bool fp8 = precision == models::DType::FP8;
  const double linear_input = fp8 ? 1 : 2;  // bytes per element a linear layer saves of its input
  const double masks = shape.dropout ? 2 * h : 0;
  const double replicated = 4 * h + linear_input * h + linear_input * h + masks;
  const double u = static_cast<double>(shape.effective_v_head_dim()), rope = static_cast<double>(shape.rope_head_dim);
  const bool mla = shape.kv_lora_rank > 0;
  const double key_value = mla ? 2 * a * (d - rope + u) : 2 * g * d + 2 * g * u;
  double attention = 2 * a * d + key_value + 2 * a * u + (fp8 ? a * u : 0);
  if (shape.qk_norm) attention += 2 * a * d + 2 * g * d;
  if (shape.attention == models::AttentionKind::Eager) attention += recompute == Recompute::Selective ? 0 : 5 * a * s;
  else attention += 4 * a;
  double latents = 0;  // per tensor-parallel rank, whole
  if (mla) {
    const double l = static_cast<double>(shape.kv_lora_rank), m = static_cast<double>(shape.q_lora_rank);
    latents = 2 * (l + rope) + linear_input * l + (m > 0 ? 2 * m + linear_input * m : 0);
  }
  const double swiglu = 4 + linear_input;  // per width element: gate and up outputs, and their product
  const double internals = (shape.mlp == models::MlpKind::SwiGLU ? swiglu : 2 + linear_input) * f;
  double mlp = internals;
  if (shape.moe_block(block)) {
    const double k = static_cast<double>(shape.experts_per_token), e = static_cast<double>(shape.experts);
    mlp = expert_imbalance * k * (4 * h + swiglu * static_cast<double>(shape.effective_moe_ffn_hidden())) + 2 * e;
    if (shape.shared_ffn_hidden > 0) mlp += swiglu * static_cast<double>(shape.shared_ffn_hidden) + (shape.shared_expert_gate ? 2 * h + 2 : 0);
  }
  const double gathered_kv = cp_ > 1 && cp_comm == CpComm::AllGather ? key_value * (cp - 1) : 0;
  return tokens * (replicated / (sequence_parallel ? t : 1) + latents + (attention + mlp + gathered_kv) / t);
}

double zero3_gathered_bytes(const models::Graph& g, const Plan& plan) {
  if (plan.zero < 3) return 0;
  const Implementation& impl = plan.implementation;
  const double bytes = static_cast<double>(models::bytes_of(models::weight_dtype(plan.precision)));
  // Per layer: its gather units' elements (as sim/work/chunk_program.cpp, append_units, forms them).
  std::map<std::int32_t, std::map<std::string, double>> units;  // layer → unit name → elements
  for (const StageWeight& sw : stage_weights(g, plan)) {
    if (sw.local_elements < impl.persistence_elements) continue;
    const auto& op = g.op(sw.op);
    const std::string unit = impl.gather_unit == GatherUnit::Layer ? std::string() : impl.gather_unit == GatherUnit::Module ? op.name : sw.weight->name;
    units[op.layer][unit] += sw.local_elements;
  }
  double layer = 0, unit = 0;
  for (const auto& [l, by_unit] : units) {
    double sum = 0;
    for (const auto& [name, elements] : by_unit) {
      sum += elements;
      unit = std::max(unit, elements);
    }
    layer = std::max(layer, sum);
  }
  if (impl.synchronous) return layer * bytes;
  // Prefetched beyond the layer: at least prefetch_units units, or up to prefetch_elements.
  const double ahead = std::max(static_cast<double>(impl.prefetch_units) * unit, std::min(impl.prefetch_elements, layer));
  return (layer + ahead) * bytes;
}

std::vector<StageMemory> memory_per_stage(const models::Graph& g, const Plan& plan) {
  const BytesPerParameter bpp = bytes_per_parameter(plan);
  const auto layer_count = static_cast<std::int32_t>(g.layers().size());
  const auto chunks = plan.chunks();

  // Per chunk: parameters (local, and by ZeRO divisor) and activations for one micro-batch.
  std::vector<double> chunk_weights(static_cast<std::size_t>(chunks), 0), chunk_grads(chunk_weights), chunk_opt(chunk_weights),
      chunk_params(chunk_weights), chunk_act(chunk_weights);
  std::vector<double> layer_full_act(static_cast<std::size_t>(layer_count), 0);
  double largest_layer_weight_bytes = 0;
  std::vector<double> layer_weight_bytes(static_cast<std::size_t>(layer_count), 0);

  for (const StageWeight& sw : stage_weights(g, plan)) {
    const auto chunk = static_cast<std::size_t>(sw.chunk);
    const double elements = sw.local_elements;
    chunk_params[chunk] += elements;
    chunk_weights[chunk] += elements * bpp.weights / (plan.zero >= 3 ? sw.zero_replicas : 1);
    if (plan.precision == models::DType::FP8 && models::fp8_gemm(g.op(sw.op).kind))
      chunk_weights[chunk] += elements * kFp8WeightCopyBytes;
    chunk_grads[chunk] += elements * bpp.gradients / (plan.zero >= 2 ? sw.zero_replicas : 1);
    chunk_opt[chunk] += elements * bpp.optimizer / (plan.zero >= 1 ? sw.zero_replicas : 1);
    layer_weight_bytes[static_cast<std::size_t>(g.op(sw.op).layer)] += elements * bpp.weights;
  }
  for (double w : layer_weight_bytes) largest_layer_weight_bytes = std::max(largest_layer_weight_bytes, w);

  const auto& t = g.transformer();
  const std::int64_t tp = plan.tp();
  for (std::int32_t l = 0; l < layer_count; ++l) {
    const auto chunk = static_cast<std::size_t>(plan.chunk_of_layer[static_cast<std::size_t>(l)]);
    double kept = 0, full = 0;
    // Megatron's formula holds for the knobs' shardings; an annotated plan's are read off the graph.
    if (is_block_layer(g, l) && !plan.annotated) {
      const std::int64_t block = l - 1;
      kept = layer_activation_bytes(*t, plan.micro_batch, tp, plan.sequence_parallel, plan.recompute, plan.precision, plan.cp(), plan.cp_comm,
                                    block, plan.expert_imbalance);
      full = layer_activation_bytes(*t, plan.micro_batch, tp, plan.sequence_parallel,
                                    plan.recompute == Recompute::Full ? Recompute::None : plan.recompute, plan.precision, plan.cp(),
                                    plan.cp_comm, block, plan.expert_imbalance);
    } else {
      full = graph_layer_saved_bytes(g, plan, l);
      kept = plan.recompute == Recompute::Full ? graph_layer_input_bytes(g, plan, l) : full;
    }
    chunk_act[chunk] += kept;
    layer_full_act[static_cast<std::size_t>(l)] = full;
  }

  const double gathered = zero3_gathered_bytes(g, plan);
  std::vector<StageMemory> out;
  for (std::int64_t stage = 0; stage < plan.pp; ++stage) {
    StageMemory sm;
    sm.stage = stage;
    const auto order = pipeline_order(plan.schedule, plan.pp, plan.virtual_stages, plan.micro_batches, stage);
    sm.in_flight = peak_in_flight(order);
    double live = 0, peak = 0;
    for (const auto& step : order) {
      live += (step.forward ? 1 : -1) * chunk_act[static_cast<std::size_t>(step.chunk)];
      peak = std::max(peak, live);
    }
    double largest_recompute = 0;
    for (std::int64_t k = 0; k < plan.virtual_stages; ++k) {
      const auto c = static_cast<std::size_t>(stage + k * plan.pp);
      sm.parameters += chunk_params[c];
      sm.memory.weights_bytes += chunk_weights[c];
      sm.memory.gradients_bytes += chunk_grads[c];
      sm.memory.optimizer_bytes += chunk_opt[c];
      for (std::int32_t l = 0; l < layer_count; ++l)
        if (static_cast<std::size_t>(plan.chunk_of_layer[static_cast<std::size_t>(l)]) == c)
          largest_recompute = std::max(largest_recompute, layer_full_act[static_cast<std::size_t>(l)]);
    }
    // With full recompute, backward rematerialises one layer's activations at a time on top.
    sm.memory.activations_bytes = peak + (plan.recompute == Recompute::Full ? largest_recompute : 0);

    // Buffers: double-buffered gradient buckets when gradients are reduced over data parallelism;
    // ZeRO-3 gathers the next layer's weights while one is in use (kZero3PrefetchLayers ahead); sequence parallel all-gathers the
    // layer input (s·b·h elements) before the column-parallel GEMMs.
    if (plan.dp() > 1) sm.memory.buffers_bytes += 2 * std::min(plan.grad_bucket_bytes, sm.memory.gradients_bytes * (plan.zero >= 2 ? plan.dp() : 1));
    if (plan.zero >= 3) {
      sm.memory.buffers_bytes += gathered;
      // A per-layer reduce-scatter (FSDP2) holds the layer's unsharded gradients until it runs.
      if (plan.grad_bucket_bytes <= 0) sm.memory.buffers_bytes += 2 * largest_layer_weight_bytes * bpp.gradients / bpp.weights;
    }
    if (t && plan.sequence_parallel)
      sm.memory.buffers_bytes +=
          2 * static_cast<double>(t->seq_len / plan.cp() * plan.micro_batch * t->hidden) * dtype_bytes(plan.precision);
    out.push_back(sm);
  }
  return out;
}

}  // namespace parasim::strategies
