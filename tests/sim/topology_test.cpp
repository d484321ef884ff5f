// Topologies end to end (sim::simulate): stragglers and mixed device kinds under synchronous data
// parallelism, and "changing any topology field changes the result, or the tool says it has no
// effect on this scenario" (sim/topology_notes.hpp). Small transformers on at most 64 devices.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/transformer.hpp"
#include "sim/cluster.hpp"
#include "sim/simulate.hpp"
#include "sim/topology.hpp"
#include "strategies/plan.hpp"
#include "tests/sim/flat_machine.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

models::Graph small_transformer(std::int64_t batch) {
  models::TransformerConfig m;
  m.layers = 2;
  m.hidden = 256;
  m.heads = 8;
  m.vocab = 1024;
  m.seq_len = 128;
  m.max_positions = 128;
  m.batch = batch;
  return models::build_transformer(m);
}

/// One step of the small transformer, `micro` micro-batches of 2 per replica, on `cluster`.
sim::Result step(const sim::Cluster& cluster, const sim::Profile& profile, strategies::PlanSpec spec, sim::Backend backend = sim::Backend::Analytical) {
  const std::int64_t dp = strategies::resolve_dp(spec, cluster.device_count());
  const models::Graph g = small_transformer(2 * dp);
  strategies::TrainingSpec t;
  t.global_batch = 4 * dp;  // 2 micro-batches of 2 per replica
  t.micro_batch = 2;
  const auto plan = strategies::make_plan(g, t, spec, cluster.device_count());
  return sim::simulate(g, plan, cluster, profile, backend).result;
}

strategies::PlanSpec plan(std::int64_t tp, std::int64_t pp, std::int64_t dp) {
  strategies::PlanSpec s;
  s.tp = tp;
  s.pp = pp;
  s.dp = dp;
  return s;
}

}  // namespace

TEST_CASE("a straggler twice as slow stretches a synchronous data-parallel step to the slow device's pace", "[sim][topology][straggler]") {
  const sim::Backend backend = GENERATE(sim::Backend::Analytical, sim::Backend::SimGrid);
  INFO(to_string(backend));
  // 8 flat chips (every efficiency 1, no launch overhead, never memory-bound) on 1 TB/s, 1 µs links.
  // Data parallel over 8: each replica computes the same work, then every gradient all-reduce
  // starts when its LAST member reaches it. With device 3 at half speed, every all-reduce waits for
  // device 3, whose compute takes exactly twice as long (time = FLOPs / (peak · 0.5)); the others
  // idle. So the step equals that of a cluster where every device runs at half speed — and since
  // the collectives are the same, only its compute doubles: step(straggler) = step(all at 0.5) and
  // step(all at 0.5) − step(uniform) = the uniform step's compute time on the slowest device.
  const sim::Profile profile = testing::flat_profile(1e14, 1e13);
  const sim::Cluster uniform = testing::flat_cluster(8, 1e12, 1e-6);
  sim::Cluster straggler = uniform;
  straggler.devices[3].speed_factor = 0.5;
  sim::Cluster slow = uniform;
  for (auto& d : slow.devices) d.speed_factor = 0.5;
  const sim::Result r_uniform = step(uniform, profile, plan(1, 1, 8), backend);
  const sim::Result r_straggler = step(straggler, profile, plan(1, 1, 8), backend);
  const sim::Result r_slow = step(slow, profile, plan(1, 1, 8), backend);
  CHECK_THAT(r_straggler.step_time_s, WithinRel(r_slow.step_time_s, backend == sim::Backend::Analytical ? 1e-9 : 1e-3));
  const double compute = r_uniform.per_device[3].breakdown.compute_s();
  REQUIRE(compute > 0);
  CHECK_THAT(r_slow.step_time_s - r_uniform.step_time_s, WithinRel(compute, 1e-3));
  // The fast devices wait: device 0 idles about as long as device 3 computes beyond it.
  CHECK(r_straggler.per_device[0].breakdown.idle_s > r_uniform.per_device[0].breakdown.idle_s);
}

