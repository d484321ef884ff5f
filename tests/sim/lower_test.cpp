// The lowering (sim/lower): the collectives a plan's shardings imply, counted and sized by hand on a
// small GPT, and the pipeline sends between stages.
//
// The model (small_gpt.hpp): 2 blocks, hidden h 64, 4 heads, MLP 256, vocabulary 128, sequence s 32,
// tied embeddings, fp16. Parameters: embeddings v·h = 8192; a block 12h² + 13h = 49,984; the final
// norm 2h = 128; 108,288 in all.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "small_gpt.hpp"
#include "models/transformer.hpp"
#include "sim/engine/fifo_engine.hpp"
#include "sim/lower.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using sim::Category;
using sim::CollectiveKind;
using sim::TaskId;
using strategies::PlanSpec;
using strategies::Recompute;

namespace {

using testing::Coll;
using testing::collectives;
using testing::contains;
using Lowered = testing::LoweredGpt;

/// The small GPT (small_gpt.hpp) with eager attention: the tests below count the eager attention core.
Lowered lowered(std::int64_t layers, std::int64_t micro_batch, std::int64_t global_batch, const PlanSpec& spec, std::int64_t devices,
                std::optional<models::DType> grad_precision = std::nullopt) {
  return testing::lower_small_gpt(layers, micro_batch, global_batch, spec, devices, models::AttentionKind::Eager, grad_precision);
}

/// Tensor-parallel collectives of one kind for one micro-batch whose label names an op of `prefix`.
std::int64_t tensor_comm(const std::vector<Coll>& cs, CollectiveKind kind, std::int32_t mb, const std::string& prefix) {
  return std::count_if(cs.begin(), cs.end(), [&](const Coll& c) {
    return c.category == Category::TensorComm && c.kind == kind && c.micro_batch == mb && contains(c.label, prefix);
  });
}

std::int64_t count(const std::vector<Coll>& cs, Category category) {
  return std::count_if(cs.begin(), cs.end(), [&](const Coll& c) { return c.category == category; });
}

}  // namespace

TEST_CASE("lower: tensor parallel — two all-reduces forward and two backward per layer and micro-batch", "[sim][lower]") {
  const auto recompute = GENERATE(Recompute::None, Recompute::Selective, Recompute::Full);
  INFO("recompute " << strategies::to_string(recompute));
  // tp 2 on 2 devices, micro-batch 2, global batch 4: 2 micro-batches.
  PlanSpec spec;
  spec.tp = 2;
  spec.recompute = recompute;
  const Lowered l = lowered(2, 2, 4, spec, 2);
  const auto cs = collectives(l.step.tasks);
  // Megatron (Shoeybi et al. 2019, fig. 4): forward, the row-parallel o_proj and fc2 outputs are
  // partial sums, all-reduced (g and ḡ); backward, the column-parallel Q/K/V and fc1 input gradients are
  // partial sums, all-reduced into the norms' outputs. Full recompute repeats the forward's two.
  // Selective recompute repeats only the attention core, which communicates nothing.
  const std::int64_t per_layer = recompute == Recompute::Full ? 6 : 4;
  for (std::int32_t mb = 0; mb < 2; ++mb)
    for (const char* layer : {"layers.0.", "layers.1."}) {
      INFO("micro-batch " << mb << ", " << layer);
      CHECK(tensor_comm(cs, CollectiveKind::AllReduce, mb, layer) == per_layer);
    }
  // Per micro-batch also the vocabulary-parallel embedding's output (forward) and the LM head's input
  // gradient (backward): 2 layers · per_layer + 2.
  for (std::int32_t mb = 0; mb < 2; ++mb) CHECK(tensor_comm(cs, CollectiveKind::AllReduce, mb, "") == 2 * per_layer + 2);
  CHECK(tensor_comm(cs, CollectiveKind::AllReduce, 0, "embed_dropout") == 1);
  CHECK(tensor_comm(cs, CollectiveKind::AllReduce, 0, "gradient of final_norm") == 1);
  for (const auto& c : cs) {
    if (c.category != Category::TensorComm) continue;
    INFO(c.label);
    // Only all-reduces, over the tp group {0, 1}, on the tensor-parallel stream; each of a [b, s, h]
    // activation: b·s·h·2 = 2 · 32 · 64 · 2 = 8192 bytes.
    CHECK(c.kind == CollectiveKind::AllReduce);
    CHECK(c.group == std::vector<std::int64_t>{0, 1});
    CHECK(c.stream == sim::stream_index(sim::Stream::TensorComm));
    CHECK(c.bytes == 8192);
  }
}

