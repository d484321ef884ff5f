#include "scenarios/data.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "sim/input_verdict.hpp"

namespace parasim::scenarios {

data::SampleBytes model_sample_bytes(const models::Graph& graph) {
  data::SampleBytes b;
  const auto& t = graph.transformer();
  double elements = 0;
  for (models::OpId id = 0; id < graph.op_count(); ++id) {
    const models::Operator& op = graph.op(id);
    if (op.kind != models::OpKind::Input) continue;
    // A sample's share of the input: every output dim but the batch "b".
    double per_sample = 1;
    for (const std::string& name : op.output.dims) {
      if (name == "b") continue;
      const auto dim = std::find_if(op.dims.begin(), op.dims.end(), [&](const models::Dim& d) { return d.name == name; });
      if (dim != op.dims.end()) per_sample *= static_cast<double>(dim->size);
    }
    elements += per_sample;
  }
  if (t) {
    // int64 token ids (torch.long, what an embedding takes); labels and loss mask per token.
    b.inputs = elements * 8;
    b.labels = static_cast<double>(t->seq_len) * (8 + 4);
  } else {
    // torchvision's ToTensor and Normalize give fp32 images; a class index is an int64.
    b.inputs = elements * 4;
    b.labels = 8;
  }
  return b;
}

const sim::LoaderProfile* profile_loader(const DataSpec& spec, const sim::Profile& profile) {
  if (spec.format == DataFormat::Tokens) return nullptr;
  const auto it = profile.loaders.find(std::string(to_string(spec.format)));
  return it == profile.loaders.end() ? nullptr : &it->second;
}

sim::Simulation simulate_step(const Scenario& s, const models::Graph& graph, const strategies::Plan& plan, const sim::Cluster& cluster,
                              const sim::Profile& profile, sim::Backend backend, sim::LowerOptions options, ProgressSink* progress) {
  if (s.data) options.input = input_pipeline(s, graph, profile);
  sim::Simulation simulation = sim::simulate(graph, plan, cluster, profile, backend, options, progress);
  // Whether the step waits on its input, and the fewest loader threads that end it: simulated again.
  if (s.data) sim::add_input_verdict(simulation, graph, plan, cluster, profile, backend, options);
  return simulation;
}

std::int64_t model_image_size(const models::Graph& graph) {
  for (models::OpId id = 0; id < graph.op_count(); ++id) {
    const models::Operator& op = graph.op(id);
    if (op.kind != models::OpKind::Input) continue;
    for (const models::Dim& d : op.dims)
      if (d.name == "hh") return d.size;
  }
  return 0;
}

sim::InputPipeline input_pipeline(const Scenario& s, const models::Graph& graph, const sim::Profile& profile) {
  PARASIM_CHECK(s.data.has_value(), "a scenario with an input pipeline");
  const DataSpec& spec = *s.data;
  const sim::LoaderProfile* measured = profile_loader(spec, profile);
  sim::InputPipeline in;
  in.placement = spec.placement;
  in.bytes = model_sample_bytes(graph);
  if (spec.decoded_bytes_per_sample) in.bytes.inputs = *spec.decoded_bytes_per_sample;
  const auto& t = graph.transformer();
  switch (spec.format) {
    // CIFAR-100's binary record: a coarse and a fine label byte, then 3 × 32 × 32 pixel bytes
    // (https://www.cs.toronto.edu/~kriz/cifar.html, "Binary version").
    case DataFormat::CifarBin: in.bytes.stored = 3074; break;
    // Megatron-Core's indexed dataset stores token ids as uint16 below 65,500 distinct tokens, else
    // int32 (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype).
    case DataFormat::Tokens:
      in.bytes.stored = t ? static_cast<double>(t->seq_len) * (t->vocab < 65500 ? 2 : 4) : in.bytes.inputs;
      break;
    case DataFormat::JpegTar: break;  // required in the scenario
  }
  if (spec.stored_bytes_per_sample) in.bytes.stored = *spec.stored_bytes_per_sample;
  in.threads_per_host = spec.threads_per_host;
  in.prefetch = spec.prefetch;
  PARASIM_CHECK(spec.decode_ms_per_sample || measured || spec.format == DataFormat::Tokens, "a decode time for the dataset");
  in.decode_s_per_sample = spec.decode_ms_per_sample ? *spec.decode_ms_per_sample * 1e-3 : measured ? measured->decode_s_per_sample : 0.0;
  if (!spec.decode_ms_per_sample && measured) in.decode_s_at_threads = measured->decode_s_at_threads;
  // A CPU cluster's devices are its hosts' memory: the loader threads copy into it themselves.
  if (measured && s.cluster.device == "host-cpu") in.loader_copy_bytes_per_s = measured->copy_bytes_per_s;
  in.storage_bytes_per_s = spec.storage_gbps ? *spec.storage_gbps * 1e9 / 8 : 0;
  in.file_latency_s = spec.storage_latency_ms * 1e-3;
  in.host_to_device_bytes_per_s = spec.host_to_device_gbps * 1e9 / 8;
  return in;
}

}  // namespace parasim::scenarios
