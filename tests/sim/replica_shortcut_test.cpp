// The data-parallel replica shortcut (DESIGN.md: identical replicas may be simulated once) must not
// change any figure of the step: identical replicas reach every gradient collective together.
#include <catch2/catch.hpp>

#include "models/transformer.hpp"
#include "sim/cluster.hpp"
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