TEST_CASE("lower: sequence parallel turns each all-reduce into a reduce-scatter + all-gather pair", "[sim][lower]") {
  const bool full = GENERATE(false, true);
  INFO("full recompute " << full);
  PlanSpec spec;
  spec.tp = 2;
  spec.sequence_parallel = true;
  if (full) spec.recompute = Recompute::Full;
  const Lowered l = lowered(2, 2, 4, spec, 2);
  const auto cs = collectives(l.step.tasks);
  // Korthikanti et al. 2022 §4.2.2: forward, all-gather (g) before Q/K/V and fc1, reduce-scatter (ḡ)
  // after o_proj and fc2; backward the conjugates: a reduce-scatter into each norm's output gradient
  // and an all-gather of the dropout's gradient before o_proj and fc2. Per layer and micro-batch
  // 2 + 2 each way (+ 2 + 2 with full recompute), and no tensor-parallel all-reduce.
  const std::int64_t per_kind = full ? 6 : 4;
  for (std::int32_t mb = 0; mb < 2; ++mb)
    for (const char* layer : {"layers.0.", "layers.1."}) {
      INFO("micro-batch " << mb << ", " << layer);
      CHECK(tensor_comm(cs, CollectiveKind::ReduceScatter, mb, layer) == per_kind);
      CHECK(tensor_comm(cs, CollectiveKind::AllGather, mb, layer) == per_kind);
      CHECK(tensor_comm(cs, CollectiveKind::AllReduce, mb, layer) == 0);
    }
  for (const auto& c : cs) {
    if (c.category != Category::TensorComm) continue;
    INFO(c.label);
    // All-gather: the gathered [b, s, h] on each rank; reduce-scatter: the [b, s, h] input on each rank.
    // Both 2 · 32 · 64 · 2 = 8192 bytes.
    CHECK(c.bytes == 8192);
  }
  // The norms' weights see only a slice of the sequence: their gradients are partial sums over tp,
  // reduced once per step, after the last micro-batch, on the tensor stream: per layer 2 norms · 2h =
  // 256 parameters, 2 layers and the final norm (2h): 640 parameters · 2 B = 1280 B, one bucket.
  // The row-parallel biases (o_proj, fc2) are not among them: the lowering all-gathers their output
  // gradient (the conjugate of the forward reduce-scatter) before their backward, so each rank sums
  // the whole sequence. (Megatron-LM instead reduces them from the sequence-sharded gradient, 2 · h
  // more parameters per layer; the result is the same.)
  std::vector<Coll> grads;
  for (const auto& c : cs)
    if (c.category == Category::GradientComm) grads.push_back(c);
  REQUIRE(grads.size() == 1);
  CHECK(grads[0].kind == CollectiveKind::AllReduce);
  CHECK(grads[0].bytes == 1280);
  CHECK(grads[0].micro_batch == 1);
  CHECK(grads[0].stream == sim::stream_index(sim::Stream::TensorComm));
}

