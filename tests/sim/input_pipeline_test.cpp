// The simulated input pipeline (sim/input_pipeline.hpp, a scenario's "data"): step times derived by
// hand for a step bound by its loaders and for one that is not, the verdict and the fewest loader
// threads, the bytes each placement moves, and the section's faults, each at its field.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/data.hpp"
#include "scenarios/loader.hpp"
#include "sim/cluster.hpp"
#include "sim/input_verdict.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"
#include "tests/scenarios/scenario_error.hpp"

using namespace parasim;
using Catch::Matchers::Contains;

namespace {

/// ResNet-50 at 224 px, data parallel over 2 A100 of one host; global batch 8 in micro-batches of 1:
/// each replica takes 4 micro-batches (m = 4). Line 7 holds the data section.
struct Text {
  std::string data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 100 })";
  std::string plan = R"("plan": { "dp": 2 },)";
  std::string model = R"("model": { "preset": "resnet50" },)";
  std::string training = R"("training": { "global_batch": 8, "micro_batch": 1, "precision": "fp16" },)";
  std::string cluster = R"("cluster": { "device": "a100-80gb", "nodes": 1, "devices_per_node": 2 },)";
  [[nodiscard]] std::string str() const {
    return "{\n  \"name\": \"t\",\n  " + model + "\n  " + training + "\n  " + cluster + "\n  " + plan + "\n  " + data + "\n}\n";
  }
};

struct Run {
  sim::Simulation simulation;
  sim::Simulation without_data;  ///< the same step with no input pipeline
};

/// Simulates a scenario as `parasim SCENARIO` does: with its input pipeline and the verdict, and
/// again without the pipeline.
Run run(const scenarios::Scenario& s, sim::Backend backend = sim::Backend::Analytical) {
  const sim::Profile profile = scenarios::scenario_profile(s);
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const models::Graph graph = scenarios::build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  sim::LowerOptions options;
  options.replicate_data_parallel = true;
  return {.simulation = scenarios::simulate_step(s, graph, plan, cluster, profile, backend, options),
          .without_data = sim::simulate(graph, plan, cluster, profile, backend, options)};
}

Run run(const std::string& text, sim::Backend backend = sim::Backend::Analytical) {
  return run(scenarios::parse_scenario(text, "s.json"), backend);
}

// One sample as a device receives it: ResNet-50's 3 × 224 × 224 input as fp32 (602,112 bytes) and an
// int64 label. A device's copy of one micro-batch (1 sample) at PCIe 4.0 × 16's 252 Gbit/s:
constexpr double kSample = 3.0 * 224 * 224 * 4 + 8;
constexpr double kCopyS = kSample / (252e9 / 8);

}  // namespace

