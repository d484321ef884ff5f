#include "sim/input_pipeline.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "sim/cluster.hpp"

namespace parasim::sim {

double decode_s(const InputPipeline& in, std::int64_t threads) {
  if (in.decode_s_at_threads.empty()) return in.decode_s_per_sample;
  const auto k = static_cast<std::size_t>(std::min<std::int64_t>(threads, static_cast<std::int64_t>(in.decode_s_at_threads.size())));
  return in.decode_s_at_threads[k - 1];
}

namespace {

/// A host's two bounds on loading `samples`: its threads, each taking one sample at a time (it waits
/// the file's latency, then decodes and augments it), side by side; and its storage, streaming the
/// stored bytes at its bandwidth, shared by the threads.
struct HostBounds {
  double threads_s = 0;
  double storage_s = 0;
};

HostBounds host_bounds(const InputPipeline& in, double samples, std::int64_t threads) {
  PARASIM_CHECK(threads >= 1, "a loader has at least one thread");
  return {samples * (in.file_latency_s + decode_s(in, threads)) / static_cast<double>(threads),
          in.storage_bytes_per_s > 0 ? samples * in.bytes.stored / in.storage_bytes_per_s : 0.0};
}

}  // namespace

double host_load_s(const InputPipeline& in, double samples, std::int64_t threads) {
  // Reading and decoding overlap (many samples are in flight), so the slower bound is the time.
  const HostBounds b = host_bounds(in, samples, threads);
  return std::max(b.threads_s, b.storage_s);
}

LoaderCosts loader_costs(const InputPipeline& in, const strategies::Plan& plan, const Cluster& cluster) {
  PARASIM_CHECK(in.prefetch >= 1 && in.threads_per_host >= 1 && in.host_to_device_bytes_per_s > 0, "a resolved input pipeline");
  LoaderCosts out;
  out.load = data::plan_loading(plan, cluster.devices_per_node, in.bytes, in.placement);
  const bool naive = in.placement == data::Placement::Naive;
  out.threads = naive ? 1 : in.threads_per_host;
  out.prefetch = in.prefetch;
  // Loader threads that copy (a CPU cluster) spend each host's copied bytes' time among them.
  std::vector<double> copied(out.load.samples_read_per_host.size(), 0.0);
  if (in.loader_copy_bytes_per_s > 0)
    for (std::size_t d = 0; d < out.load.devices.size(); ++d) {
      const data::DeviceFeed& f = out.load.devices[d];
      copied[naive ? 0 : d / static_cast<std::size_t>(cluster.devices_per_node)] += f.host_bytes + f.peer_bytes;
    }
  for (std::size_t h = 0; h < out.load.samples_read_per_host.size(); ++h) {
    const auto n = static_cast<double>(out.load.samples_read_per_host[h]);
    const double copies = in.loader_copy_bytes_per_s > 0 ? copied[h] / in.loader_copy_bytes_per_s / static_cast<double>(out.threads) : 0.0;
    const HostBounds b = host_bounds(in, n, out.threads);
    out.host_step_s.push_back(n > 0 ? std::max(b.threads_s, b.storage_s) + copies : 0.0);
    out.host_storage_bound.push_back(n > 0 && b.storage_s > b.threads_s);
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
    if (in.loader_copy_bytes_per_s > 0 && (feed.host_bytes > 0 || feed.peer_bytes > 0)) {
      // The loaders put the tensor in the device's memory themselves.
      out.load_ps[d] = Picoseconds::from_seconds(out.host_step_s[host] / m);
    } else if (feed.host_bytes > 0) {
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
