#include "calibrate/loader.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include "calibrate/source_text.hpp"
#include "common/error.hpp"
#include "data/augment.hpp"
#include "data/codec.hpp"
#include "data/loader.hpp"
#include "models/transformer.hpp"
#include "sim/cluster.hpp"
#include "sim/input_pipeline.hpp"
#include "strategies/plan.hpp"

namespace parasim::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// The mean of the rounds: a machine whose speed flips between states (a virtual machine's
/// neighbours come and go) gives every figure the same mixture of them over enough short rounds,
/// where a median would take one state or the other.
double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Micro-batches the checks' loaders keep ahead.
constexpr std::int64_t kPrefetch = 4;

/// The checks' plan: tp 2 × dp 2 on 4 devices (or, for the calibration, one device), global batch
/// 32 in micro-batches of 4.
strategies::Plan check_plan(std::int64_t devices) {
  models::TransformerConfig c;
  c.name = "loader-check";
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 16;
  strategies::PlanSpec spec;
  spec.tp = devices == 4 ? 2 : 1;
  spec.dp = devices == 4 ? 2 : 1;
  c.batch = 4 * spec.dp;
  strategies::TrainingSpec training;
  training.global_batch = 32;
  training.micro_batch = 4;
  return strategies::make_plan(models::build_transformer(c), training, spec, devices);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown host";
  return source_text(buf);
}

}  // namespace

