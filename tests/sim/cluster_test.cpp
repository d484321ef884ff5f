#include <algorithm>

#include <catch2/catch.hpp>

#include "sim/cluster.hpp"

using namespace parasim::sim;
using Catch::Matchers::WithinRel;

namespace {

ClusterSpec preset(const std::string& name, std::int64_t nodes) {
  auto spec = cluster_preset(name);
  REQUIRE(spec.has_value());
  spec->nodes = nodes;
  return *spec;
}

std::string problem_of(const ClusterSpec& spec) {
  const auto p = check_cluster_spec(spec, datasheet_profile());
  return p ? p->pointer + ": " + p->message : "no problem";
}

}  // namespace

TEST_CASE("cluster presets: every one checks and builds against the datasheet profile", "[sim][cluster]") {
  const auto names = cluster_preset_names();
  for (const char* name : {"dgx-a100", "dgx-a100-40gb", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-v100", "pcie-v100", "tpu-v4-pod",
                           "tpu-v5e-pod", "tpu-v5p-pod", "gb200-nvl72"})
    CHECK(std::count(names.begin(), names.end(), name) == 1);
  CHECK_FALSE(cluster_preset("dgx-a101").has_value());
  for (const auto& name : names) {
    INFO("preset " << name);
    // 16 nodes: 128 GPUs, or 64 (v4, v5p) / 128 (v5e) TPU chips.
    const ClusterSpec spec = preset(name, 16);
    CHECK(problem_of(spec) == "no problem");
    const Cluster c = build_cluster(spec, datasheet_profile());
    CHECK(c.device_count() == 16 * spec.devices_per_node);
    CHECK(c.inter_bandwidth_per_device() > 0);
  }
}

TEST_CASE("build_cluster: DGX A100 nodes", "[sim][cluster]") {
  const Cluster c = build_cluster(preset("dgx-a100", 2), datasheet_profile());
  CHECK(c.device_count() == 16);
  CHECK(c.node_of(7) == 0);
  CHECK(c.node_of(8) == 1);
  CHECK(c.devices[9].kind == "a100-80gb");
  CHECK(c.intra.name == "nvlink3");
  // NVLink3: 300 GB/s per direction.
  CHECK(c.intra.bandwidth_bytes_per_s == 300e9);
  // 8 HDR NICs of 25 GB/s for 8 GPUs: 8 · 25e9 / 8 = 25 GB/s each.
  CHECK(c.inter.name == "ib-hdr");
  CHECK(c.inter_bandwidth_per_device() == 25e9);
  CHECK(c.rail_optimized);
}

namespace {
/// Two ranks of this host's CPU on one node, over shared memory (scenarios/execute's clusters).
ClusterSpec two_cpu_ranks() {
  ClusterSpec spec;
  spec.device = "host-cpu";
  spec.nodes = 1;
  spec.devices_per_node = 2;
  spec.intra_node.link = "shm";
  return spec;
}
}  // namespace

TEST_CASE("build_cluster: a device kind's measured rank spread slows every device of a cluster of two or more", "[sim][cluster]") {
  // host-cpu with the slowest of two ranks 1.08 times their mean (what calibrate --backend mpi
  // writes): two ranks run at 1/1.08 of the profile's speed, a straggler's factor on top of that; one
  // rank alone at the profile's speed; a kind without the measurement (the datasheet's) as before.
  Profile profile = datasheet_profile();
  profile.devices["host-cpu"].rank_spread = {2, 1.08};
  ClusterSpec spec = two_cpu_ranks();
  REQUIRE(!check_cluster_spec(spec, profile));
  Cluster c = build_cluster(spec, profile);
  REQUIRE(c.devices.size() == 2);
  CHECK_THAT(c.devices[0].speed_factor, WithinRel(1 / 1.08, 1e-12));
  CHECK_THAT(c.devices[1].speed_factor, WithinRel(1 / 1.08, 1e-12));
  spec.stragglers = {StragglerSpec{1, 0.5}};
  c = build_cluster(spec, profile);
  CHECK_THAT(c.devices[1].speed_factor, WithinRel(0.5 / 1.08, 1e-12));
  spec.stragglers.clear();
  spec.devices_per_node = 1;
  CHECK(build_cluster(spec, profile).devices[0].speed_factor == 1.0);
  spec.devices_per_node = 2;
  CHECK(build_cluster(spec, datasheet_profile()).devices[1].speed_factor == 1.0);
}