TEST_CASE("A100 and H100 nodes in one data-parallel job run at the A100s' pace", "[sim][topology][heterogeneous]") {
  // Two DGX nodes joined by HDR InfiniBand, data parallel over all 16 GPUs. The H100s (node 1)
  // finish each micro-batch sooner and wait at every gradient all-reduce for the A100s; the
  // all-reduces are the same whatever the device kinds (same links), and the step ends with the
  // slowest optimizer step, an A100's. So the mixed cluster's step equals the all-A100 step, and an
  // all-H100 cluster on the same links is faster.
  const auto& profile = sim::datasheet_profile();
  sim::ClusterSpec spec = *sim::cluster_preset("dgx-a100");
  spec.nodes = 2;
  const sim::Result a100 = step(sim::build_cluster(spec, profile), profile, plan(1, 1, 16));
  spec.node_groups = {sim::NodeGroupSpec{1, "a100-80gb", 1}, sim::NodeGroupSpec{1, "h100-sxm", 1}};
  const sim::Result mixed = step(sim::build_cluster(spec, profile), profile, plan(1, 1, 16));
  spec.node_groups = {sim::NodeGroupSpec{2, "h100-sxm", 1}};
  const sim::Result h100 = step(sim::build_cluster(spec, profile), profile, plan(1, 1, 16));
  CHECK_THAT(mixed.step_time_s, WithinRel(a100.step_time_s, 1e-9));
  CHECK(h100.step_time_s < a100.step_time_s);
  // The H100s idle while the A100s compute.
  CHECK(mixed.per_device[8].breakdown.idle_s > mixed.per_device[0].breakdown.idle_s);
}

TEST_CASE("a profile's rank spread runs every device of a multi-device step at the slowest rank's pace, and says so", "[sim][topology][straggler]") {
  // The A100 with a measured rank spread of 1.25 (the slowest of 2 ranks running the same work took
  // 1.25 times their mean): build_cluster divides every device's speed by 1.25, so the step equals
  // that of the same cluster with every speed factor set to 1 / 1.25 = 0.8 by hand, and its notes
  // name the factor once. One device alone keeps the profile's speed, and no note.
  sim::Profile profile = sim::datasheet_profile();
  profile.devices["a100-80gb"].rank_spread = {2, 1.25};
  sim::ClusterSpec spec = *sim::cluster_preset("dgx-a100");
  spec.nodes = 1;
  const sim::Result spread = step(sim::build_cluster(spec, profile), profile, plan(2, 1, 4));
  sim::Cluster by_hand = sim::build_cluster(spec, sim::datasheet_profile());
  for (auto& d : by_hand.devices) d.speed_factor = 0.8;
  const sim::Result slow = step(by_hand, sim::datasheet_profile(), plan(2, 1, 4));
  CHECK_THAT(spread.step_time_s, WithinRel(slow.step_time_s, 1e-12));
  CHECK(std::count_if(spread.notes.begin(), spread.notes.end(), [](const std::string& n) {
          return n.rfind("Every device computes 1.25 times slower than its profile's rates: the slowest of 2 a100-80gb ranks", 0) == 0;
        }) == 1);
  spec.devices_per_node = 1;
  const sim::Result alone = step(sim::build_cluster(spec, profile), profile, plan(1, 1, 1));
  const sim::Result alone_datasheet = step(sim::build_cluster(spec, sim::datasheet_profile()), sim::datasheet_profile(), plan(1, 1, 1));
  CHECK(alone.step_time_s == alone_datasheet.step_time_s);
  CHECK(std::none_of(alone.notes.begin(), alone.notes.end(), [](const std::string& n) { return n.rfind("Every device computes", 0) == 0; }));
}

