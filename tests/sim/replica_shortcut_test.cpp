// The data-parallel replica shortcut (identical replicas may be simulated once) must not
// change any figure of the step: identical replicas reach every gradient collective together.
#include <catch2/catch.hpp>

#include "models/transformer.hpp"
#include "sim/cluster.hpp"
#include "sim/replicas.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;

TEST_CASE("the replica shortcut gives the same step as simulating every replica", "[sim][lower][shortcut]") {
  struct Case {
    std::int64_t tp, pp, dp;
    int zero;
    strategies::Schedule schedule;
    std::int64_t virtual_stages;
  };
  const Case c = GENERATE(Case{1, 1, 8, 0, strategies::Schedule::OneFOneB, 1}, Case{2, 2, 2, 1, strategies::Schedule::OneFOneB, 1},
                          Case{2, 2, 4, 2, strategies::Schedule::Interleaved1F1B, 2}, Case{1, 2, 4, 3, strategies::Schedule::GPipe, 1},
                          Case{4, 1, 4, 0, strategies::Schedule::OneFOneB, 1});
  INFO("tp " << c.tp << " pp " << c.pp << " dp " << c.dp << " zero " << c.zero);
  const auto& profile = sim::datasheet_profile();
  sim::ClusterSpec cs = *sim::cluster_preset("dgx-a100");
  cs.nodes = c.tp * c.pp * c.dp / 8;
  const sim::Cluster cluster = sim::build_cluster(cs, profile);
  models::TransformerConfig m;
  m.layers = 4;
  m.hidden = 256;
  m.heads = 8;
  m.vocab = 1024;
  m.seq_len = 128;
  m.max_positions = 128;
  m.batch = 2 * c.dp;
  strategies::TrainingSpec t;
  t.global_batch = 8 * c.dp;  // 4 micro-batches of 2 per replica
  t.micro_batch = 2;
  strategies::PlanSpec spec;
  spec.tp = c.tp;
  spec.pp = c.pp;
  spec.dp = c.dp;
  spec.zero = c.zero;
  spec.schedule = c.schedule;
  spec.virtual_stages = c.virtual_stages;
  const models::Graph g = models::build_transformer(m);
  const auto plan = strategies::make_plan(g, t, spec, cluster.device_count());
  sim::LowerOptions shortcut;
  shortcut.replicate_data_parallel = true;
  const sim::Result once = sim::simulate(g, plan, cluster, profile, sim::Backend::Analytical, shortcut).result;
  const sim::Result all = sim::simulate(g, plan, cluster, profile).result;
  REQUIRE(once.replica_shortcut);
  REQUIRE_FALSE(all.replica_shortcut);
  // One replica is tp × pp devices.
  CHECK(once.simulated_devices == c.tp * c.pp);
  CHECK(all.simulated_devices == cluster.device_count());
  CHECK(once.step_time_s == all.step_time_s);
  // The mean breakdown averages equal per-device figures over 8 devices or over 1: equal up to the
  // rounding of the summation.
  for (std::size_t k = 0; k < once.breakdown.seconds.size(); ++k)
    CHECK_THAT(once.breakdown.seconds[k], Catch::Matchers::WithinRel(all.breakdown.seconds[k], 1e-12) || Catch::Matchers::WithinAbs(0, 1e-15));
  CHECK_THAT(once.breakdown.idle_s, Catch::Matchers::WithinRel(all.breakdown.idle_s, 1e-12) || Catch::Matchers::WithinAbs(0, 1e-15));
  CHECK(once.memory == all.memory);
  CHECK_THAT(once.intra_node_bytes, Catch::Matchers::WithinRel(all.intra_node_bytes, 1e-12));
  CHECK_THAT(once.inter_node_bytes, Catch::Matchers::WithinRel(all.inter_node_bytes, 1e-12));
  // Every device of replica 0 has the same times as when every replica is simulated.
  for (const auto& d : once.per_device) {
    INFO("device " << d.device);
    CHECK(d == all.per_device[static_cast<std::size_t>(d.device)]);
  }
}

