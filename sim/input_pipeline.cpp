#include "sim/input_pipeline.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "sim/cluster.hpp"

namespace parasim::sim {

double host_load_s(const InputPipeline& in, double samples, std::int64_t threads) {
  PARASIM_CHECK(threads >= 1, "a loader has at least one thread");
  // Each thread takes one sample at a time: it waits the file's latency, then decodes and augments
  // it; the threads run side by side. The storage streams the stored bytes at its bandwidth, shared
  // by the threads. Reading and decoding overlap (many samples are in flight), so the slower bounds.
  const double per_thread = samples * (in.file_latency_s + in.decode_s_per_sample) / static_cast<double>(threads);
  const double storage = in.storage_bytes_per_s > 0 ? samples * in.bytes.stored / in.storage_bytes_per_s : 0;
  return std::max(per_thread, storage);
}

LoaderCosts loader_costs(const InputPipeline& in, const strategies::Plan& plan, const Cluster& cluster) {
  PARASIM_CHECK(in.prefetch >= 1 && in.threads_per_host >= 1 && in.host_to_device_bytes_per_s > 0, "a resolved input pipeline");
  LoaderCosts out;
  out.load = data::plan_loading(plan, cluster.devices_per_node, in.bytes, in.placement);
  const bool naive = in.placement == data::Placement::Naive;
  out.threads = naive ? 1 : in.threads_per_host;
  out.prefetch = in.prefetch;
  for (const std::int64_t samples : out.load.samples_read_per_host) {
    const auto n = static_cast<double>(samples);
    out.host_step_s.push_back(samples > 0 ? host_load_s(in, n, out.threads) : 0.0);
    out.host_storage_bound.push_back(samples > 0 && in.storage_bytes_per_s > 0 &&
                                     n * in.bytes.stored / in.storage_bytes_per_s > n * (in.file_latency_s + in.decode_s_per_sample) / static_cast<double>(out.threads));
  }

  const std::size_t devices = out.load.devices.size();
  const auto m = static_cast<double>(std::max<std::int64_t>(plan.micro_batches, 1));
  // The naive loader's host sends every remote device its copy through its NICs, one device after
  // the other: each remote device has its micro-batch once all of them are sent.
  const double nic_bytes_per_s = static_cast<double>(cluster.nics_per_node) * cluster.inter.bandwidth_bytes_per_s;
  const double network_s = naive && out.load.network_bytes > 0 && nic_bytes_per_s > 0 ? out.load.network_bytes / m / nic_bytes_per_s : 0;
  out.load_ps.assign(devices, Picoseconds{});
  out.copy_ps.assign(devices, Picoseconds{});
  out.broadcast_bytes.assign(devices, 0.0);
  for (std::size_t d = 0; d < devices; ++d) {
    const data::DeviceFeed& feed = out.load.devices[d];
    const auto host = naive ? std::size_t{0} : static_cast<std::size_t>(static_cast<std::int64_t>(d) / cluster.devices_per_node);
    if (feed.host_bytes > 0) {
      const bool remote = naive && static_cast<std::int64_t>(d) / cluster.devices_per_node != 0;
      out.load_ps[d] = Picoseconds::from_seconds(out.host_step_s[host] / m);
      out.copy_ps[d] = Picoseconds::from_seconds(feed.host_bytes / m / in.host_to_device_bytes_per_s + (remote ? network_s : 0.0));
    } else if (feed.peer_bytes > 0) {
      out.broadcast_bytes[d] = feed.peer_bytes / m;
    }
  }
  return out;
}

}  // namespace parasim::sim