TEST_CASE("a profile's shared-host entry prices every device of a multi-device node while others compute, and says so", "[sim][topology][shared-host]") {
  // The A100 with a shared-host entry whose memory bandwidth is half its own ("a100-80gb@4", as
  // `parasim calibrate --backend mpi` writes for a host's ranks running at once). On a node of 8,
  // each compute task keeps (its time by the A100's figures) / (its time by the entry's) of its
  // speed while another device of the node computes: the step is longer than the datasheet's. One
  // note says so, and that the node has more devices than were measured. A pipeline of two stages
  // on a node of 2 pays the entry's price only where both stages compute: less than by name, more
  // than the datasheet's. One device alone keeps the kind's own figures and no note.
  sim::Profile profile = sim::datasheet_profile();
  sim::DeviceProfile shared = profile.devices.at("a100-80gb");
  shared.name = "a100-80gb@4";
  shared.memory_bandwidth_bytes_per_s /= 2;
  profile.devices["a100-80gb@4"] = shared;
  profile.devices["a100-80gb"].shared_host = {4, "a100-80gb@4"};
  sim::ClusterSpec spec = *sim::cluster_preset("dgx-a100");
  spec.nodes = 1;
  const sim::Result priced = step(sim::build_cluster(spec, profile), profile, plan(2, 1, 4));
  sim::ClusterSpec by_name = spec;
  by_name.device = "a100-80gb@4";
  const sim::Result named = step(sim::build_cluster(by_name, profile), profile, plan(2, 1, 4));
  const sim::Result datasheet = step(sim::build_cluster(spec, sim::datasheet_profile()), sim::datasheet_profile(), plan(2, 1, 4));
  // Data and tensor parallel: every device of the node computes when the others do (under the
  // replica shortcut each simulated device stands for its replicas on the node), so every task pays
  // the entry's price, as by name (each task's rate is a float: within 1e-6).
  CHECK_THAT(priced.step_time_s, WithinRel(named.step_time_s, 1e-6));
  CHECK(priced.step_time_s > datasheet.step_time_s);
  CHECK(priced.device_kind == "a100-80gb");
  CHECK(std::count_if(priced.notes.begin(), priced.notes.end(), [](const std::string& n) {
          return n == "Each a100-80gb is priced by the profile's \"a100-80gb@4\" figures: its kernels measured with 4 ranks of one host running "
                      "them at the same moment (the profile's shared_host), as the 8 devices of a node share its memory bandwidth and caches; "
                      "while no other device of its node computes, by its own figures, and beside other work than its own by that slowdown "
                      "times the other work's memory duty (the engine follows which devices compute what, when); "
                      "the node has more devices than were measured, so its kernels may run slower still.";
        }) == 1);
  spec.devices_per_node = 2;
  by_name.devices_per_node = 2;
  const sim::Result pipeline = step(sim::build_cluster(spec, profile), profile, plan(1, 2, 1));
  const sim::Result pipeline_named = step(sim::build_cluster(by_name, profile), profile, plan(1, 2, 1));
  const sim::Result pipeline_datasheet = step(sim::build_cluster(spec, sim::datasheet_profile()), sim::datasheet_profile(), plan(1, 2, 1));
  CHECK(pipeline.step_time_s < pipeline_named.step_time_s);
  CHECK(pipeline.step_time_s > pipeline_datasheet.step_time_s);
  spec.devices_per_node = 1;
  const sim::Result alone = step(sim::build_cluster(spec, profile), profile, plan(1, 1, 1));
  const sim::Result alone_datasheet = step(sim::build_cluster(spec, sim::datasheet_profile()), sim::datasheet_profile(), plan(1, 1, 1));
  CHECK(alone.step_time_s == alone_datasheet.step_time_s);
  CHECK(std::none_of(alone.notes.begin(), alone.notes.end(), [](const std::string& n) { return n.rfind("Each a100-80gb is priced", 0) == 0; }));
}