TEST_CASE("build_cluster: a node of two devices or more is priced by its kind's shared-host entry", "[sim][cluster]") {
  // The entry `parasim calibrate --backend mpi` writes ("host-cpu@2", the same kernels with two
  // ranks of the host running at once): every device of a two-device node takes its figures, and
  // its rank spread (the entry's own: measured on the same ranks); one device alone keeps the
  // kind's own; the kind stays host-cpu either way (the executor checks it).
  Profile profile = datasheet_profile();
  DeviceProfile shared = profile.devices.at("host-cpu");
  shared.memory_bandwidth_bytes_per_s /= 2;
  shared.rank_spread = {2, 1.25};
  profile.devices["host-cpu@2"] = shared;
  profile.devices["host-cpu"].shared_host = {2, "host-cpu@2"};
  ClusterSpec spec = two_cpu_ranks();
  REQUIRE(!check_cluster_spec(spec, profile));
  Cluster c = build_cluster(spec, profile);
  REQUIRE(c.devices.size() == 2);
  for (const Device& d : c.devices) {
    CHECK(d.kind == "host-cpu");
    CHECK(d.priced_as == "host-cpu@2");
    CHECK(d.figures() == "host-cpu@2");
    CHECK_THAT(d.speed_factor, WithinRel(1 / 1.25, 1e-12));
  }
  CHECK(shared_host_entry(profile, "host-cpu", 2) == "host-cpu@2");
  CHECK(shared_host_entry(profile, "host-cpu", 1) == "host-cpu");
  spec.devices_per_node = 1;
  c = build_cluster(spec, profile);
  CHECK(c.devices[0].priced_as.empty());
  CHECK(c.devices[0].figures() == "host-cpu");
  CHECK(c.devices[0].speed_factor == 1.0);
  // Two nodes of one device each: no host runs two ranks, so no device takes the entry (each gets
  // the kind's own figures; the kind has no rank spread of its own here).
  spec.nodes = 2;
  spec.inter_node.link = "ethernet-100";
  REQUIRE(!check_cluster_spec(spec, profile));
  for (const Device& d : build_cluster(spec, profile).devices) CHECK(d.figures() == "host-cpu");
}

TEST_CASE("build_cluster: PCIe V100 shares one NIC among eight GPUs", "[sim][cluster]") {
  const Cluster c = build_cluster(preset("pcie-v100", 4), datasheet_profile());
  CHECK(c.intra_kind == IntraNodeKind::PCIe);
  CHECK(c.intra.name == "pcie3");
  // One 100 Gb/s NIC = 12.5 GB/s for 8 GPUs: 1.5625 GB/s each.
  CHECK(c.inter_bandwidth_per_device() == 12.5e9 / 8);
}

TEST_CASE("build_cluster: overrides are Gbit/s per direction and microseconds", "[sim][cluster]") {
  ClusterSpec spec = preset("dgx-a100", 2);
  spec.inter_node.bandwidth_gbps = 400;
  spec.inter_node.latency_us = 2;
  spec.intra_node.bandwidth_gbps = 2400;
  const Cluster c = build_cluster(spec, datasheet_profile());
  // 400 Gbit/s = 50 GB/s; 2400 Gbit/s = 300 GB/s; 2 µs.
  CHECK(c.inter.bandwidth_bytes_per_s == 50e9);
  CHECK(c.inter.latency_s == 2e-6);
  CHECK(c.intra.bandwidth_bytes_per_s == 300e9);
  // The link's efficiency curve still applies.
  CHECK(c.inter.efficiency == datasheet_profile().link("ib-hdr").efficiency);
}

