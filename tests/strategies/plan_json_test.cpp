// A Plan printed as JSON: mesh, settings, chunks and the split of each sharded operator.
#include <catch2/catch.hpp>

#include "models/transformer.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_json.hpp"

using namespace parasim;

TEST_CASE("plan JSON: mesh, chunks and Megatron sharding of a 4-layer GPT", "[strategies][plan]") {
  models::TransformerConfig c;
  c.layers = 4;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 16;
  c.max_positions = 16;
  strategies::TrainingSpec t;
  t.global_batch = 8;
  t.micro_batch = 1;
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.pp = 2;
  spec.dp = 2;
  // The graph holds one micro-batch of every replica: micro_batch × dp = 2 samples.
  c.batch = 2;
  const models::Graph g = models::build_transformer(c);
  const auto plan = strategies::make_plan(g, t, spec, 8);
  const auto j = strategies::to_json(plan, g);
  CHECK(j.at("schema") == "parasim.plan/1");
  // mesh_order defaults to {pp, dp, tp}: outermost first.
  CHECK(j.at("mesh") == nlohmann::json::parse(R"([{"axis":"pp","size":2},{"axis":"dp","size":2},{"axis":"tp","size":2}])"));
  // 8 samples per step / (1 per micro-batch × 2 replicas) = 4 micro-batches.
  CHECK(j.at("micro_batches") == 4);
  // 4 blocks over 2 chunks: the embeddings join chunk 0 with blocks 0–1, the head chunk 1 with 2–3.
  CHECK(j.at("chunks").at(0).at("layers") == nlohmann::json::parse(R"(["embeddings","layers.0","layers.1"])"));
  CHECK(j.at("chunks").at(1).at("layers") == nlohmann::json::parse(R"(["layers.2","layers.3","head"])"));
  CHECK(j.at("chunks").at(1).at("stage") == 1);
  // Megatron: Q's key/value-head dim over tp (column parallel), the batch over dp.
  bool found = false;
  for (const auto& s : j.at("sharding")) {
    if (s.at("op") != "layers.0.attn.q_proj") continue;
    found = true;
    CHECK(s.at("split") == nlohmann::json::parse(R"({"b":["dp"],"g":["tp"]})"));
  }
  CHECK(found);
  // Same plan, same text.
  CHECK(j.dump() == strategies::to_json(plan, g).dump());
}
