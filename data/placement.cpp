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

std::vector<std::int64_t> samples_read_per_host(const strategies::Plan& plan, std::int64_t devices_per_host, Placement placement) {
  PARASIM_CHECK(devices_per_host >= 1, "a host has at least one device");
  const strategies::DeviceMesh& mesh = plan.mesh;
  const std::int64_t devices = mesh.device_count(), pp = std::max<std::int64_t>(plan.pp, 1);
  const std::int64_t hosts = (devices + devices_per_host - 1) / devices_per_host;
  const std::int64_t share = plan.global_batch / plan.dp();  // samples a replica takes in a step
  std::vector<std::int64_t> out(static_cast<std::size_t>(hosts), 0);
  if (placement == Placement::Naive) {
    out[0] = plan.global_batch;  // one loader on the first host reads everything
    return out;
  }
  // Sharded: per host, the replicas (by their data-parallel and expert coordinates) it reads for once.
  std::vector<std::set<std::int64_t>> read_by_host(placement == Placement::Sharded ? static_cast<std::size_t>(hosts) : 0);
  for (std::int64_t d = 0; d < devices; ++d) {
    const auto host = static_cast<std::size_t>(d / devices_per_host);
    if (placement == Placement::PerDevice) {
      out[host] += share;  // every device its replica's samples
      continue;
    }
    const std::vector<std::int64_t> coords = mesh.coords_of(d);
    const std::int64_t stage = plan.pp_axis >= 0 ? coords[static_cast<std::size_t>(plan.pp_axis)] : 0;
    if (stage != 0 && stage != pp - 1) continue;  // only the first stage takes inputs, the last labels
    std::int64_t replica = 0;
    for (const int a : {plan.dp_axis, plan.ep_axis})
      if (a >= 0) replica = replica * mesh.axes[static_cast<std::size_t>(a)].size + coords[static_cast<std::size_t>(a)];
    read_by_host[host].insert(replica);
  }
  if (placement == Placement::Sharded)
    for (std::size_t h = 0; h < out.size(); ++h) out[h] = static_cast<std::int64_t>(read_by_host[h].size()) * share;
  return out;
}

LoadPlan plan_loading(const strategies::Plan& plan, std::int64_t devices_per_host, const SampleBytes& bytes, Placement placement) {
  PARASIM_CHECK(devices_per_host >= 1, "a host has at least one device");
  const strategies::DeviceMesh& mesh = plan.mesh;
  const std::int64_t devices = mesh.device_count(), replicas = plan.dp(), pp = std::max<std::int64_t>(plan.pp, 1);
  std::vector<int> data_axes;
  for (const int a : {plan.dp_axis, plan.ep_axis})
    if (a >= 0) data_axes.push_back(a);
  std::sort(data_axes.begin(), data_axes.end());
  auto coordinate = [&](const std::vector<std::int64_t>& coords, int axis) { return axis >= 0 ? coords[static_cast<std::size_t>(axis)] : 0; };

  LoadPlan out;
  out.placement = placement;
  out.devices.resize(static_cast<std::size_t>(devices));
  out.samples_read_per_host = samples_read_per_host(plan, devices_per_host, placement);
  for (const std::int64_t n : out.samples_read_per_host) out.read_bytes += static_cast<double>(n) * bytes.stored;
  const std::int64_t share = plan.global_batch / replicas;  // samples a replica takes in a step
  const double sample = bytes.inputs + bytes.labels;

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
        break;
      }
    }
    out.host_to_device_bytes += f.host_bytes;
    out.device_to_device_bytes += f.peer_bytes;
  }
  return out;
}

}  // namespace parasim::data
