// The outer step of local-update training (sim/local_update.hpp) and the three-level hierarchical
// collective across sites it leans on (sim/collectives/hierarchical.cpp), on small hand-built
// clusters whose links have efficiency 1, so every figure below is derived by hand beside it.
#include <vector>

#include <catch2/catch.hpp>

#include "test_clusters.hpp"

#include "sim/collectives.hpp"
#include "sim/local_update.hpp"
#include "sim/simulate.hpp"

using namespace parasim::sim;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

using parasim::testing::flat;
using parasim::testing::switched;

/// switched(nodes, per_node) split into two sites joined by a 5 GB/s, 1 ms WAN link per site.
Cluster two_sites(std::int64_t nodes, std::int64_t per_node) {
  Cluster c = switched(nodes, per_node);
  c.sites = 2;
  c.wan = flat("wan", 5e9, 1e-3);
  return c;
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

/// Two replicas, one device each (devices 0 and 1, one per site), `inner` seconds an inner step.
OuterProblem two_replicas(const parasim::strategies::LocalUpdateSpec& spec, double inner, double before, double after, double bytes) {
  OuterProblem p;
  p.spec = spec;
  p.spec.replicas = 2;
  p.replicas = {{0, inner, before, after}, {1, inner, before, after}};
  p.wire_bytes = bytes;
  return p;
}

}  // namespace

TEST_CASE("hierarchical across sites: nodes, then each site's nodes, then one exchange over the WAN", "[sim][collectives][local-update]") {
  // 4 nodes × 2 devices, sites {0, 1} and {2, 3}: k = 2 members a node, m = 2 nodes a site, s = 2
  // sites; S = 1e9 bytes.
  const Cluster c = two_sites(4, 2);
  const auto e = collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9, CollectiveAlgorithm::Hierarchical);
  REQUIRE(e.algorithm == CollectiveAlgorithm::Hierarchical);
  // Inside a node, a ring of 2 on S: 1/2 · 1e9 / 100e9 + 1 · 1e-6 = 0.005001 s a half.
  // Between a site's 2 nodes, 2 rings on S/2 = 5e8, each on its device's 10 GB/s NIC (one leaf per
  // node and rail, uplinks as wide as the NICs): 1/2 · 5e8 / 10e9 + 1 · 5e-6 = 0.025005 s a half.
  // Between the sites, 4 rings on S/4 = 2.5e8, each sending 1/2 of it per half: the site's WAN link
  // carries 4 · 1.25e8 = 5e8 bytes at 5 GB/s = 0.1 s (a NIC or a leaf uplink 1.25e8 / 10e9 =
  // 0.0125 s), + 1 · 1 ms = 0.101 s a half.
  // All-reduce: both halves of each level: 2 · (0.005001 + 0.025005 + 0.101) = 0.262012 s.
  CHECK_THAT(e.time.seconds(), WithinRel(0.262012, 1e-9));
  // Sent per device: 2 · 1/2 · S inside the node; 2 · (1/2 · 5e8 + 1.25e8) = 7.5e8 between nodes.
  CHECK_THAT(e.intra_bytes_per_device, WithinRel(1e9, 1e-12));
  CHECK_THAT(e.inter_bytes_per_device, WithinRel(7.5e8, 1e-12));
  // Auto takes it: a ring through the 8 devices pays the WAN's 1 ms on each of its 14 steps.
  CHECK(collective_time(c, CollectiveKind::AllReduce, iota(8), 1e9).algorithm == CollectiveAlgorithm::Hierarchical);
  // The flows the simgrid backend runs take the closed form's time on an idle network, for the
  // halves too (reduce-scatter: 0.131006 s; all-gather the same).
  for (const auto kind : {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
    const auto closed = collective_time(c, kind, iota(8), 1e9, CollectiveAlgorithm::Hierarchical).time.seconds();
    CHECK_THAT(uncontended_seconds(c, collective_flows(c, kind, iota(8), 1e9, CollectiveAlgorithm::Hierarchical)), WithinRel(closed, 1e-9));
  }
  CHECK_THAT(collective_time(c, CollectiveKind::ReduceScatter, iota(8), 1e9, CollectiveAlgorithm::Hierarchical).time.seconds(),
             WithinRel(0.131006, 1e-9));
}

TEST_CASE("DiLoCo's outer step: H inner steps, the pseudo-gradient, its all-reduce over the WAN, the outer optimizer", "[sim][local-update]") {
  const Cluster c = two_sites(2, 1);
  parasim::strategies::LocalUpdateSpec spec;
  spec.inner_steps = 4;
  const OuterProblem p = two_replicas(spec, 1.0, 0.1, 0.2, 1e9);
  // The all-reduce of 1e9 bytes between the two sites' devices (its closed form is tested in
  // collectives_test.cpp): a ring of 2 through the 5 GB/s WAN, 1e9 / 5e9 + 2 · 1 ms = 0.202 s.
  const double all_reduce = collective_time(c, CollectiveKind::AllReduce, iota(2), 1e9).time.seconds();
  CHECK_THAT(all_reduce, WithinRel(0.202, 1e-9));
  for (const Backend backend : {Backend::Analytical, Backend::SimGrid}) {
    INFO(to_string(backend));
    const OuterRun run = simulate_outer(p, c, backend);
    // 4 · 1 s + 0.1 s + 0.202 s + 0.2 s = 4.502 s, the replicas waiting for the synchronisation.
    CHECK_THAT(run.outer_step_s, WithinRel(4.502, 1e-9));
    CHECK_THAT(run.compute_utilisation, WithinRel(4 / 4.502, 1e-9));
    // Each replica sends 1e9 bytes to the other once an outer step, each flow crossing two WAN
    // links (its site's up, the other's down): 4e9 bytes over the WAN links, 1e9 on each.
    CHECK_THAT(run.wan_bytes, WithinRel(4e9, 1e-9));
    CHECK_THAT(run.wan_bytes_per_site, WithinRel(1e9, 1e-9));
  }
}