sim::LoaderProfile calibrate_loader(const std::string& dir, const LoaderCalibrationOptions& o, const std::string& command, std::ostream& log) {
  const data::Dataset ds = data::Dataset::open(dir);
  const std::int64_t side = o.image_size > 0 ? o.image_size : ds.manifest().image_size;
  const std::int64_t floats = 3 * side * side;
  sim::LoaderProfile out;
  out.image_size = side;

  const strategies::Plan plan = check_plan(4);
  const auto bytes = static_cast<std::size_t>(floats) * sizeof(float);
  if (ds.size() < plan.global_batch)
    throw InputError(dir, 0, 0, "", "the dataset holds " + std::to_string(ds.size()) + " samples; the calibration needs at least " +
                                        std::to_string(plan.global_batch) + " (a step of its checks' plan)");

  // A loader thread's copy into the devices' buffers: a tensor into a ring of buffers as large as the
  // checks' loader holds (kPrefetch + 1 micro-batches of its 4 devices), the first pass touching
  // the pages.
  {
    const std::size_t slots = static_cast<std::size_t>((kPrefetch + 1) * 4 * plan.micro_batch);
    std::vector<float> ring(slots * static_cast<std::size_t>(floats), 0.0f), tensor(static_cast<std::size_t>(floats), 1.0f);
    std::vector<double> rates;
    for (int r = 0; r <= o.repeats; ++r) {
      const auto t0 = Clock::now();
      for (std::size_t k = 0; k < slots; ++k) data::copy_to_device(ring.data() + k * static_cast<std::size_t>(floats), tensor.data(), static_cast<std::size_t>(floats));
      if (r > 0) rates.push_back(static_cast<double>(slots * bytes) / seconds_since(t0));
    }
    out.copy_bytes_per_s = median(rates);
  }
  log << "loader: a " << bytes_text(static_cast<double>(bytes)) << " tensor copied into device buffers: " << fixed(out.copy_bytes_per_s / 1e9, 2) << " GB/s\n";

  // One run of the real loader for plan `run` with `threads` threads under `placement`: its wall time
  // per sample over `check_steps` steps after one of warm-up, each micro-batch given back once
  // taken, as a training loop does (data/loader.hpp, next).
  auto run_loader = [&](const strategies::Plan& run, data::Placement placement, std::int64_t threads, int r) {
    data::LoaderOptions lo;
    lo.placement = placement;
    lo.threads = threads;
    lo.prefetch = kPrefetch;
    lo.seed = static_cast<std::uint64_t>(r + 1);
    lo.image_size = side;
    lo.devices_per_host = run.mesh.device_count();
    data::DataLoader loader(dir, run, lo);
    for (std::int64_t u = 0; u < run.micro_batches; ++u) (void)loader.next();
    const auto t0 = Clock::now();
    for (std::int64_t u = 0; u < o.check_steps * run.micro_batches; ++u) (void)loader.next();
    return seconds_since(t0) / static_cast<double>(o.check_steps * run.global_batch);
  };
  // Every figure is timed in rounds, each round timing each once, and a figure's mean is over the
  // rounds: a drift of the machine's speed (another process, a virtual machine's neighbours) then
  // falls on every figure alike rather than on whichever was timed during it.
  struct Config {
    data::Placement placement;
    std::int64_t threads;
    std::vector<double> runs;
  };
  std::vector<Config> configs;
  for (const data::Placement placement : {data::Placement::Naive, data::Placement::Sharded})
    for (std::int64_t threads = 1; threads <= o.max_threads; ++threads)
      if (placement != data::Placement::Naive || threads == 1) configs.push_back({placement, threads, {}});  // naive has one thread
  // The calibration: the loader feeding one device with 1, 2, … threads. Each thread's time for a
  // sample is the threads times the wall time per sample; less the sample's one copy, its read,
  // decode and augmentation.
  const strategies::Plan single = check_plan(1);
  std::vector<std::vector<double>> decode_runs(static_cast<std::size_t>(o.max_threads));
  (void)run_loader(single, data::Placement::Sharded, 1, -1);  // warms the page cache
  for (int r = 0; r < o.repeats; ++r) {
    for (std::int64_t t = 1; t <= o.max_threads; ++t) decode_runs[static_cast<std::size_t>(t - 1)].push_back(run_loader(single, data::Placement::Sharded, t, r));
    for (Config& c : configs) c.runs.push_back(run_loader(plan, c.placement, c.threads, r));
  }
  const double copy_s = static_cast<double>(bytes) / out.copy_bytes_per_s;
  for (std::int64_t t = 1; t <= o.max_threads; ++t) {
    const double wall = mean(decode_runs[static_cast<std::size_t>(t - 1)]);
    out.decode_s_at_threads.push_back(std::max(static_cast<double>(t) * wall - copy_s, 0.01 * static_cast<double>(t) * wall));
    log << "loader: read, decode and augment to " << side << " × " << side << ", each of " << t << " thread" << (t == 1 ? "" : "s") << " at once: "
        << fixed(out.decode_s_at_threads.back() * 1e6, 1) << " µs a sample (the loader feeding one device: " << fixed(wall * 1e6, 1)
        << " µs a sample, the mean of " << o.repeats << " runs)\n";
  }
  out.decode_s_per_sample = out.decode_s_at_threads.front();

  // The checks: the real loader against the simulated pipeline's loader time, per sample.
  sim::Cluster host;
  host.nodes = 1;
  host.devices_per_node = 4;
  for (std::int64_t d = 0; d < 4; ++d) host.devices.push_back({d, 0, "host-cpu", 1, ""});
  const std::int64_t samples = std::min<std::int64_t>(ds.size(), 4096);
  double stored = 0;
  for (std::int64_t i = 0; i < samples; ++i) stored += ds.stored_bytes(i);
  for (const Config& c : configs) {
    const data::Placement placement = c.placement;
    const std::int64_t threads = c.threads;
    sim::InputPipeline in;
    in.placement = placement;
    in.bytes = {stored / static_cast<double>(samples), static_cast<double>(bytes), sizeof(std::int64_t)};
    in.threads_per_host = threads;
    in.prefetch = kPrefetch;
    in.decode_s_per_sample = out.decode_s_per_sample;
    in.decode_s_at_threads = out.decode_s_at_threads;
    in.host_to_device_bytes_per_s = out.copy_bytes_per_s;
    in.loader_copy_bytes_per_s = out.copy_bytes_per_s;
    const sim::LoaderCosts costs = sim::loader_costs(in, plan, host);
    const double predicted = costs.host_step_s[0] / static_cast<double>(plan.global_batch);
    const double measured = mean(c.runs);
    sim::LoaderCheck check{std::string(data::to_string(placement)), threads, measured, predicted};
    log << "loader: " << check.placement << ", " << threads << " thread" << (threads == 1 ? "" : "s") << ": measured "
        << fixed(check.measured_s_per_sample * 1e6, 1) << " µs a sample, predicted " << fixed(predicted * 1e6, 1) << " µs ("
        << (predicted >= check.measured_s_per_sample ? "+" : "") << fixed((predicted / check.measured_s_per_sample - 1) * 100, 1) << "%)\n";
    out.checks.push_back(check);
  }
  out.source = "measured by `" + source_text(command) + "` on " + host_name() + ", " + today_utc() + ", " + data::codec_plugin().versions() + ": " +
               "the real loader over " + source_text(dir) + " (" + std::to_string(ds.size()) + " samples, " + std::string(data::to_string(ds.format())) +
               "), read from the page cache, the mean of " + std::to_string(o.repeats) + " rounds of runs of " + std::to_string(o.check_steps) + " steps";
  return out;
}

}  // namespace parasim::calibrate