TEST_CASE("input pipeline: a step bound by its loaders lasts its loaders' time for the step, and a queue of one slot adds its copies", "[sim][input]") {
  // The host reads the step's 8 samples (both replicas' 4) on one thread at 100 ms each: 0.8 s. Each
  // of the 4 loads of a device takes a quarter, L = 0.2 s. With 2 or more slots, micro-batches 0
  // and 1 were loaded in the step before; the copy of micro-batch 0 (C) frees the first slot, and
  // from then on the loads run back to back, each slot freed long before (a micro-batch's kernels
  // take milliseconds): the fourth ends at C + 4L, after every kernel of the step. With one slot,
  // each load waits for the copy of the micro-batch before it, which waits for that one's load:
  // copy 0 ends at C, load 1 at C + L, copy 1 at 2C + L, ..., load 4 (the next step's first) at 4 (C + L).
  for (const int prefetch : {1, 2, 4}) {
    Text t;
    t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 100, "prefetch": )" + std::to_string(prefetch) + " }";
    const Run r = run(t.str());
    INFO("prefetch " << prefetch);
    CHECK(r.simulation.result.step_time_s == Approx(prefetch == 1 ? 4 * (0.2 + kCopyS) : kCopyS + 0.8).epsilon(1e-9));
    REQUIRE(r.simulation.result.input.has_value());
    const auto& f = *r.simulation.result.input;
    CHECK(f.loader_step_s == Approx(0.8).epsilon(1e-12));
    CHECK(f.samples_read == 8);
    CHECK(f.read_bytes == 8 * 3074.0);            // CIFAR-100's record
    CHECK(f.host_to_device_bytes == 8 * kSample);  // each replica its 4
    CHECK(f.input_bound);
    // "Data loading" counts only what the compute waits for: the step less the kernels and the
    // gradient traffic of the step without input (its kernels are the same; its all-reduce hides
    // under its backward as it did).
    const auto& b = r.simulation.result.breakdown;
    CHECK(b.seconds[static_cast<std::size_t>(sim::Category::DataLoad)] ==
          Approx(r.simulation.result.step_time_s - r.without_data.result.step_time_s).epsilon(1e-6));
    CHECK(b.compute_s() + b.exposed_comm_s() + b.seconds[static_cast<std::size_t>(sim::Category::DataLoad)] + b.idle_s ==
          Approx(r.simulation.result.step_time_s).epsilon(1e-9));
    CHECK(b.compute_s() == Approx(r.without_data.result.breakdown.compute_s()).epsilon(1e-9));
  }
}

TEST_CASE("input pipeline: loaders faster than the kernels cost the step only its copies", "[sim][input]") {
  // Nothing to decode and no storage limit: each forward waits only for its copy, issued after the
  // device's previous kernel, so the step is the step without input plus the 4 copies.
  Text t;
  t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 0 })";
  const Run r = run(t.str());
  CHECK(r.simulation.result.step_time_s == Approx(r.without_data.result.step_time_s + 4 * kCopyS).epsilon(1e-9));
  const auto& f = *r.simulation.result.input;
  CHECK_FALSE(f.input_bound);
  CHECK(f.unbounded_step_s == r.simulation.result.step_time_s);
  CHECK(f.fewest_threads == 1);
  // The same under SimGrid, whose network times the gradient all-reduce.
  const Run g = run(t.str(), sim::Backend::SimGrid);
  CHECK(g.simulation.result.step_time_s == Approx(g.without_data.result.step_time_s + 4 * kCopyS).epsilon(1e-6));
}

TEST_CASE("input pipeline: the fewest loader threads are the fewest that bring the step within 1% of unbounded loaders", "[sim][input]") {
  // 20 ms a sample: one thread takes 160 ms for the step's 8 samples, far above its kernels.
  Text t;
  t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 20 })";
  const Run r = run(t.str());
  const auto& f = *r.simulation.result.input;
  REQUIRE(f.input_bound);
  REQUIRE(f.fewest_threads > 1);
  const double limit = f.unbounded_step_s * (1 + sim::kInputBoundTolerance);
  // Its definition, checked by simulating the count and the one below it.
  auto with_threads = [&](std::int64_t threads) {
    Text u = t;
    u.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 20, "threads_per_host": )" + std::to_string(threads) + " }";
    return run(u.str()).simulation.result;
  };
  const sim::Result at = with_threads(f.fewest_threads);
  CHECK(at.step_time_s <= limit);
  CHECK(at.step_time_s == f.step_at_fewest_s);
  CHECK_FALSE(at.input->input_bound);
  CHECK(with_threads(f.fewest_threads - 1).step_time_s > limit);
  // A storage too slow for any thread count: 8 records of 3,074 bytes at 1 Mbit/s take 0.197 s.
  t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 20, "storage": { "bandwidth_gbps": 0.001 } })";
  const Run slow = run(t.str());
  CHECK(slow.simulation.result.input->input_bound);
  CHECK(slow.simulation.result.input->storage_bound);
  CHECK(slow.simulation.result.input->loader_step_s == Approx(8 * 3074.0 * 8 / 1e6).epsilon(1e-12));
  CHECK(slow.simulation.result.input->fewest_threads == 0);
}