TEST_CASE("lower: tp comm overlap runs each all-gather under the GEMMs and leaves one reduce-scatter chunk exposed", "[sim][lower]") {
  // The case above with plan.tp_comm_overlap. Each all-gather becomes a ring exchange whose GEMMs
  // start on the device's own chunk: the whole 8192 bytes run under them, none before (4 per layer
  // and micro-batch, as without overlap). Each reduce-scatter is pipelined in 4 chunks (Transformer
  // Engine's default split): 3/4 · 8192 = 6144 bytes under the GEMMs that produce it, the last 2048
  // after them (2 · 4 = 8 pieces). The bytes of every kind are unchanged.
  PlanSpec spec;
  spec.tp = 2;
  spec.sequence_parallel = true;
  const Lowered plain = lowered(2, 2, 4, spec, 2);
  spec.tp_comm_overlap = true;
  const Lowered overlapped = lowered(2, 2, 4, spec, 2);
  const auto cs = collectives(overlapped.step.tasks);
  for (std::int32_t mb = 0; mb < 2; ++mb)
    for (const char* layer : {"layers.0.", "layers.1."}) {
      INFO("micro-batch " << mb << ", " << layer);
      CHECK(tensor_comm(cs, CollectiveKind::ReduceScatter, mb, layer) == 8);
      CHECK(tensor_comm(cs, CollectiveKind::AllGather, mb, layer) == 4);
    }
  double bytes[2] = {0, 0}, plain_bytes[2] = {0, 0};
  for (const auto& c : cs) {
    if (c.category != Category::TensorComm || c.kind == CollectiveKind::AllReduce) continue;
    INFO(c.label);
    // The vocabulary-parallel embedding's reduce-scatter follows no GEMM: it stays whole.
    if (contains(c.label, "embed_dropout")) {
      CHECK(c.bytes == 8192);
      bytes[1] += c.bytes;
      continue;
    }
    const bool gather = c.kind == CollectiveKind::AllGather;
    if (gather) CHECK(c.bytes == 8192);
    if (gather) CHECK(contains(c.label, "(under the GEMMs)"));
    if (!gather) CHECK((contains(c.label, "(last chunk)") ? c.bytes == 2048 : c.bytes == 6144));
    bytes[gather ? 0 : 1] += c.bytes;
  }
  for (const auto& c : collectives(plain.step.tasks))
    if (c.category == Category::TensorComm && c.kind != CollectiveKind::AllReduce)
      plain_bytes[c.kind == CollectiveKind::AllGather ? 0 : 1] += c.bytes;
  CHECK(bytes[0] == plain_bytes[0]);
  CHECK(bytes[1] == plain_bytes[1]);
  // Hidden chunks shorten the step: the same work, less of the tensor communication on the path
  // (links of 1 GB/s, so that an 8 KiB collective takes longer than the small GEMMs).
  const auto cluster = testing::flat_cluster(2, 1e9);
  const auto profile = testing::flat_profile(1e12, 1e12);
  const double t_plain = sim::simulate(plain.graph, plain.plan, cluster, profile).result.step_time_s;
  const double t_overlapped = sim::simulate(overlapped.graph, overlapped.plan, cluster, profile).result.step_time_s;
  CHECK(t_overlapped < t_plain);
}

TEST_CASE("plan: tp comm overlap needs sequence parallelism", "[sim][lower]") {
  models::TransformerConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = 2;
  const models::Graph g = models::build_transformer(c);
  strategies::TrainingSpec training;
  training.global_batch = 2;
  training.micro_batch = 2;
  PlanSpec spec;
  spec.tp = 2;
  spec.tp_comm_overlap = true;
  const auto problem = strategies::check_plan(g, training, spec, 2);
  REQUIRE(problem);
  CHECK(problem->pointer == "/plan/tp_comm_overlap");
}

TEST_CASE("lower: tensor parallel without sequence parallel reduces no weight gradient", "[sim][lower]") {
  // tp 2, dp 1, pp 1: every weight gradient is complete on each rank — column-parallel weights and
  // biases and row-parallel weights are sharded; a row-parallel bias (o_proj, fc2) is added after the
  // all-reduce, so its gradient is the sum of a replicated output gradient, identical on both ranks
  // (Megatron's RowParallelLinear reduces nothing for it without sequence parallel); the norms see
  // replicated inputs. So the step has no gradient communication at all.
  PlanSpec spec;
  spec.tp = 2;
  const Lowered l = lowered(2, 2, 4, spec, 2);
  const auto cs = collectives(l.step.tasks);
  std::string found;
  for (const auto& c : cs)
    if (c.category == Category::GradientComm)
      found += c.label + " (" + std::string(sim::to_string(c.kind)) + ", " + std::to_string(c.bytes) + " B); ";
  INFO("gradient communication: " << found);
  CHECK(count(cs, Category::GradientComm) == 0);
}

