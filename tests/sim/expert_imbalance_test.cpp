// The routing imbalance factor (strategies::PlanSpec::expert_imbalance): the busiest expert-parallel
// rank's expert GEMMs and its all-to-all bytes grow by the factor, and nothing else does.
//
// The model: a small MoE GPT, 2 blocks, hidden h 64 (MLP and expert width f 4h = 256), 4 heads, 4
// experts, top-2, sequence s 32, fp16; plan dp 4 with ep 2 inside it (4 devices), micro-batch 1 per
// replica, so the graph's batch is 4 sequences and one device holds one sequence's tokens.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "models/transformer.hpp"
#include "sim/work/work.hpp"
#include "strategies/plan.hpp"

using namespace parasim;

namespace {

struct Described {
  models::Graph graph;
  sim::StepWork step;
};

Described described(double imbalance) {
  models::TransformerConfig c;
  c.name = "small-moe";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.experts = 4;
  c.experts_per_token = 2;
  c.batch = 4;
  strategies::PlanSpec spec;
  spec.dp = 4;
  spec.ep = 2;
  spec.expert_imbalance = imbalance;
  strategies::TrainingSpec training;
  training.global_batch = 4;
  training.micro_batch = 1;
  Described d{models::build_transformer(c), {}};
  REQUIRE_FALSE(strategies::check_plan(d.graph, training, spec, 4));
  d.step = sim::describe_step(d.graph, strategies::make_plan(d.graph, training, spec, 4));
  return d;
}

std::vector<double> all_to_all_bytes(const sim::StepWork& step) {
  std::vector<double> out;
  for (const auto& chunk : step.chunks)
    for (const auto* program : {&chunk.forward, &chunk.backward})
      for (const auto& item : program->items)
        if (item.kind == sim::ItemKind::Collective && item.collective == sim::CollectiveKind::AllToAll) out.push_back(item.bytes);
  return out;
}

const sim::OpWork& work_of(const Described& d, const std::string& name) {
  for (models::OpId id = 0; id < d.graph.op_count(); ++id)
    if (d.graph.op(id).name == name) return d.step.op_work[id];
  FAIL("no operator " << name);
  return d.step.op_work.front();
}

}  // namespace

TEST_CASE("expert imbalance: the busiest rank's all-to-all bytes and expert GEMMs scale by the factor", "[sim][moe]") {
  const Described balanced = described(1.0), skewed = described(1.5);

  // A device's tokens: 32 (one sequence), each routed to k = 2 experts: 64 copies of h = 64 fp16
  // elements, 64 · 64 · 2 = 8,192 bytes sent at every dispatch and combine (forward) and at their
  // gradients (backward): 2 blocks × 4 = 8 all-to-alls. The busiest rank receives 1.5 × that: 12,288.
  const auto bytes = all_to_all_bytes(balanced.step), skewed_bytes = all_to_all_bytes(skewed.step);
  REQUIRE(bytes.size() == 8);
  REQUIRE(skewed_bytes.size() == 8);
  for (double b : bytes) CHECK(b == 8192.0);
  for (double b : skewed_bytes) CHECK(b == 12288.0);

  // A device holds e/ep = 2 experts; an expert's capacity c = 4 · 32 · 2 / 4 = 64 tokens is split over
  // the dp axis of 2: 32 on each device. Forward: 3 GEMMs of 32·64·256 MACs per expert, 2 FLOPs per
  // MAC: 2 · 6 · 32 · 64 · 256 = 6,291,456 FLOPs; the busiest rank 1.5 × = 9,437,184, its GEMMs 48 tokens long.
  const sim::OpWork& experts = work_of(balanced, "layers.0.moe.experts");
  const sim::OpWork& busiest = work_of(skewed, "layers.0.moe.experts");
  CHECK(experts.fwd_flops == 6'291'456.0);
  CHECK(busiest.fwd_flops == 9'437'184.0);
  CHECK(busiest.bwd_flops == 2 * 9'437'184.0);
  CHECK(experts.gemm_m == 32.0);
  CHECK(busiest.gemm_m == 48.0);
  // Its weights (2 experts · 3 · 64 · 256 fp16 = 196,608 bytes) are read once whatever the load; its
  // tokens in and out (2 · 32 · 64 fp16 each = 8,192 bytes) grow: 196,608 + 2 · 8,192 · 1.5 = 221,184.
  CHECK(experts.bytes == 196'608.0 + 2 * 8'192.0);
  CHECK(busiest.bytes == 221'184.0);

  // Everything else is the balanced work: the router, attention, the dense parts.
  for (const char* name : {"layers.0.moe.router", "layers.0.attn.q_proj", "layers.1.moe.combine", "lm_head"})
    CHECK(work_of(balanced, name) == work_of(skewed, name));
}