TEST_CASE("build_cluster: torus presets derive balanced dims from the node count", "[sim][cluster]") {
  SECTION("TPU v4: 16 hosts of 4 chips = 64 = 4x4x4") {
    const Cluster c = build_cluster(preset("tpu-v4-pod", 16), datasheet_profile());
    CHECK(c.torus_dims == std::vector<std::int64_t>{4, 4, 4});
    // Device 21 = 1 + 4·(1 + 4·1): coordinates (1, 1, 1).
    CHECK(c.torus_coordinates(21) == std::vector<std::int64_t>{1, 1, 1});
    // One torus link per chip: 46.875 GB/s.
    CHECK(c.inter_bandwidth_per_device() == 46.875e9);
  }
  SECTION("TPU v4: 32 hosts = 128 = 4x4x8") {
    CHECK(build_cluster(preset("tpu-v4-pod", 32), datasheet_profile()).torus_dims == std::vector<std::int64_t>{4, 4, 8});
  }
  SECTION("TPU v5e: 32 hosts of 8 chips = 256 = 16x16") {
    CHECK(build_cluster(preset("tpu-v5e-pod", 32), datasheet_profile()).torus_dims == std::vector<std::int64_t>{16, 16});
  }
  SECTION("explicit dims are kept") {
    ClusterSpec spec = preset("tpu-v5p-pod", 16);
    spec.inter_node.torus_dims = {2, 4, 8};
    CHECK(build_cluster(spec, datasheet_profile()).torus_dims == std::vector<std::int64_t>{2, 4, 8});
  }
}

TEST_CASE("check_cluster_spec: problems name the field and what is wrong", "[sim][cluster]") {
  ClusterSpec spec = preset("dgx-a100", 2);
  SECTION("unknown device, with did-you-mean") {
    spec.device = "a100-80g";
    CHECK(problem_of(spec) ==
          "/device: unknown device \"a100-80g\" (did you mean \"a100-80gb\"?); expected one of \"a100-40gb\", \"a100-80gb\", "
          "\"b200\", \"gb200\", \"h100-sxm\", \"h200\", \"host-cpu\", \"tpu-v4\", \"tpu-v5e\", \"tpu-v5p\" or \"v100\"");
  }
  SECTION("unknown link, with did-you-mean") {
    spec.inter_node.link = "ib-hrd";
    CHECK(problem_of(spec).rfind("/inter_node/link: unknown link \"ib-hrd\" (did you mean \"ib-hdr\"?); expected one of \"dcn\", ", 0) == 0);
  }
  SECTION("no nodes") {
    spec.nodes = 0;
    CHECK(problem_of(spec) == "/nodes: found 0, expected at least 1 node");
  }
  SECTION("a bandwidth override of zero") {
    spec.intra_node.bandwidth_gbps = 0;
    CHECK(problem_of(spec) == "/intra_node/bandwidth_gbps: found 0, expected a bandwidth > 0 Gbit/s");
  }
  SECTION("oversubscription below 1") {
    spec.inter_node.oversubscription = 0.5;
    CHECK(problem_of(spec) == "/inter_node/oversubscription: found 0.5, expected an oversubscription factor >= 1 (1 = non-blocking)");
  }
  SECTION("several nodes without a network") {
    spec.inter_node.kind = InterNodeKind::None;
    CHECK(problem_of(spec) == "/inter_node/kind: a cluster of 2 nodes needs an inter-node network; without one it may have 1 node only");
  }
  SECTION("torus dims that do not hold the devices") {
    ClusterSpec t = preset("tpu-v4-pod", 16);
    t.inter_node.torus_dims = {4, 4, 8};
    CHECK(problem_of(t) == "/inter_node/torus_dims: a 4x4x8 torus does not hold the cluster's 64 devices (16 nodes x 4)");
  }
  SECTION("torus dims on a fat-tree") {
    spec.inter_node.torus_dims = {4, 4};
    CHECK(problem_of(spec) == "/inter_node/torus_dims: torus_dims applies only to a torus inter-node network");
  }
  SECTION("a host CPU with several devices a node needs an intra-node link") {
    spec.device = "host-cpu";
    spec.intra_node.link = "";
    CHECK(problem_of(spec).rfind("/intra_node/link: device \"host-cpu\" has no default intra-node link; name one (", 0) == 0);
  }
}