TEST_CASE("lower: data parallel reduces the gradients once per bucket after the last micro-batch", "[sim][lower]") {
  // dp 2 on 2 devices, micro-batch 1, global batch 4: 2 micro-batches. All 108,288 fp16 gradients,
  // 216,576 B, fit one 25 MiB bucket.
  const int zero = GENERATE(0, 1, 2);
  INFO("zero " << zero);
  PlanSpec spec;
  spec.zero = zero;
  const Lowered l = lowered(2, 1, 4, spec, 2);
  REQUIRE(l.graph.param_count() == 108'288);
  const auto cs = collectives(l.step.tasks);
  std::vector<Coll> grads;
  for (const auto& c : cs)
    if (c.category == Category::GradientComm) grads.push_back(c);
  // One reduction (a reduce-scatter under ZeRO 1 and 2, where each rank keeps its shard) after
  // micro-batch 1's backward, on the data stream — under ZeRO-2, which keeps only a gradient shard,
  // after every micro-batch's backward (as DeepSpeed does); ZeRO 1–2 then all-gather the updated
  // parameters (216,576 B gathered) after the optimizer step.
  const std::size_t reductions = zero >= 2 ? 2 : 1;
  REQUIRE(grads.size() == reductions + (zero >= 1 ? 1u : 0u));
  for (std::size_t i = 0; i < reductions; ++i) {
    CHECK(grads[i].kind == (zero >= 1 ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce));
    CHECK(grads[i].bytes == 216'576);
    CHECK(grads[i].micro_batch == static_cast<std::int32_t>(reductions == 2 ? i : 1));
    CHECK(grads[i].stream == sim::stream_index(sim::Stream::DataComm));
    CHECK(grads[i].group == std::vector<std::int64_t>{0, 1});
  }
  if (zero >= 1) {
    CHECK(grads[reductions].kind == CollectiveKind::AllGather);
    CHECK(grads[reductions].bytes == 216'576);
    CHECK(grads[reductions].label == "parameter all-gather");
  }
  CHECK(count(cs, Category::TensorComm) == 0);
  CHECK(count(cs, Category::PipelineComm) == 0);
}

TEST_CASE("lower: gradient buckets smaller than the model overlap the last backward", "[sim][lower]") {
  // dp 2, buckets of 0.05 MiB = 52,428.8 B; the gradients are 216,576 B, a block's alone 99,968 B.
  // PyTorch DDP (Li et al., "PyTorch Distributed", VLDB 2020, §3.2.3: gradient bucketing overlapped
  // with the backward) launches a bucket as soon as it fills during the backward: there are several
  // buckets, and the first starts while the last micro-batch's backward still computes.
  PlanSpec spec;
  spec.grad_bucket_mb = 0.05;
  const Lowered l = lowered(2, 1, 4, spec, 2);
  const auto cs = collectives(l.step.tasks);
  std::vector<Coll> grads;
  for (const auto& c : cs)
    if (c.category == Category::GradientComm) grads.push_back(c);
  CHECK(grads.size() >= 2);
  const auto& g = l.step.tasks;
  std::vector<Picoseconds> durations;
  for (const auto& c : sim::estimate_collectives(g, testing::flat_cluster(2, 1e9, 1e-6))) durations.push_back(c.time);
  const sim::Timeline tl = sim::simulate_fifo(g, durations);
  std::int64_t last_backward_end = 0, first_bucket_start = INT64_MAX;
  for (TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] == sim::TaskKind::Compute && g.category[t] == Category::Backward)
      last_backward_end = std::max(last_backward_end, tl.start_ps[t] + g.duration_ps[t]);
  }
  for (const auto& c : grads) first_bucket_start = std::min(first_bucket_start, tl.start_ps[c.task]);
  CHECK(first_bucket_start < last_backward_end);
}

TEST_CASE("lower: ZeRO-3 gathers each layer's weights before its forward and its backward", "[sim][lower]") {
  PlanSpec spec;
  spec.zero = 3;
  const Lowered l = lowered(2, 1, 4, spec, 2);
  const auto cs = collectives(l.step.tasks);
  std::int64_t gathers = 0;
  for (const auto& c : cs) {
    if (c.kind != CollectiveKind::AllGather || !contains(c.label, " weights")) continue;
    ++gathers;
    CHECK(c.category == Category::GradientComm);
    CHECK(c.stream == sim::stream_index(sim::Stream::DataComm));
    // A block's weights, gathered whole on each rank: 49,984 · 2 B = 99,968 B.
    if (contains(c.label, "layers.1 ")) CHECK(c.bytes == 99'968);
  }
  // 4 graph layers (embeddings, 2 blocks, head) · (forward + backward) · 2 micro-batches = 16.
  CHECK(gathers == 16);
  // No parameter all-gather after the step: ZeRO-3 keeps only the shards.
  CHECK(std::none_of(cs.begin(), cs.end(), [](const Coll& c) { return c.label == "parameter all-gather"; }));
}

TEST_CASE("lower: a pipeline sends activations forward and gradients back between stages", "[sim][lower][pipeline]") {
  SECTION("pp 2") {
    // 2 blocks on 2 stages, micro-batch 1, 2 micro-batches. The only tensor crossing the cut is block 0's
    // output x [b, s, h]: 1 · 32 · 64 · 2 = 4096 B, sent forward by device 0 and its gradient back by 1.
    PlanSpec spec;
    spec.pp = 2;
    const Lowered l = lowered(2, 1, 2, spec, 2);
    const auto cs = collectives(l.step.tasks);
    std::map<std::int64_t, std::int64_t> sends_from;
    for (const auto& c : cs) {
      if (c.kind != CollectiveKind::SendRecv) continue;
      INFO(c.label);
      CHECK(c.category == Category::PipelineComm);
      CHECK(c.stream == sim::stream_index(sim::Stream::Pipeline));
      CHECK(c.group == std::vector<std::int64_t>{0, 1});
      CHECK(c.bytes == 4096);
      ++sends_from[c.root];
    }
    CHECK(sends_from == std::map<std::int64_t, std::int64_t>{{0, 2}, {1, 2}});
    CHECK(count(cs, Category::PipelineComm) == 4);
  }
  SECTION("pp 2 × tp 2: each tensor-parallel rank sends half, the receivers all-gather") {
    // Mesh {pp 2, dp 1, tp 2}: stage 0 is devices {0, 1}, stage 1 {2, 3}; rank r sends to its peer r + 2.
    // Megatron's scatter/gather: each sends 4096 / 2 = 2048 B, and the receiving stage all-gathers
    // the 4096 B over its tp group.
    PlanSpec spec;
    spec.pp = 2;
    spec.tp = 2;
    const Lowered l = lowered(2, 1, 2, spec, 4);
    const auto cs = collectives(l.step.tasks);
    std::int64_t sends = 0, gathers = 0;
    for (const auto& c : cs) {
      if (c.category != Category::PipelineComm) continue;
      INFO(c.label);
      if (c.kind == CollectiveKind::SendRecv) {
        ++sends;
        CHECK(c.bytes == 2048);
        CHECK((c.group == std::vector<std::int64_t>{0, 2} || c.group == std::vector<std::int64_t>{1, 3}));
      } else {
        ++gathers;
        CHECK(c.kind == CollectiveKind::AllGather);
        CHECK(c.bytes == 4096);
        CHECK((c.group == std::vector<std::int64_t>{0, 1} || c.group == std::vector<std::int64_t>{2, 3}));
      }
    }
    // 2 micro-batches · 2 directions · 2 ranks = 8 sends; one all-gather per micro-batch and direction: 4.
    CHECK(sends == 8);
    CHECK(gathers == 4);
  }
}

TEST_CASE("lower: with pipeline parallelism the tied embedding's gradients are summed across first and last stage",
          "[sim][lower][pipeline]") {
  // Megatron-LM keeps a copy of the word embeddings on the last stage for the tied LM head and
  // all-reduces the two copies' gradients over the embedding group (first and last stage) once per
  // step (_allreduce_word_embedding_grads). pp 2 on 2 devices: one all-reduce over {0, 1} of
  // v·h·2 = 128 · 64 · 2 = 16,384 B.
  PlanSpec spec;
  spec.pp = 2;
  const Lowered l = lowered(2, 1, 2, spec, 2);
  const auto cs = collectives(l.step.tasks);
  const auto embedding_reductions = std::count_if(cs.begin(), cs.end(), [](const Coll& c) {
    return c.kind == CollectiveKind::AllReduce && c.group == std::vector<std::int64_t>{0, 1} && c.bytes == 16'384;
  });
  CHECK(embedding_reductions == 1);
}

TEST_CASE("lower: selective recompute's time shows as recompute", "[sim][lower]") {
  // Selective recompute (Korthikanti et al. 2022 §5) reruns each layer's attention core before its
  // backward; the Result's breakdown has a Recompute category, as full recompute uses. Small GPT on one
  // flat device (every kernel at 1e12 FLOP/s), micro-batch 1, one micro-batch. Per layer the core's
  // forward is: scores 2·b·a·s·s·d = 2 · 4 · 32 · 32 · 16 = 131,072; softmax 5 · b·a·s² = 20,480; its
  // dropout 1 · 4096; context 131,072: 286,720 FLOPs, 2 layers: 573,440 FLOPs = 0.57344 µs.
  PlanSpec spec;
  spec.recompute = Recompute::Selective;
  spec.grad_accumulation = strategies::GradAccumulation::Fused;
  const Lowered l = lowered(2, 1, 1, spec, 1);
  const auto s = sim::simulate(l.graph, l.plan, testing::flat_cluster(1), testing::flat_profile(1e12, 1e12));
  // The step counts those FLOPs as recomputation (hardware − model FLOPs) ...
  CHECK(s.result.hardware_flops_per_step - s.result.model_flops_per_step == 573'440.0);
  // ... and the time they take should show under Recompute, not inside Backward.
  CHECK_THAT(s.result.per_device[0].breakdown.seconds[static_cast<std::size_t>(Category::Recompute)],
             Catch::Matchers::WithinRel(573'440e-12, 1e-9));
}

TEST_CASE("simulate: a progress sink hears each phase begin and end, and the engine's task count", "[sim][progress]") {
  // The three phases of an analytical simulation, in order; the engine's phase counts the task
  // graph's tasks and its last update is all of them.
  struct Recorder final : ProgressSink {
    std::vector<std::string> events;
    std::size_t last = 0;
    void begin(std::string_view phase, std::size_t total) override { events.push_back("begin " + std::string(phase) + " " + std::to_string(total)); }
    void update(std::size_t done) override { last = done; }
    void end() override { events.push_back("end"); }
  };
  Recorder r;
  const Lowered l = lowered(2, 1, 1, PlanSpec{}, 1);
  const auto s = sim::simulate(l.graph, l.plan, testing::flat_cluster(1), testing::flat_profile(1e12, 1e12), sim::Backend::Analytical, {}, &r);
  const std::string tasks = std::to_string(s.step.tasks.task_count());
  CHECK(r.events == std::vector<std::string>{"begin lowering the plan to tasks 0", "end", "begin simulating tasks (analytical engine) " + tasks, "end",
                                             "begin summarising the step 0", "end"});
  CHECK(std::to_string(r.last) == tasks);
}

TEST_CASE("lower: ZeRO-3 gathers one layer ahead, in the order each pass uses the layers", "[sim][lower]") {
  // Small GPT, 3 blocks, dp 2, one micro-batch, under its default implementation (Megatron-Core,
  // whose ZeRO-3 is FSDP2: a layer per gather, one ahead): the graph's layers are embeddings,
  // layers.0–2 and head; without tensor parallelism each layer's forward (and backward) is one
  // compute task on each device. The forward uses the layers first to last, the backward last to
  // first. Each pass issues its first two gathers at once; the gather of its k-th layer (k ≥ 2) waits
  // until the device has finished its (k − 2)-th layer, so at most two layers' weights are gathered
  // at a time — what strategies/memory.cpp budgets (twice the largest layer) — and every layer waits
  // for its own gather. Each layer's gradients are reduce-scattered as its backward ends (FSDP2
  // reduce-scatters per unit), between the backward's gathers on the same stream.
  PlanSpec spec;
  spec.zero = 3;
  const Lowered l = lowered(3, 1, 2, spec, 2);
  const auto& g = l.step.tasks;
  const std::size_t streams = g.stream_count();
  const auto compute = g.queue_of(0 * streams + sim::stream_index(sim::Stream::Compute));
  std::vector<TaskId> data, buckets;
  for (const TaskId t : g.queue_of(0 * streams + sim::stream_index(sim::Stream::DataComm)))
    (contains(g.labels[g.label[t]], "all-gather") ? data : buckets).push_back(t);
  const std::vector<std::string> forward{"embeddings", "layers.0", "layers.1", "layers.2", "head"};
  const std::vector<std::string> backward(forward.rbegin(), forward.rend());
  // Device 0's data stream: the forward's five gathers and the backward's five; a reduce-scatter
  // after each of the backward's head, layers.2, layers.1 and layers.0 (the tied embeddings' gradient
  // is reduced at the step's end).
  REQUIRE(data.size() == 10);
  REQUIRE(buckets.size() == 4);
  REQUIRE(compute.size() == 11);  // 5 forward, 5 backward, the optimizer step
  auto depends_on = [&](TaskId t, TaskId on) {
    const auto deps = g.deps_of(t);
    return std::find(deps.begin(), deps.end(), on) != deps.end();
  };
  for (std::size_t pass = 0; pass < 2; ++pass) {
    const auto& order = pass == 0 ? forward : backward;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const TaskId gather = data[pass * 5 + k];
      const TaskId work = compute[pass * 5 + k];
      INFO("pass " << pass << ", layer " << order[k]);
      CHECK(g.labels[g.label[gather]] == "all-gather dp " + order[k] + " weights");
      CHECK(depends_on(work, gather));
      if (k < 2) CHECK(g.deps_of(gather).empty());
      else CHECK(depends_on(gather, compute[pass * 5 + k - 2]));
    }
  }
}

TEST_CASE("lower: every queue follows the task ids and the one-pass engine gives the event loop's timeline", "[sim][lower][engine]") {
  // Units are made in an order each stage's schedule follows, so every resource issues its tasks by
  // increasing id (TaskGraph::queues_follow_ids) and simulate_fifo takes one pass over the ids. Checked
  // for every schedule on pp 2 × dp 2 × tp 2 (8 devices; 4 blocks, 4 micro-batches, so interleaved
  // 1F1B with 2 chunks per stage is allowed) with ZeRO 1 and 3, against the event loop and the worklist.
  const auto schedule = GENERATE(strategies::Schedule::GPipe, strategies::Schedule::OneFOneB, strategies::Schedule::Interleaved1F1B);
  const int zero = GENERATE(1, 3);
  PlanSpec spec;
  spec.pp = 2;
  spec.tp = 2;
  spec.dp = 2;
  spec.zero = zero;
  spec.schedule = schedule;
  if (schedule == strategies::Schedule::Interleaved1F1B) spec.virtual_stages = 2;
  const Lowered l = lowered(4, 1, 8, spec, 8);
  const sim::TaskGraph& g = l.step.tasks;
  INFO("schedule " << static_cast<int>(schedule) << ", ZeRO " << zero << ", " << g.task_count() << " tasks");
  REQUIRE(g.queues_follow_ids);
  std::vector<Picoseconds> coll_ps;
  for (const auto& e : sim::estimate_collectives(g, testing::flat_cluster(8))) coll_ps.push_back(e.time);
  const sim::Timeline one_pass = sim::simulate_fifo(g, coll_ps);
  CHECK(one_pass == sim::simulate_fifo_events(g, coll_ps));
  sim::TaskGraph unordered = g;
  unordered.queues_follow_ids = false;
  CHECK(one_pass == sim::simulate_fifo(unordered, coll_ps));
}

TEST_CASE("lower: MoE token routing is an all-to-all over the expert axis on the expert stream", "[sim][lower]") {
  // The small GPT with 4 experts per layer on dp 2 × ep 2 (4 devices; experts sharded over ep): every
  // dispatch and combine is an all-to-all whose group varies along the expert axis only, timed as
  // expert communication on the expert stream — decided by the axis's role, not its name.
  models::TransformerConfig c;
  c.name = "small-moe";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.experts = 4;
  PlanSpec spec;
  spec.dp = 4;
  spec.ep = 2;
  c.batch = 4;
  strategies::TrainingSpec training;
  training.global_batch = 4;
  training.micro_batch = 1;
  const models::Graph graph = models::build_transformer(c);
  REQUIRE_FALSE(strategies::check_plan(graph, training, spec, 4));
  const strategies::Plan plan = strategies::make_plan(graph, training, spec, 4);
  REQUIRE(plan.mesh.axes[static_cast<std::size_t>(plan.ep_axis)].role == strategies::AxisRole::Expert);
  const sim::LoweredStep step = sim::lower(graph, plan, testing::flat_cluster(4), testing::flat_profile(1e12, 1e12));
  std::int64_t all_to_all = 0;
  for (const Coll& coll : collectives(step.tasks)) {
    if (coll.kind != CollectiveKind::AllToAll) continue;
    ++all_to_all;
    CHECK(coll.category == Category::ExpertComm);
    CHECK(coll.stream == sim::stream_index(sim::Stream::ExpertComm));
    // Device id = dp·2 + ep (ep innermost of the data axes): an expert group is two consecutive ids.
    CHECK(coll.group.size() == 2);
    CHECK(coll.group[1] == coll.group[0] + 1);
  }
  CHECK(all_to_all > 0);
}

TEST_CASE("lower: overlap_param_gather moves ZeRO-1's parameter all-gather ahead of the first forward", "[sim][lower]") {
  // dp 2, ZeRO-1, 2 micro-batches of 1. Megatron-LM's --overlap-param-gather: the updated shards are
  // gathered under the next step's first forward. One chunk holds all 108,288 parameters (216,576 B in
  // fp16) over 4 layers with weights (embeddings, 2 blocks, the final norm): a mean layer's share,
  // 216,576 / 4 = 54,144 B, ahead of the forward of micro-batch 0; the other 162,432 B before the
  // forward of micro-batch 1. Nothing is gathered at the step's end.
  PlanSpec spec;
  spec.zero = 1;
  spec.overlap_param_gather = true;
  const Lowered l = lowered(2, 1, 4, spec, 2);
  CHECK(contains(l.plan.description, "param gather overlap"));
  const auto cs = collectives(l.step.tasks);
  std::vector<Coll> ahead;
  for (const auto& c : cs)
    if (c.kind == CollectiveKind::AllGather && contains(c.label, "parameter all-gather")) ahead.push_back(c);
  REQUIRE(ahead.size() == 2);
  CHECK(ahead[0].label == "parameter all-gather (a layer's share, ahead of the forward)");
  CHECK(ahead[0].bytes == 54'144);
  CHECK(ahead[1].label == "parameter all-gather (under the first forward)");
  CHECK(ahead[1].bytes == 162'432);
  CHECK(ahead[0].group == std::vector<std::int64_t>{0, 1});

  // On a link of 1 GB/s the gathers are long against the compute: micro-batch 0's forward starts when
  // the first share has arrived, micro-batch 1's not before the rest has.
  const auto& g = l.step.tasks;
  std::vector<Picoseconds> durations;
  for (const auto& c : sim::estimate_collectives(g, testing::flat_cluster(2, 1e9, 1e-6))) durations.push_back(c.time);
  const sim::Timeline tl = sim::simulate_fifo(g, durations);
  const auto end_of = [&](TaskId t) { return tl.start_ps[t] + sim::task_duration_ps(g, durations, t); };
  std::map<std::int32_t, std::int64_t> first_forward;  // micro-batch → earliest forward start on device 0
  for (TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == sim::TaskKind::Compute && g.category[t] == Category::Forward && g.owner[t] == 0) {
      auto [it, fresh] = first_forward.emplace(g.micro_batch[t], tl.start_ps[t]);
      if (!fresh) it->second = std::min(it->second, tl.start_ps[t]);
    }
  CHECK(first_forward.at(0) == end_of(ahead[0].task));
  CHECK(first_forward.at(1) >= end_of(ahead[1].task));

  // Without the overlap: one gather of all 216,576 B after the optimizer step.
  spec.overlap_param_gather = false;
  const auto at_end = collectives(lowered(2, 1, 4, spec, 2).step.tasks);
  CHECK(std::count_if(at_end.begin(), at_end.end(), [](const Coll& c) { return c.label == "parameter all-gather" && c.bytes == 216'576; }) == 1);
}

TEST_CASE("lower: fp32 gradients reduce twice the bytes", "[sim][lower]") {
  // dp 2: every gradient is all-reduced once; 108,288 parameters are 216,576 B in fp16 and 433,152 B
  // in fp32 (training.grad_precision "fp32", as Megatron-LM runs bf16 training).
  PlanSpec spec;
  for (const auto& [precision, total] : {std::pair{std::optional<models::DType>{}, 216'576.0}, std::pair{std::optional{models::DType::F32}, 433'152.0}}) {
    const auto cs = collectives(lowered(2, 1, 4, spec, 2, precision).step.tasks);
    double bytes = 0;
    for (const auto& c : cs)
      if (c.category == Category::GradientComm) bytes += c.bytes;
    CHECK(bytes == total);
  }
}