TEST_CASE("changing any topology field changes the result, or the result says it has no effect", "[sim][topology][notes]") {
  const auto& profile = sim::datasheet_profile();
  struct Change {
    const char* field;  ///< the scenario field, as the notes name it
    std::function<void(sim::ClusterSpec&)> apply;
  };
  struct Base {
    const char* name;
    sim::ClusterSpec spec;
    strategies::PlanSpec plan;
    std::vector<Change> changes;
  };
  // 4 DGX A100 nodes, 2 per leaf switch: tensor parallel inside a node, data parallel across nodes.
  sim::ClusterSpec fat = *sim::cluster_preset("dgx-a100");
  fat.nodes = 4;
  fat.inter_node.nodes_per_leaf = 2;
  // One PCIe V100 server: tensor parallel over its 8 GPUs.
  sim::ClusterSpec pcie = *sim::cluster_preset("pcie-v100");
  // A 64-chip TPU v4 slice: data parallel over a 4x4x4 torus.
  sim::ClusterSpec tpu = *sim::cluster_preset("tpu-v4-pod");
  tpu.nodes = 16;
  const std::vector<Base> bases{
      {"fat-tree",
       fat,
       plan(8, 1, 4),
       {{"intra_node.bandwidth_gbps", [](auto& s) { s.intra_node.bandwidth_gbps = 1000; }},
        {"intra_node.latency_us", [](auto& s) { s.intra_node.latency_us = 50; }},
        {"inter_node.bandwidth_gbps", [](auto& s) { s.inter_node.bandwidth_gbps = 50; }},
        {"inter_node.latency_us", [](auto& s) { s.inter_node.latency_us = 100; }},
        {"nics_per_node", [](auto& s) { s.inter_node.nics_per_node = 1; }},
        {"oversubscription", [](auto& s) { s.inter_node.oversubscription = 8; }},
        {"nodes_per_leaf", [](auto& s) { s.inter_node.nodes_per_leaf = 4; }},
        {"rail_optimized", [](auto& s) { s.inter_node.rail_optimized = false; }},
        {"wan", [](auto& s) { s.wan = sim::WanSpec{2, 100, 1000}; }},
        {"stragglers", [](auto& s) { s.stragglers = {sim::StragglerSpec{5, 0.5}}; }},
        {"node_groups", [](auto& s) { s.node_groups = {sim::NodeGroupSpec{2, "", 1}, sim::NodeGroupSpec{2, "a100-40gb", 0.8}}; }}}},
      {"PCIe node",
       pcie,
       plan(8, 1, 1),
       {{"pcie_switches", [](auto& s) { s.intra_node.pcie_switches = 2; }},
        {"host_bridge_gbps", [](auto& s) { s.intra_node.host_bridge_gbps = 64; }},
        {"intra_node.bandwidth_gbps", [](auto& s) { s.intra_node.bandwidth_gbps = 64; }},
        {"inter_node", [](auto& s) { s.inter_node.bandwidth_gbps = 10; }}}},
      {"torus",
       tpu,
       plan(1, 1, 64),
       {{"inter_node.bandwidth_gbps", [](auto& s) { s.inter_node.bandwidth_gbps = 100; }},
        {"torus_dims", [](auto& s) { s.inter_node.torus_dims = {2, 4, 8}; }},
        {"torus_wraparound", [](auto& s) { s.inter_node.torus_wraparound = false; }}}},
  };
  for (const Base& base : bases) {
    const sim::Result before = step(sim::build_cluster(base.spec, profile), profile, base.plan);
    for (const Change& change : base.changes) {
      INFO(base.name << ": " << change.field);
      sim::ClusterSpec spec = base.spec;
      change.apply(spec);
      REQUIRE_FALSE(sim::check_cluster_spec(spec, profile).has_value());
      const sim::Result after = step(sim::build_cluster(spec, profile), profile, base.plan);
      const bool changed = after.step_time_s != before.step_time_s;
      const bool said = std::any_of(before.notes.begin(), before.notes.end(), [&](const std::string& n) {
        const std::string key = change.field;
        return n.find(key.substr(key.rfind('.') + 1)) != std::string::npos && n.find("no effect") != std::string::npos;
      }) || std::any_of(before.notes.begin(), before.notes.end(), [&](const std::string& n) {
        const std::string key = change.field;
        return n.find(key.substr(key.rfind('.') + 1)) != std::string::npos && n.find("change the result only where") != std::string::npos;
      });
      std::string notes;
      for (const auto& n : before.notes) notes += "\n  " + n;
      INFO("step " << before.step_time_s << " s -> " << after.step_time_s << " s; notes:" << notes);
      CHECK((changed || said));
    }
  }
}
