// Context parallelism (plan.cp): the sequence split over cp devices, the K/V exchange each variant
// needs derived from the shardings, weight gradients reduced over dp × cp, and the memory it saves.
// Small GPT (2 blocks, h 64, 4 heads of d 16, seq 32, vocab 128, fused attention, fp16) on flat chips.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "small_gpt.hpp"
#include "tests/models/llama3_70b_block.hpp"
#include "models/transformer.hpp"
#include "sim/lower.hpp"
#include "sim/simulate.hpp"
#include "strategies/memory.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using sim::Category;
using sim::CollectiveKind;
using strategies::CpComm;
using strategies::PlanSpec;

namespace {

using testing::collectives;
using testing::contains;
using Lowered = testing::LoweredGpt;

/// The small GPT (small_gpt.hpp) with fused attention, micro-batch 1, one sample per replica.
Lowered lower_cp(const PlanSpec& spec, std::int64_t devices) {
  const std::int64_t dp = strategies::resolve_dp(spec, devices);
  return testing::lower_small_gpt(2, 1, dp, spec, devices, models::AttentionKind::Fused);
}

}  // namespace

TEST_CASE("context parallel: the mesh, the split sequence and the attention's whole keys", "[sim][cp]") {
  PlanSpec spec;
  spec.cp = 2;
  spec.dp = 2;
  const Lowered l = lower_cp(spec, 4);
  // Default order pp, dp, cp, tp: cp just outside tp, so its ranks are neighbours.
  REQUIRE(l.plan.cp_axis >= 0);
  CHECK(l.plan.mesh.axes[static_cast<std::size_t>(l.plan.cp_axis)].name == "cp");
  CHECK(l.plan.cp() == 2);
  CHECK(l.plan.dp() == 2);
  const auto& g = l.graph;
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    INFO(o.name);
    if (o.find_dim("s") != nullptr) CHECK(l.plan.sharding[id].axes_of("s") == std::vector<int>{l.plan.cp_axis});
    if (o.kind == models::OpKind::Attention) {
      CHECK(l.plan.sharding[id].axes_of("q") == std::vector<int>{l.plan.cp_axis});
      CHECK(l.plan.sharding[id].axes_of("k").empty());
    }
  }
}

TEST_CASE("context parallel: all_gather exchanges K and V once each way, p2p runs the ring under attention", "[sim][cp]") {
  // K and V are [b 1, k 32, g 4, d 16] in fp16: 4096 B gathered. all_gather: per layer, forward one
  // all-gather of K and one of V over cp, backward one reduce-scatter of each gradient (the attention's
  // K/V gradients are partial sums over the ranks' queries): 2 + 2 per layer, 8 in all, 4096 B each.
  PlanSpec spec;
  spec.cp = 2;
  spec.cp_comm = CpComm::AllGather;
  {
    const Lowered l = lower_cp(spec, 2);
    std::int64_t gathers = 0, scatters = 0;
    for (const auto& c : collectives(l.step.tasks)) {
      if (!contains(c.label, " cp ")) continue;
      INFO(c.label);
      CHECK(c.bytes == 4096);
      CHECK(c.group.size() == 2);
      gathers += c.kind == CollectiveKind::AllGather;
      scatters += c.kind == CollectiveKind::ReduceScatter;
    }
    CHECK(gathers == 4);
    CHECK(scatters == 4);
  }
  // p2p: the same bytes in cp = 2 blocks: the first 2048 B block exposed, the other under attention;
  // in backward the gradients' last 2048 B block exposed, the other under the attention backward.
  spec.cp_comm = CpComm::P2P;
  const Lowered l = lower_cp(spec, 2);
  double total = 0;
  std::int64_t first = 0, under = 0, last = 0;
  for (const auto& c : collectives(l.step.tasks)) {
    if (!contains(c.label, " cp ")) continue;
    INFO(c.label);
    CHECK(c.bytes == 2048);
    total += c.bytes;
    first += contains(c.label, "(first chunk)");
    under += contains(c.label, "(under attention)");
    last += contains(c.label, "(last chunk)");
  }
  CHECK(total == 8 * 4096);
  CHECK(first == 4);
  CHECK(under == 8);
  CHECK(last == 4);
}

TEST_CASE("context parallel: a2a trades the sequence split for a head split around attention", "[sim][cp]") {
  // Ulysses: the attention reads whole sequences of 4 / 2 = 2 heads, so Q, K, V go through an
  // all-to-all over cp before it and the context after it: 4 per layer forward, 4 backward.
  PlanSpec spec;
  spec.cp = 2;
  spec.cp_comm = CpComm::AllToAll;
  const Lowered l = lower_cp(spec, 2);
  std::int64_t a2a = 0;
  for (const auto& c : collectives(l.step.tasks))
    if (contains(c.label, " cp ")) {
      INFO(c.label);
      CHECK(c.kind == CollectiveKind::AllToAll);
      ++a2a;
    }
  CHECK(a2a == 16);
}

TEST_CASE("context parallel: weight gradients are reduced over dp × cp", "[sim][cp]") {
  // dp 1, cp 2: every weight gradient is a partial sum over the two halves of the sequence, reduced
  // over the cp pair once, after the backward: the model's parameters in fp16, all-reduced.
  PlanSpec spec;
  spec.cp = 2;
  const Lowered l = lower_cp(spec, 2);
  double bytes = 0;
  for (const auto& c : collectives(l.step.tasks))
    if (c.category == Category::GradientComm) {
      CHECK(c.kind == CollectiveKind::AllReduce);
      CHECK(c.group.size() == 2);
      bytes += c.bytes;
    }
  CHECK(bytes == 2.0 * static_cast<double>(l.graph.param_count()));
}

TEST_CASE("context parallel: each rank keeps its share of the activations", "[sim][cp][memory]") {
  // Llama-3-70B's block at s 8192, tp 8 with sequence parallel (memory_test derives 281,280,512 B);
  // cp 2 halves it. all_gather also keeps the other rank's K and V: 4·g·d·(cp − 1) = 4 · 8 · 128 = 4096 B
  // per token of the rank, / tp 8 = 512: 4096 tokens · 512 = 2,097,152 B more.
  const models::TransformerShape llama = testing::llama3_70b_block(8192);
  const auto none = strategies::Recompute::None;
  CHECK(strategies::layer_activation_bytes(llama, 1, 8, true, none, models::DType::BF16, 2, CpComm::P2P) == 281'280'512.0 / 2);
  CHECK(strategies::layer_activation_bytes(llama, 1, 8, true, none, models::DType::BF16, 2, CpComm::AllGather) ==
        281'280'512.0 / 2 + 2'097'152.0);
}

TEST_CASE("context parallel: faults are located at the plan field", "[sim][cp]") {
  models::TransformerConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 30;
  c.batch = 1;
  const models::Graph g = models::build_transformer(c);
  strategies::TrainingSpec training;
  PlanSpec spec;
  spec.cp = 2;
  // 30 tokens do not split into 2·cp = 4 chunks.
  auto problem = strategies::check_plan(g, training, spec, 2);
  REQUIRE(problem);
  CHECK(problem->pointer == "/plan/cp");
  // tp × cp × pp = 2 does not divide 3 devices.
  problem = strategies::check_plan(g, training, spec, 3);
  REQUIRE(problem);
  CHECK(problem->pointer == "/plan/cp");
}
