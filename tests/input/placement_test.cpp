// The loader's placement arithmetic (data/placement.hpp) against counts derived by hand: which
// samples each device needs and the bytes each placement reads and moves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "data/placement.hpp"
#include "tests/input/loader_plan.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using data::Placement;

namespace {

strategies::Plan plan_of(const strategies::PlanSpec& spec, std::int64_t devices, std::int64_t global_batch, std::int64_t micro_batch) {
  return testing::loader_plan(spec, devices, global_batch, micro_batch);
}

// An ImageNet-style sample: 110,000 bytes of JPEG on disk; decoded, 3 × 224 × 224 fp32 = 602,112
// bytes of input and an 8-byte label.
const data::SampleBytes kImage{110000, 602112, 8};

}  // namespace

TEST_CASE("loader: each replica takes its micro-batches as Megatron's sampler gives them, none twice", "[data][placement]") {
  // Global batch 16, micro-batch 2, 2 replicas: each group of 4 samples gives replica 0 the first
  // two and replica 1 the next two.
  CHECK(data::replica_samples(16, 2, 2, 0) == std::vector<std::int64_t>{0, 1, 4, 5, 8, 9, 12, 13});
  CHECK(data::replica_samples(16, 2, 2, 1) == std::vector<std::int64_t>{2, 3, 6, 7, 10, 11, 14, 15});
  // Any shape: the replicas' samples are disjoint and cover the step.
  for (const auto& [batch, micro, replicas] : {std::tuple{24, 3, 4}, std::tuple{64, 1, 8}, std::tuple{12, 6, 2}}) {
    std::set<std::int64_t> seen;
    std::size_t count = 0;
    for (std::int64_t r = 0; r < replicas; ++r)
      for (const auto s : data::replica_samples(batch, micro, replicas, r)) {
        seen.insert(s);
        ++count;
      }
    CHECK(count == static_cast<std::size_t>(batch));
    CHECK(seen.size() == static_cast<std::size_t>(batch));
    CHECK(*seen.rbegin() == batch - 1);
  }
}

TEST_CASE("loader: under DP 2 x TP 2 the sharded loader reads each sample once and naive moves 4 times its bytes", "[data][placement]") {
  strategies::PlanSpec spec;
  spec.tp = 2;
  spec.dp = 2;
  const strategies::Plan plan = plan_of(spec, 4, 8, 1);  // one host of 4 devices; 4 samples a replica
  const double sample = 602112 + 8;

  // Naive: the first host reads the step's 8 samples once and sends all 8 to each of the 4 devices:
  // 4 × 8 × 602,120 = 19,267,840 bytes.
  const data::LoadPlan naive = data::plan_loading(plan, 4, kImage, Placement::Naive);
  CHECK(naive.samples_read_per_host == std::vector<std::int64_t>{8});
  CHECK(naive.read_bytes == 8 * 110000.0);
  CHECK(naive.host_to_device_bytes == 4 * 8 * sample);
  CHECK(naive.network_bytes == 0);  // one host

  // Sharded: each replica's 4 samples read once (8 in all, each once); the first device of each
  // tensor-parallel pair takes 4 × 602,120 = 2,408,480 bytes from the host and gives them to the
  // other over the device link: 4,816,960 bytes over the host link, as many between devices.
  const data::LoadPlan sharded = data::plan_loading(plan, 4, kImage, Placement::Sharded);
  CHECK(sharded.samples_read_per_host == std::vector<std::int64_t>{8});
  CHECK(sharded.read_bytes == 8 * 110000.0);
  CHECK(sharded.host_to_device_bytes == 2 * 4 * sample);
  CHECK(sharded.device_to_device_bytes == 2 * 4 * sample);
  std::set<std::int64_t> all;
  for (const auto& f : sharded.devices) {
    CHECK(f.samples.size() == 4);
    CHECK(f.inputs);
    CHECK(f.labels);
    CHECK(f.host_bytes + f.peer_bytes == 4 * sample);
    all.insert(f.samples.begin(), f.samples.end());
  }
  CHECK(all.size() == 8);
  // Devices 0 and 1 are one tensor-parallel pair (the innermost axis), so they hold one replica's samples.
  CHECK(sharded.devices[0].samples == sharded.devices[1].samples);
  CHECK(sharded.devices[0].samples != sharded.devices[2].samples);
  // The acceptance's bound: naive moves at least TP (2) times the sharded loader's host bytes; here 4.
  CHECK(naive.host_to_device_bytes / sharded.host_to_device_bytes == Approx(4.0));

  // Per device: every device loads its replica's 4 samples itself: 16 reads, 4 × 4 samples copied.
  const data::LoadPlan per_device = data::plan_loading(plan, 4, kImage, Placement::PerDevice);
  CHECK(per_device.samples_read_per_host == std::vector<std::int64_t>{16});
  CHECK(per_device.host_to_device_bytes == 4 * 4 * sample);
  CHECK(per_device.device_to_device_bytes == 0);
}

TEST_CASE("loader: under PP 2 x DP 2 on two hosts only the first stage takes inputs and only the last labels", "[data][placement]") {
  strategies::PlanSpec spec;
  spec.pp = 2;
  spec.dp = 2;
  // Mesh {pp, dp}: devices 0 and 1 are stage 0 (host 0), devices 2 and 3 stage 1 (host 1).
  const strategies::Plan plan = plan_of(spec, 4, 8, 2);
  const data::LoadPlan sharded = data::plan_loading(plan, 2, kImage, Placement::Sharded);
  for (const std::int64_t d : {0, 1}) {
    CHECK(sharded.devices[static_cast<std::size_t>(d)].inputs);
    CHECK_FALSE(sharded.devices[static_cast<std::size_t>(d)].labels);
    CHECK(sharded.devices[static_cast<std::size_t>(d)].host_bytes == 4 * 602112.0);
  }
  for (const std::int64_t d : {2, 3}) {
    CHECK_FALSE(sharded.devices[static_cast<std::size_t>(d)].inputs);
    CHECK(sharded.devices[static_cast<std::size_t>(d)].labels);
    CHECK(sharded.devices[static_cast<std::size_t>(d)].host_bytes == 4 * 8.0);
  }
  // Each host reads both replicas' samples (a record holds the input and its label): 8 each.
  CHECK(sharded.samples_read_per_host == std::vector<std::int64_t>{8, 8});
  // Naive: host 0's one loader sends all 8 samples to each device; the two on host 1 over the network.
  const data::LoadPlan naive = data::plan_loading(plan, 2, kImage, Placement::Naive);
  CHECK(naive.samples_read_per_host == std::vector<std::int64_t>{8, 0});
  CHECK(naive.network_bytes == 2 * 8 * (602112 + 8.0));
}

TEST_CASE("loader: under context parallelism each device takes 1/cp of each sample's sequence", "[data][placement]") {
  strategies::PlanSpec spec;
  spec.cp = 2;
  spec.dp = 2;
  const strategies::Plan plan = plan_of(spec, 4, 8, 1);
  // A 64-token sample: 64 int32 token ids as input, 64 as labels (256 bytes each).
  const data::LoadPlan sharded = data::plan_loading(plan, 4, {256, 256, 256}, Placement::Sharded);
  for (const auto& f : sharded.devices) {
    CHECK(f.sequence_share == 0.5);
    // 4 samples a replica × (256 + 256) bytes × 1/2.
    CHECK(f.host_bytes == 4 * 512 * 0.5);
  }
  CHECK(sharded.samples_read_per_host == std::vector<std::int64_t>{8});
}