TEST_CASE("input pipeline: under DP 2 × TP 2 the sharded loader reads each sample once, the naive one moves TP times more", "[sim][input]") {
  // GPT-3 125M at 512 tokens on 4 A100 of one host, tp 2 × dp 2; global batch 8. A sample: 512 int64
  // tokens in (4,096 bytes), 512 int64 labels and fp32 loss-mask values (6,144 bytes), 512 uint16
  // tokens stored (1,024 bytes: a vocabulary under 65,500).
  Text t;
  t.model = R"("model": { "preset": "gpt3-125m", "seq_len": 512 },)";
  t.cluster = R"("cluster": { "device": "a100-80gb", "nodes": 1, "devices_per_node": 4 },)";
  t.plan = R"("plan": { "tp": 2, "dp": 2 },)";
  const double sample = 4096 + 6144;
  t.data = R"("data": { "format": "tokens", "placement": "sharded" })";
  const auto sharded = *run(t.str()).simulation.result.input;
  CHECK(sharded.samples_read == 8);  // once each, by the one host
  CHECK(sharded.read_bytes == 8 * 1024.0);
  // Each replica's 4 samples to its tensor-parallel group's first device, then broadcast to the other.
  CHECK(sharded.host_to_device_bytes == 2 * 4 * sample);
  CHECK(sharded.device_to_device_bytes == 2 * 4 * sample);
  t.data = R"("data": { "format": "tokens", "placement": "naive" })";
  const auto naive = *run(t.str()).simulation.result.input;
  // Every device all 8 samples.
  CHECK(naive.host_to_device_bytes == 4 * 8 * sample);
  CHECK(naive.host_to_device_bytes + naive.device_to_device_bytes >= 2 * (sharded.host_to_device_bytes + sharded.device_to_device_bytes));
}

TEST_CASE("input pipeline: the Wide-ResNet CIFAR-100 example on a slow file system is input-bound, and its suggested threads end it", "[sim][input]") {
  const scenarios::Scenario s = scenarios::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/examples/wide-resnet50-2-cifar100-nfs.json");
  const Run base = run(s);
  const auto& f = *base.simulation.result.input;
  CHECK(f.input_bound);
  REQUIRE(f.fewest_threads > 0);
  scenarios::Scenario applied = s;
  applied.data->threads_per_host = f.fewest_threads;
  const Run after = run(applied);
  CHECK_FALSE(after.simulation.result.input->input_bound);
  CHECK(after.simulation.result.step_time_s <= after.simulation.result.input->unbounded_step_s * (1 + sim::kInputBoundTolerance));
  // The example's first what-if applies that count.
  REQUIRE(s.what_ifs.size() >= 1);
  CHECK(s.what_ifs[0].data->threads_per_host == f.fewest_threads);
}

TEST_CASE("input pipeline: faults in the data section, each at its field", "[sim][input][scenarios]") {
  Text t;
  t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 1, "threads_per_host": 0 })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("s.json:7:") && Contains("at /data/threads_per_host") && Contains("found integer 0, expected an integer >= 1"));
  t.data = R"("data": { "format": "cifar-bin", "decode_ms_per_sample": 1, "prefetch": 0 })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("at /data/prefetch") && Contains("found integer 0, expected an integer >= 1"));
  t.data = R"("data": { "format": "cifar-bin" })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("at /data") && Contains("needs \"decode_ms_per_sample\""));
  t.data = R"("data": { "format": "jpeg-tar", "decode_ms_per_sample": 3 })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("at /data") && Contains("needs \"stored_bytes_per_sample\""));
  t.data = R"("data": { "format": "tokens", "threads": 4 })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("at /data/threads") && Contains("unknown key \"threads\""));
  t.data = R"("data": { "format": "png" })";
  CHECK_THAT(testing::scenario_error(t.str()), Contains("at /data/format") && Contains("\"png\""));
}
