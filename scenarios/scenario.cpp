#include "scenarios/scenario.hpp"

#include <cctype>

namespace parasim::scenarios {
namespace {

std::ostream& print_optional(std::ostream& out, const char* name, const std::optional<std::int64_t>& v) {
  out << "  model." << name << ": ";
  if (v) out << *v;
  else out << "(model's own)";
  return out << "\n";
}

}  // namespace

bool Scenario::operator==(const Scenario& o) const {
  return name == o.name && description == o.description && file == o.file && pointer == o.pointer &&
         model == o.model && training == o.training && cluster == o.cluster && cluster_preset == o.cluster_preset &&
         plan == o.plan && local_update == o.local_update && federated == o.federated && data == o.data && backend == o.backend && profile == o.profile && output_dir == o.output_dir &&
         what_ifs == o.what_ifs && changes == o.changes;
}

std::string_view to_string(ModelSource s) {
  switch (s) {
    case ModelSource::Preset: return "preset";
    case ModelSource::Transformer: return "transformer";
    case ModelSource::HfConfig: return "hf_config";
    case ModelSource::Graph: return "graph";
  }
  return "preset";
}

std::string_view to_string(DataFormat f) {
  switch (f) {
    case DataFormat::JpegTar: return "jpeg-tar";
    case DataFormat::CifarBin: return "cifar-bin";
    case DataFormat::Tokens: return "tokens";
  }
  return "tokens";
}

std::optional<DataFormat> data_format_from_string(std::string_view s) {
  for (const DataFormat f : {DataFormat::JpegTar, DataFormat::CifarBin, DataFormat::Tokens})
    if (to_string(f) == s) return f;
  return std::nullopt;
}

std::optional<data::Placement> placement_from_string(std::string_view s) {
  for (const data::Placement p : {data::Placement::Naive, data::Placement::PerDevice, data::Placement::Sharded})
    if (data::to_string(p) == s) return p;
  return std::nullopt;
}

std::string_view to_string(Backend b) { return b == Backend::SimGrid ? "simgrid" : "analytical"; }

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names{"analytical", "simgrid"};
  return names;
}

std::optional<Backend> backend_from_string(std::string_view s) {
  if (s == "analytical") return Backend::Analytical;
  if (s == "simgrid") return Backend::SimGrid;
  return std::nullopt;
}

std::string slug(std::string_view name) {
  std::string out;
  bool pending_dash = false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 128) {
      if (pending_dash && !out.empty()) out += '-';
      pending_dash = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      pending_dash = true;
    }
  }
  return out.empty() ? std::string("variant") : out;
}

std::ostream& operator<<(std::ostream& out, const Scenario& s) {
  out << "scenario " << s.name << (s.pointer.empty() ? "" : " (" + s.pointer + ")") << " from "
      << (s.file.empty() ? "<input>" : s.file) << "\n";
  out << "  model: " << to_string(s.model.source) << " ";
  switch (s.model.source) {
    case ModelSource::Preset: out << s.model.preset; break;
    case ModelSource::Transformer:
      out << s.model.transformer.name << " (" << s.model.transformer.layers << " layers, hidden "
          << s.model.transformer.hidden << ", " << s.model.transformer.heads << " heads)";
      break;
    case ModelSource::HfConfig:
    case ModelSource::Graph: out << s.model.path; break;
  }
  out << "\n";
  print_optional(out, "seq_len", s.model.options.seq_len);
  print_optional(out, "image_size", s.model.options.image_size);
  print_optional(out, "num_classes", s.model.options.num_classes);
  print_optional(out, "in_channels", s.model.options.in_channels);
  out << "  training: global_batch " << s.training.global_batch << ", micro_batch " << s.training.micro_batch << ", "
      << models::to_string(s.training.precision) << ", " << strategies::to_string(s.training.optimizer) << "\n";
  const auto& c = s.cluster;
  out << "  cluster: " << (s.cluster_preset.empty() ? "" : s.cluster_preset + ": ") << c.nodes << " x "
      << c.devices_per_node << " " << c.device << ", intra " << (c.intra_node.kind == sim::IntraNodeKind::PCIe ? "pcie" : "nvswitch")
      << " " << (c.intra_node.link.empty() ? "(default link)" : c.intra_node.link) << ", inter "
      << (c.inter_node.kind == sim::InterNodeKind::Torus ? "torus"
          : c.inter_node.kind == sim::InterNodeKind::None ? "none"
                                                            : "fat-tree")
      << " " << (c.inter_node.link.empty() ? "(default link)" : c.inter_node.link) << "\n";
  const auto& p = s.plan;
  out << "  plan: dp " << (p.dp == 0 ? std::string("auto") : std::to_string(p.dp)) << ", tp " << p.tp << ", pp " << p.pp
      << ", ep " << p.ep << ", " << strategies::to_string(p.schedule) << " x" << p.virtual_stages << ", zero " << p.zero
      << (p.fsdp ? ", fsdp" : "") << ", recompute " << strategies::to_string(p.recompute)
      << (p.sequence_parallel ? ", sequence parallel" : "") << "\n";
  if (const auto& lu = s.local_update)
    out << "  local update: " << strategies::to_string(lu->algorithm) << ", replicas "
        << (lu->replicas == 0 ? std::string("(one per site)") : std::to_string(lu->replicas)) << ", H " << lu->inner_steps << ", fragments "
        << lu->fragments << ", overlap " << lu->overlap_steps << ", " << strategies::to_string(lu->outer_optimizer) << ", compression "
        << strategies::to_string(lu->compression) << "\n";
  if (const auto& f = s.federated)
    out << "  federated: " << strategies::to_string(f->algorithm) << " (" << strategies::to_string(f->server_optimizer) << "), " << f->per_round
        << " of " << f->population << " clients a round, " << f->local_steps << " local steps, speed " << strategies::describe(f->speed) << ", upload "
        << strategies::describe(f->upload_mbps) << " Mbit/s, download " << strategies::describe(f->download_mbps) << " Mbit/s, availability "
        << strategies::describe(f->availability) << ", server " << f->server_gbps << " Gbit/s, deadline " << f->deadline_s << " s, " << f->rounds
        << " rounds, seed " << f->seed << "\n";
  if (const auto& d = s.data) {
    auto opt = [](const std::optional<double>& v, const char* unset) { return v ? std::to_string(*v) : std::string(unset); };
    out << "  data: " << to_string(d->format) << ", stored " << opt(d->stored_bytes_per_sample, "(format's)") << " B, decoded "
        << opt(d->decoded_bytes_per_sample, "(model's)") << " B, decode " << opt(d->decode_ms_per_sample, "(format's)") << " ms, storage "
        << opt(d->storage_gbps, "(no limit)") << " Gbit/s " << d->storage_latency_ms << " ms, " << d->threads_per_host << " threads, prefetch "
        << d->prefetch << ", " << data::to_string(d->placement) << ", h2d " << d->host_to_device_gbps << " Gbit/s\n";
  }
  out << "  backend: " << to_string(s.backend) << ", profile: " << (s.profile ? *s.profile : "(datasheet)")
      << ", output: " << s.output_dir << "\n";
  for (const auto& [path, value] : s.changes) out << "  set " << path << " = " << value << "\n";
  for (const auto& w : s.what_ifs) out << "  what-if:\n" << w;
  return out;
}

}  // namespace parasim::scenarios
