#include "sim/input_verdict.hpp"

#include "common/error.hpp"

namespace parasim::sim {

void add_input_verdict(Simulation& simulation, const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                       Backend backend, const LowerOptions& options) {
  PARASIM_CHECK(options.input && simulation.result.input, "a simulation with an input pipeline");
  InputFigures& f = *simulation.result.input;
  auto step_with = [&](const InputPipeline& in) {
    LowerOptions o = options;
    o.input = in;
    return simulate(graph, plan, cluster, profile, backend, o).result.step_time_s;
  };
  // Loaders that take no time: no latency, no decoding, storage without limit.
  InputPipeline unbounded = *options.input;
  unbounded.decode_s_per_sample = 0;
  unbounded.decode_s_at_threads.clear();
  unbounded.file_latency_s = 0;
  unbounded.storage_bytes_per_s = 0;
  f.verdict = true;
  f.unbounded_step_s = step_with(unbounded);
  const double limit = f.unbounded_step_s * (1 + kInputBoundTolerance);
  f.input_bound = simulation.result.step_time_s > limit;
  if (!f.input_bound) {
    f.fewest_threads = f.threads_per_host;
    f.step_at_fewest_s = simulation.result.step_time_s;
    return;
  }
  // The naive placement has one thread whatever the setting; past the most tried nothing is left.
  if (options.input->placement == data::Placement::Naive || options.input->threads_per_host >= kMaxLoaderThreads) return;
  InputPipeline in = *options.input;
  in.threads_per_host = kMaxLoaderThreads;
  const double most = step_with(in);
  if (most > limit) return;  // the storage's bandwidth or the copies bound it
  // Bisection: threads_per_host is too few, kMaxLoaderThreads enough.
  std::int64_t low = options.input->threads_per_host, high = kMaxLoaderThreads;
  double at_high = most;
  while (high - low > 1) {
    in.threads_per_host = low + (high - low) / 2;
    const double t = step_with(in);
    if (t <= limit) {
      high = in.threads_per_host;
      at_high = t;
    } else {
      low = in.threads_per_host;
    }
  }
  f.fewest_threads = high;
  f.step_at_fewest_s = at_high;
}

}  // namespace parasim::sim
