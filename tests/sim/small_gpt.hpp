// The small GPT the lowering tests count collectives on, lowered on flat chips, and the collectives of
// a task graph as those tests look at them.
//
// The model: `layers` blocks, hidden h 64, 4 heads, MLP 256, vocabulary 128, sequence s 32, tied
// embeddings, fp16. Parameters: embeddings v·h = 8192; a block 12h² + 13h = 49,984; the final norm
// 2h = 128 (108,288 in all with 2 blocks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "models/transformer.hpp"
#include "sim/lower.hpp"
#include "strategies/plan.hpp"

namespace parasim::testing {

struct LoweredGpt {
  models::Graph graph;
  strategies::Plan plan;
  sim::LoweredStep step;
};

/// Lowers the small GPT under `spec` on `devices` flat chips with micro-batch `micro_batch` and global
/// batch `global_batch` (REQUIREs that check_plan accepts the plan).
inline LoweredGpt lower_small_gpt(std::int64_t layers, std::int64_t micro_batch, std::int64_t global_batch, const strategies::PlanSpec& spec,
                                  std::int64_t devices, models::AttentionKind attention,
                                  std::optional<models::DType> grad_precision = std::nullopt) {
  models::TransformerConfig c;
  c.attention = attention;
  c.name = "small-gpt";
  c.layers = layers;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 32;
  c.batch = micro_batch * strategies::resolve_dp(spec, devices);
  LoweredGpt out{models::build_transformer(c), {}, {}};
  strategies::TrainingSpec training;
  training.global_batch = global_batch;
  training.micro_batch = micro_batch;
  training.grad_precision = grad_precision;
  const auto problem = strategies::check_plan(out.graph, training, spec, devices);
  INFO((problem ? problem->pointer + ": " + problem->message : std::string("plan ok")));
  REQUIRE_FALSE(problem);
  out.plan = strategies::make_plan(out.graph, training, spec, devices);
  out.step = sim::lower(out.graph, out.plan, flat_cluster(devices), flat_profile(1e12, 1e12));
  return out;
}

/// One collective task, as the tests look at it.
struct Coll {
  sim::TaskId task;
  sim::CollectiveKind kind;
  sim::Category category;
  std::int32_t micro_batch;
  std::uint8_t stream;
  std::string label;
  double bytes;
  std::vector<std::int64_t> group;
  std::int64_t root;
};

inline std::vector<Coll> collectives(const sim::TaskGraph& g) {
  std::vector<Coll> out;
  for (sim::TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] != sim::TaskKind::Collective) continue;
    const auto& spec = g.collectives[g.owner[t]];
    const auto members = g.group(spec.group);
    out.push_back(Coll{t, spec.kind, g.category[t], g.micro_batch[t], g.stream[t], g.labels[g.label[t]], spec.bytes,
                       std::vector<std::int64_t>(members.begin(), members.end()), spec.root});
  }
  return out;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace parasim::testing