TEST_CASE("Streaming DiLoCo: fragments on a stagger, each hidden behind the next inner steps", "[sim][local-update]") {
  const Cluster c = two_sites(2, 1);
  parasim::strategies::LocalUpdateSpec spec;
  spec.algorithm = parasim::strategies::LocalUpdateAlgorithm::StreamingDiLoCo;
  spec.inner_steps = 4;
  spec.fragments = 2;
  spec.overlap_steps = 1;
  // A fragment is half the pseudo-gradient: 5e8 / 5e9 + 2 ms = 0.102 s, under the 1 s inner step it
  // overlaps: the outer step is its 4 inner steps alone.
  const OuterRun hidden = simulate_outer(two_replicas(spec, 1.0, 0, 0, 1e9), c, Backend::Analytical);
  CHECK_THAT(hidden.outer_step_s, WithinRel(4.0, 1e-9));
  CHECK_THAT(hidden.compute_utilisation, WithinRel(1.0, 1e-9));
  // The same bytes in all: 2 fragments of 5e8, each crossing two WAN links both ways.
  CHECK_THAT(hidden.wan_bytes, WithinRel(4e9, 1e-9));
  // Without overlap each fragment stalls the replicas: 4 + 2 · 0.102 = 4.204 s.
  spec.overlap_steps = 0;
  CHECK_THAT(simulate_outer(two_replicas(spec, 1.0, 0, 0, 1e9), c, Backend::Analytical).outer_step_s, WithinRel(4.204, 1e-9));
  // A fragment longer than the inner step it overlaps stalls by the difference: at 5e8 B/s a
  // fragment takes 1 + 0.002 s, so each of the two stalls 0.002 s: 4.004 s.
  spec.overlap_steps = 1;
  Cluster slow = c;
  slow.wan.bandwidth_bytes_per_s = 5e8;
  CHECK_THAT(simulate_outer(two_replicas(spec, 1.0, 0, 0, 1e9), slow, Backend::Analytical).outer_step_s, WithinRel(4.004, 1e-9));
}

TEST_CASE("the WAN bandwidth for a compute utilisation: DiLoCo against Streaming DiLoCo", "[sim][local-update]") {
  const Cluster c = two_sites(2, 1);
  parasim::strategies::LocalUpdateSpec spec;
  spec.inner_steps = 4;
  // DiLoCo: 4 / (4 + T) >= 0.95 for T = 1e9 / B + 2 ms <= 4 / 0.95 − 4 = 0.2105263 s, so
  // B >= 1e9 / 0.2085263 = 4.7955e9 B/s.
  const BandwidthNeed diloco = wan_bandwidth_for(two_replicas(spec, 1.0, 0, 0, 1e9), c, Backend::Analytical, 0.95);
  REQUIRE(diloco.reachable);
  CHECK_THAT(diloco.bytes_per_s, WithinRel(1e9 / (4 / 0.95 - 4 - 0.002), 2e-3));
  // Streaming, 2 fragments overlapping one inner step each: each stalls T_f − 1 s when its
  // 5e8 / B + 2 ms exceeds it; 4 / (4 + 2 (T_f − 1)) >= 0.95 for T_f <= 1.1052632 s, so
  // B >= 5e8 / 1.1032632 = 4.532e8 B/s: a tenth of DiLoCo's.
  spec.algorithm = parasim::strategies::LocalUpdateAlgorithm::StreamingDiLoCo;
  spec.fragments = 2;
  spec.overlap_steps = 1;
  const BandwidthNeed streaming = wan_bandwidth_for(two_replicas(spec, 1.0, 0, 0, 1e9), c, Backend::Analytical, 0.95);
  REQUIRE(streaming.reachable);
  CHECK_THAT(streaming.bytes_per_s, WithinRel(5e8 / (1 + (4 / 0.95 - 4) / 2 - 0.002), 2e-3));
  // A WAN latency the inner steps cannot cover: no bandwidth reaches 95%.
  Cluster far = c;
  far.wan.latency_s = 1.0;
  spec.algorithm = parasim::strategies::LocalUpdateAlgorithm::DiLoCo;
  spec.fragments = 1;
  spec.overlap_steps = 0;
  CHECK_FALSE(wan_bandwidth_for(two_replicas(spec, 1.0, 0, 0, 1e9), far, Backend::Analytical, 0.95).reachable);
}
