#include "data/placement.hpp"

#include <algorithm>
#include <set>

#include "common/error.hpp"

namespace parasim::data {

std::string_view to_string(Placement p) {
  switch (p) {
    case Placement::Naive: return "naive";
    case Placement::PerDevice: return "per_device";
    case Placement::Sharded: return "sharded";
  }
  return "sharded";
}

std::vector<std::int64_t> replica_samples(std::int64_t global_batch, std::int64_t micro_batch, std::int64_t replicas, std::int64_t replica) {
  PARASIM_CHECK(micro_batch >= 1 && replicas >= 1 && replica >= 0 && replica < replicas && global_batch % (micro_batch * replicas) == 0,
                "a replica of a global batch made of whole micro-batches of every replica");
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(global_batch / replicas));
  // MegatronPretrainingSampler: each group of micro_batch × replicas consecutive samples gives
  // replica r the micro_batch of them from r × micro_batch.
  for (std::int64_t group = 0; group < global_batch; group += micro_batch * replicas)
    for (std::int64_t j = 0; j < micro_batch; ++j) out.push_back(group + replica * micro_batch + j);
  return out;
}

LoadPlan plan_loading(const strategies::Plan& plan, std::int64_t devices_per_host, const SampleBytes& bytes, Placement placement) {
  PARASIM_CHECK(devices_per_host >= 1, "a host has at least one device");
  const strategies::DeviceMesh& mesh = plan.mesh;
  const std::int64_t devices = mesh.device_count(), replicas = plan.dp(), pp = std::max<std::int64_t>(plan.pp, 1);
  const std::int64_t hosts = (devices + devices_per_host - 1) / devices_per_host;
  std::vector<int> data_axes;
  for (const int a : {plan.dp_axis, plan.ep_axis})
    if (a >= 0) data_axes.push_back(a);
  std::sort(data_axes.begin(), data_axes.end());
  auto coordinate = [&](const std::vector<std::int64_t>& coords, int axis) { return axis >= 0 ? coords[static_cast<std::size_t>(axis)] : 0; };

  LoadPlan out;
  out.placement = placement;
  out.devices.resize(static_cast<std::size_t>(devices));
  out.samples_read_per_host.assign(static_cast<std::size_t>(hosts), 0);
  const std::int64_t share = plan.global_batch / replicas;  // samples a replica takes in a step
  const double sample = bytes.inputs + bytes.labels;
  // Per host, the replicas whose samples it reads (sharded: once each).
  std::vector<std::set<std::int64_t>> read_by_host(static_cast<std::size_t>(hosts));

  for (std::int64_t d = 0; d < devices; ++d) {
    const std::vector<std::int64_t> coords = mesh.coords_of(d);
    const std::vector<std::int64_t> group = data_axes.empty() ? std::vector<std::int64_t>{d} : mesh.group_of(d, data_axes);
    const auto replica = static_cast<std::int64_t>(std::find(group.begin(), group.end(), d) - group.begin());
    const std::int64_t stage = coordinate(coords, plan.pp_axis), host = d / devices_per_host;
    DeviceFeed& f = out.devices[static_cast<std::size_t>(d)];
    f.samples = replica_samples(plan.global_batch, plan.micro_batch, replicas, replica);
    const auto n = static_cast<double>(share);
    switch (placement) {
      case Placement::Naive:
        // Everything to everyone: the whole step's samples, inputs and labels.
        f.inputs = f.labels = true;
        f.host_bytes = static_cast<double>(plan.global_batch) * sample;
        if (host != 0) out.network_bytes += f.host_bytes;
        break;
      case Placement::PerDevice:
        f.inputs = f.labels = true;
        f.host_bytes = n * sample;
        out.samples_read_per_host[static_cast<std::size_t>(host)] += share;
        out.read_bytes += n * bytes.stored;
        break;
      case Placement::Sharded: {
        f.inputs = stage == 0;
        f.labels = stage == pp - 1;
        f.sequence_share = 1.0 / static_cast<double>(std::max<std::int64_t>(plan.cp(), 1));
        if (!f.inputs && !f.labels) break;
        const double mine = n * ((f.inputs ? bytes.inputs : 0) + (f.labels ? bytes.labels : 0)) * f.sequence_share;
        // The tensor-parallel group's first device takes the host's copy; the others receive it from it.
        if (coordinate(coords, plan.tp_axis) == 0) f.host_bytes = mine;
        else f.peer_bytes = mine;
        read_by_host[static_cast<std::size_t>(host)].insert(replica);
        break;
      }
    }
    out.host_to_device_bytes += f.host_bytes;
    out.device_to_device_bytes += f.peer_bytes;
  }
  if (placement == Placement::Naive) {
    out.samples_read_per_host[0] = plan.global_batch;
    out.read_bytes = static_cast<double>(plan.global_batch) * bytes.stored;
  }
  if (placement == Placement::Sharded)
    for (std::int64_t h = 0; h < hosts; ++h) {
      const auto read = static_cast<std::int64_t>(read_by_host[static_cast<std::size_t>(h)].size()) * share;
      out.samples_read_per_host[static_cast<std::size_t>(h)] = read;
      out.read_bytes += static_cast<double>(read) * bytes.stored;
    }
  return out;
}

}  // namespace parasim::data