namespace {

struct TpCase {
  const models::Graph graph;
  const strategies::Plan plan;
  const sim::Cluster cluster;
};

/// A 24-head transformer on 3 DGX A100 (24 devices), tensor `tp` × data 24/tp, micro-batch 2 × 2.
TpCase tensor_case(std::int64_t tp) {
  sim::ClusterSpec cs = *sim::cluster_preset("dgx-a100");
  cs.nodes = 3;
  sim::Cluster cluster = sim::build_cluster(cs, sim::datasheet_profile());
  models::TransformerConfig m;
  m.layers = 2;
  m.hidden = 768;  // 24 heads of 32; the heads, 4·768 and the vocabulary divide by every tp used here
  m.heads = 24;
  m.vocab = 1536;
  m.seq_len = 128;
  m.max_positions = 128;
  const std::int64_t dp = 24 / tp;
  m.batch = 2 * dp;
  strategies::TrainingSpec t;
  t.global_batch = 4 * dp;
  t.micro_batch = 2;
  strategies::PlanSpec spec;
  spec.tp = tp;
  spec.dp = dp;
  models::Graph g = models::build_transformer(m);
  strategies::Plan plan = strategies::make_plan(g, t, spec, cluster.device_count());
  return TpCase{std::move(g), std::move(plan), std::move(cluster)};
}

}  // namespace

TEST_CASE("replicas alike: tensor groups inside a node in every replica, or not", "[sim][lower][shortcut]") {
  // Nodes of 8, tensor axis innermost: replica k holds devices tp·k … tp·k + tp − 1.
  // tp 2: {0,1} {2,3} … {22,23}, each inside one node; tp 4: {0..3} {4..7} …, likewise. Alike.
  for (const std::int64_t tp : {2, 4}) {
    const TpCase alike = tensor_case(tp);
    CHECK(sim::data_parallel_replicas_alike(alike.plan, alike.cluster));
  }
  // tp 3: replica 0 is {0,1,2} in node 0, but replica 2 is {6,7,8}: devices 6 and 7 in node 0,
  // device 8 in node 1, so its all-reduces cross InfiniBand. Not alike.
  const TpCase c = tensor_case(3);
  REQUIRE(c.plan.mesh.group_of(6, std::vector<int>{c.plan.tp_axis}) == std::vector<std::int64_t>{6, 7, 8});
  CHECK_FALSE(sim::data_parallel_replicas_alike(c.plan, c.cluster));
  // No data-parallel axis, nothing to stand for.
  const TpCase whole = tensor_case(24);
  CHECK_FALSE(sim::data_parallel_replicas_alike(whole.plan, whole.cluster));
}

TEST_CASE("the replica shortcut is refused where replicas differ: tensor 3 on nodes of 8", "[sim][lower][shortcut]") {
  const TpCase c = tensor_case(3);
  const auto& profile = sim::datasheet_profile();
  sim::LowerOptions shortcut;
  shortcut.replicate_data_parallel = true;
  const sim::Result asked = sim::simulate(c.graph, c.plan, c.cluster, profile, sim::Backend::Analytical, shortcut).result;
  const sim::Result all = sim::simulate(c.graph, c.plan, c.cluster, profile).result;
  CHECK_FALSE(asked.replica_shortcut);
  CHECK(asked.simulated_devices == 24);
  CHECK(asked.step_time_s == all.step_time_s);
  // The result says why the shortcut it was asked for is not taken.
  bool said = false;
  for (const auto& note : asked.notes) said = said || note.rfind("Every data-parallel replica is simulated: the replicas differ", 0) == 0;
  CHECK(said);
  // Why: device 6's tensor-parallel all-reduces cross nodes, device 0's do not. The step waits for
  // the slowest replica, which one replica standing for all would have hidden.
  const auto tensor_comm = [&all](std::size_t d) {
    return all.per_device[d].breakdown.seconds[static_cast<std::size_t>(sim::Category::TensorComm)];
  };
  CHECK(tensor_comm(6) > 2 * tensor_comm(0));
  // Replica 0 finishes its backward first and waits for replica 2 at the gradient all-reduce.
  INFO("idle: device 0 " << all.per_device[0].breakdown.idle_s << " s, device 6 " << all.per_device[6].breakdown.idle_s << " s");
  CHECK(all.per_device[0].breakdown.idle_s > all.per_device[6].breakdown.idle_s);
}
