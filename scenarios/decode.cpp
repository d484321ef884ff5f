#include "scenarios/decode.hpp"

#include <algorithm>
#include <filesystem>

#include "common/did_you_mean.hpp"
#include "common/json_document.hpp"
#include "sim/cluster.hpp"

namespace parasim::scenarios {
namespace {

using nlohmann::json;

// The schema guarantees presence and types where these are called; a mismatch between the schema's
// enums and the C++ name tables is a parasim bug (tests/scenarios compares them).
template <class E>
E enum_value(const std::optional<E>& v, const std::string& what) {
  PARASIM_CHECK(v.has_value(), "scenario schema and decoder disagree about " + what);
  return *v;
}

std::optional<std::int64_t> optional_int(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  return it->get<std::int64_t>();
}

models::TransformerConfig decode_transformer(const json& t, const json& model) {
  models::TransformerConfig c;
  c.name = t.value("name", c.name);
  c.layers = t.at("layers").get<std::int64_t>();
  c.hidden = t.at("hidden").get<std::int64_t>();
  c.heads = t.at("heads").get<std::int64_t>();
  c.vocab = t.at("vocab").get<std::int64_t>();
  c.kv_heads = t.value("kv_heads", std::int64_t{0});
  c.head_dim = t.value("head_dim", std::int64_t{0});
  c.ffn_hidden = t.value("ffn_hidden", std::int64_t{0});
  c.max_positions = t.value("max_positions", std::int64_t{0});
  c.token_types = t.value("token_types", std::int64_t{0});
  c.norm = t.value("norm", std::string("layernorm")) == "rmsnorm" ? models::NormKind::RMSNorm : models::NormKind::LayerNorm;
  c.mlp = enum_value(models::mlp_kind_from_string(t.value("mlp", std::string("gelu"))), "model.transformer.mlp");
  c.bias = t.value("bias", true);
  c.tied_embeddings = t.value("tied_embeddings", true);
  c.dropout = t.value("dropout", true);
  c.encoder = t.value("encoder", false);
  c.pooler = t.value("pooler", false);
  c.experts = t.value("experts", std::int64_t{0});
  c.experts_per_token = t.value("experts_per_token", std::int64_t{2});
  c.moe_ffn_hidden = t.value("moe_ffn_hidden", std::int64_t{0});
  c.shared_ffn_hidden = t.value("shared_ffn_hidden", std::int64_t{0});
  c.shared_expert_gate = t.value("shared_expert_gate", false);
  c.first_dense_layers = t.value("first_dense_layers", std::int64_t{0});
  c.moe_every = t.value("moe_every", std::int64_t{1});
  c.moe_phase = t.value("moe_phase", std::int64_t{0});
  c.q_lora_rank = t.value("q_lora_rank", std::int64_t{0});
  c.kv_lora_rank = t.value("kv_lora_rank", std::int64_t{0});
  c.rope_head_dim = t.value("rope_head_dim", std::int64_t{0});
  c.v_head_dim = t.value("v_head_dim", std::int64_t{0});
  c.qk_norm = t.value("qk_norm", false);
  c.seq_len = model.value("seq_len", std::int64_t{2048});
  return c;
}

/// The dtype of a model's activations and weights when training in `precision`: fp8 training keeps them
/// in bf16 and casts a GEMM's inputs to fp8 just before it (Transformer Engine; sim/work/op_work.hpp).
models::DType activation_dtype(models::DType precision) { return precision == models::DType::FP8 ? models::DType::BF16 : precision; }

ModelSpec decode_model(const json& m, const std::string& folder, models::DType precision) {
  ModelSpec spec;
  if (m.contains("preset")) {
    spec.source = ModelSource::Preset;
    spec.preset = m["preset"].get<std::string>();
  } else if (m.contains("transformer")) {
    spec.source = ModelSource::Transformer;
    spec.transformer = decode_transformer(m["transformer"], m);
    spec.transformer.dtype = activation_dtype(precision);
  } else if (m.contains("hf_config")) {
    spec.source = ModelSource::HfConfig;
    spec.path = resolve_path(folder, m["hf_config"].get<std::string>());
  } else {
    spec.source = ModelSource::Graph;
    spec.path = resolve_path(folder, m.at("graph").get<std::string>());
  }
  spec.options.seq_len = optional_int(m, "seq_len");
  spec.options.image_size = optional_int(m, "image_size");
  spec.options.num_classes = optional_int(m, "num_classes");
  spec.options.in_channels = optional_int(m, "in_channels");
  if (m.contains("attention"))
    spec.options.attention = enum_value(models::attention_kind_from_string(m["attention"].get<std::string>()), "model.attention");
  spec.options.dtype = activation_dtype(precision);
  return spec;
}

strategies::TrainingSpec decode_training(const json& t) {
  strategies::TrainingSpec spec;
  spec.global_batch = t.at("global_batch").get<std::int64_t>();
  spec.micro_batch = t.value("micro_batch", spec.micro_batch);
  spec.precision = enum_value(models::dtype_from_string(t.value("precision", std::string("fp16"))), "training.precision");
  spec.optimizer = enum_value(strategies::optimizer_from_string(t.value("optimizer", std::string("adam"))), "training.optimizer");
  spec.attention_kernel = t.value("attention_kernel", std::string());
  if (t.contains("grad_precision"))
    spec.grad_precision = enum_value(models::dtype_from_string(t.at("grad_precision").get<std::string>()), "training.grad_precision");
  return spec;
}

void decode_intra(const json& j, sim::IntraNodeSpec& spec) {
  if (j.contains("kind")) spec.kind = j["kind"] == "pcie" ? sim::IntraNodeKind::PCIe : sim::IntraNodeKind::NVSwitch;
  spec.link = j.value("link", spec.link);
  if (j.contains("bandwidth_gbps")) spec.bandwidth_gbps = j["bandwidth_gbps"].get<double>();
  if (j.contains("latency_us")) spec.latency_us = j["latency_us"].get<double>();
  if (j.contains("kind") && spec.kind != sim::IntraNodeKind::PCIe) {
    // A node changed away from a preset's PCIe node leaves the preset's PCIe layout behind.
    spec.pcie_switches = 1;
    spec.host_bridge_gbps.reset();
  }
  // ... and one changed to a PCIe node the preset's NVSwitch reduction.
  if (j.contains("kind") && spec.kind == sim::IntraNodeKind::PCIe) spec.nvls_link.clear();
  spec.nvls_link = j.value("nvls_link", spec.nvls_link);
  spec.pcie_switches = j.value("pcie_switches", spec.pcie_switches);
  if (j.contains("host_bridge_gbps")) spec.host_bridge_gbps = j["host_bridge_gbps"].get<double>();
}

void decode_inter(const json& j, sim::InterNodeSpec& spec) {
  if (j.contains("kind")) {
    const std::string kind = j["kind"].get<std::string>();
    spec.kind = kind == "torus" ? sim::InterNodeKind::Torus : kind == "none" ? sim::InterNodeKind::None : sim::InterNodeKind::FatTree;
  }
  spec.link = j.value("link", spec.link);
  spec.nics_per_node = j.value("nics_per_node", spec.nics_per_node);
  if (j.contains("bandwidth_gbps")) spec.bandwidth_gbps = j["bandwidth_gbps"].get<double>();
  if (j.contains("latency_us")) spec.latency_us = j["latency_us"].get<double>();
  spec.oversubscription = j.value("oversubscription", spec.oversubscription);
  spec.rail_optimized = j.value("rail_optimized", spec.rail_optimized);
  if (j.contains("kind") && spec.kind != sim::InterNodeKind::Torus) {
    // A network changed away from a preset's torus leaves the preset's torus shape behind.
    spec.torus_dims.clear();
    spec.torus_ndims = 0;
  }
  // ... and one changed away from a preset's fat-tree its leaf switches (DGX SuperPOD units).
  if (j.contains("kind") && spec.kind != sim::InterNodeKind::FatTree) spec.nodes_per_leaf = 1;
  spec.nodes_per_leaf = j.value("nodes_per_leaf", spec.nodes_per_leaf);
  if (j.contains("torus_dims")) spec.torus_dims = j["torus_dims"].get<std::vector<std::int64_t>>();
  spec.torus_ndims = j.value("torus_ndims", spec.torus_ndims);
  spec.torus_wraparound = j.value("torus_wraparound", spec.torus_wraparound);
  if (j.contains("kind") && spec.kind != sim::InterNodeKind::FatTree) spec.sharp = false;
  spec.sharp = j.value("sharp", spec.sharp);
}

sim::ClusterSpec decode_cluster(const json& c, std::string& preset_name, const ErrorAt& error_at) {
  sim::ClusterSpec spec;
  preset_name.clear();
  if (c.contains("preset")) {
    preset_name = c["preset"].get<std::string>();
    const auto preset = sim::cluster_preset(preset_name);
    if (!preset) {
      const auto known = sim::cluster_preset_names();
      throw error_at("/cluster/preset", "unknown cluster preset \"" + preset_name + "\"" + did_you_mean(preset_name, known) +
                                            "; expected one of " + quoted_list(known));
    }
    spec = *preset;
  }
  spec.device = c.value("device", spec.device);
  spec.nodes = c.value("nodes", spec.nodes);
  spec.devices_per_node = c.value("devices_per_node", spec.devices_per_node);
  if (c.contains("intra_node")) decode_intra(c["intra_node"], spec.intra_node);
  if (c.contains("inter_node")) decode_inter(c["inter_node"], spec.inter_node);
  if (c.contains("node_groups")) {
    spec.node_groups.clear();
    for (const json& g : c["node_groups"]) {
      sim::NodeGroupSpec group;
      group.nodes = g.at("nodes").get<std::int64_t>();
      group.device = g.value("device", group.device);
      group.speed_factor = g.value("speed_factor", group.speed_factor);
      spec.node_groups.push_back(group);
    }
  }
  if (c.contains("stragglers")) {
    spec.stragglers.clear();
    for (const json& g : c["stragglers"]) {
      sim::StragglerSpec st;
      st.device = g.at("device").get<std::int64_t>();
      st.speed_factor = g.value("speed_factor", st.speed_factor);
      spec.stragglers.push_back(st);
    }
  }
  if (c.contains("wan")) {
    sim::WanSpec wan;
    const json& w = c["wan"];
    wan.sites = w.value("sites", wan.sites);
    wan.bandwidth_gbps = w.value("bandwidth_gbps", wan.bandwidth_gbps);
    wan.latency_us = w.value("latency_us", wan.latency_us);
    spec.wan = wan;
  }
  if (c.contains("algorithms")) {
    const json& a = c["algorithms"];
    const auto algorithm = [&a](const char* key, sim::CollectiveAlgorithm& out) {
      if (a.contains(key))
        out = enum_value(sim::collective_algorithm_from_string(a[key].get<std::string>()), std::string("cluster.algorithms.") + key);
    };
    algorithm("all_reduce", spec.algorithms.all_reduce);
    algorithm("reduce_scatter", spec.algorithms.reduce_scatter);
    algorithm("all_gather", spec.algorithms.all_gather);
    algorithm("broadcast", spec.algorithms.broadcast);
  }
  return spec;
}

strategies::PlanSpec decode_plan(const json& p) {
  strategies::PlanSpec spec;
  spec.dp = p.value("dp", spec.dp);
  spec.tp = p.value("tp", spec.tp);
  spec.pp = p.value("pp", spec.pp);
  spec.ep = p.value("ep", spec.ep);
  spec.cp = p.value("cp", spec.cp);
  if (p.contains("cp_comm"))
    spec.cp_comm = enum_value(strategies::cp_comm_from_string(p["cp_comm"].get<std::string>()), "plan.cp_comm");
  if (p.contains("schedule"))
    spec.schedule = enum_value(strategies::schedule_from_string(p["schedule"].get<std::string>()), "plan.schedule");
  spec.virtual_stages = p.value("virtual_stages", spec.virtual_stages);
  spec.zero = p.value("zero", spec.zero);
  spec.fsdp = p.value("fsdp", spec.fsdp);
  if (p.contains("recompute"))
    spec.recompute = enum_value(strategies::recompute_from_string(p["recompute"].get<std::string>()), "plan.recompute");
  spec.sequence_parallel = p.value("sequence_parallel", spec.sequence_parallel);
  if (p.contains("grad_bucket_mb")) spec.grad_bucket_mb = p["grad_bucket_mb"].get<double>();
  if (p.contains("implementation"))
    spec.implementation = enum_value(strategies::framework_from_string(p["implementation"].get<std::string>()), "plan.implementation");
  spec.overlap_grad_reduce = p.value("overlap_grad_reduce", spec.overlap_grad_reduce);
  spec.overlap_param_gather = p.value("overlap_param_gather", spec.overlap_param_gather);
  spec.blocking_p2p = p.value("blocking_p2p", spec.blocking_p2p);
  spec.tp_comm_overlap = p.value("tp_comm_overlap", spec.tp_comm_overlap);
  spec.expert_imbalance = p.value("expert_imbalance", spec.expert_imbalance);
  if (p.contains("grad_accumulation"))
    spec.grad_accumulation =
        enum_value(strategies::grad_accumulation_from_string(p["grad_accumulation"].get<std::string>()), "plan.grad_accumulation");
  if (p.contains("mesh_order")) spec.mesh_order = p["mesh_order"].get<std::vector<std::string>>();
  if (p.contains("stage_layers")) spec.stage_layers = p["stage_layers"].get<std::vector<std::int64_t>>();
  if (p.contains("mesh"))
    for (const auto& a : p["mesh"]) spec.mesh.push_back({a["name"].get<std::string>(), a["size"].get<std::int64_t>(), a.value("data", false)});
  spec.auto_sharding = p.value("auto_sharding", spec.auto_sharding);
  spec.auto_sharding_time_limit_s = p.value("auto_sharding_time_limit_s", spec.auto_sharding_time_limit_s);
  if (p.contains("shardings")) {
    // A spec entry: null (replicated), one axis name, or a list of them (outermost first).
    auto axes = [](const json& e) {
      if (e.is_null()) return std::vector<std::string>{};
      if (e.is_string()) return std::vector<std::string>{e.get<std::string>()};
      return e.get<std::vector<std::string>>();
    };
    const auto& list = p["shardings"];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& a = list[i];
      strategies::ShardingAnnotation ann;
      ann.pointer = "/plan/shardings/" + std::to_string(i);
      if (a.contains("preset")) {
        ann.target = strategies::AnnotationTarget::Preset;
        ann.pattern = a["preset"].get<std::string>();
        ann.axis = a["axis"].get<std::string>();
      } else if (a.contains("weight")) ann.target = strategies::AnnotationTarget::Weight, ann.pattern = a["weight"].get<std::string>();
      else if (a.contains("output")) ann.target = strategies::AnnotationTarget::Output, ann.pattern = a["output"].get<std::string>();
      else ann.target = strategies::AnnotationTarget::Operator, ann.pattern = a["operator"].get<std::string>();
      if (a.contains("spec"))
        for (const auto& e : a["spec"]) ann.spec.push_back(axes(e));
      if (a.contains("partial")) ann.partial = axes(a["partial"]);
      if (a.contains("dims"))
        for (const auto& [dim, e] : a["dims"].items()) ann.dims.emplace_back(dim, axes(e));
      spec.shardings.push_back(std::move(ann));
    }
  }
  return spec;
}

strategies::LocalUpdateSpec decode_local_update(const json& j, const ErrorAt& error_at) {
  strategies::LocalUpdateSpec spec;
  spec.algorithm = enum_value(strategies::local_update_algorithm_from_string(j.value("algorithm", std::string("diloco"))), "local_update.algorithm");
  spec.replicas = j.value("replicas", spec.replicas);
  // PAPA's gradual form averages every 10 steps (the authors' code); the others DiLoCo's 500.
  if (spec.algorithm == strategies::LocalUpdateAlgorithm::PAPA) spec.inner_steps = 10;
  spec.inner_steps = j.value("inner_steps", spec.inner_steps);
  spec.mixing = j.value("mixing", spec.mixing);
  if (spec.averages_weights() && j.contains("outer_optimizer"))
    throw error_at("/local_update/outer_optimizer", std::string(strategies::to_string(spec.algorithm)) +
                                                        " averages the replicas' weights; it has no outer optimizer (DiLoCo's)");
  // Streaming DiLoCo's defaults (Douillard et al. 2025, arXiv:2501.18512, §3): fragments of three
  // layers (0: resolved on the model), one inner step of overlap; DiLoCo has one fragment and waits.
  if (spec.streaming()) {
    spec.fragments = 0;
    spec.overlap_steps = 1;
  }
  spec.fragments = j.value("fragments", spec.fragments);
  spec.overlap_steps = j.value("overlap_steps", spec.overlap_steps);
  if (j.contains("outer_optimizer")) {
    const json& o = j["outer_optimizer"];
    spec.outer_optimizer = enum_value(strategies::outer_optimizer_from_string(o.value("kind", std::string("nesterov"))), "local_update.outer_optimizer.kind");
    spec.outer_learning_rate = o.value("learning_rate", spec.outer_learning_rate);
    spec.outer_momentum = o.value("momentum", spec.outer_momentum);
  }
  spec.compression = enum_value(strategies::compression_from_string(j.value("compression", std::string("none"))), "local_update.compression");
  spec.topk_fraction = j.value("topk_fraction", spec.topk_fraction);
  spec.target_tokens = j.value("target_tokens", spec.target_tokens);
  return spec;
}

/// One of the federated section's distributions, checked: a lognormal's median and a uniform's
/// bounds positive (and its low at most its high), a constant positive; for a probability
/// (`probability`), every value within [0, 1].
strategies::Distribution decode_distribution(const json& j, const std::string& pointer, bool probability, const ErrorAt& error_at) {
  strategies::Distribution d;
  d.kind = enum_value(strategies::distribution_from_string(j.at("kind").get<std::string>()), pointer + "/kind");
  const auto kind = std::string(strategies::to_string(d.kind));
  // Which fields each kind takes; another kind's field is an error, as an unknown key is.
  const std::vector<std::string> takes = d.kind == strategies::Distribution::Kind::Constant  ? std::vector<std::string>{"kind", "value"}
                                         : d.kind == strategies::Distribution::Kind::LogNormal ? std::vector<std::string>{"kind", "median", "sigma"}
                                                                                               : std::vector<std::string>{"kind", "low", "high"};
  for (const auto& item : j.items())
    if (std::find(takes.begin(), takes.end(), item.key()) == takes.end())
      throw error_at(pointer + "/" + item.key(), "a " + kind + " distribution has no \"" + item.key() + "\"; expected " + quoted_list(takes));
  for (const auto& key : takes)
    if (!j.contains(key)) throw error_at(pointer, "a " + kind + " distribution needs \"" + key + "\"");
  auto positive = [&](const char* key, double v) {
    if (!(v > 0)) throw error_at(pointer + "/" + key, "found " + describe_json_value(j.at(key)) + ", expected a number > 0");
  };
  auto unit = [&](const char* key, double v) {
    if (!(v >= 0 && v <= 1)) throw error_at(pointer + "/" + key, "found " + describe_json_value(j.at(key)) + ", expected a probability from 0 to 1");
  };
  switch (d.kind) {
    case strategies::Distribution::Kind::Constant:
      d.value = j.at("value").get<double>();
      probability ? unit("value", d.value) : positive("value", d.value);
      break;
    case strategies::Distribution::Kind::LogNormal:
      d.value = j.at("median").get<double>();
      d.sigma = j.at("sigma").get<double>();
      positive("median", d.value);
      if (!(d.sigma >= 0 && d.sigma <= 10)) throw error_at(pointer + "/sigma", "found " + describe_json_value(j.at("sigma")) + ", expected a number from 0 to 10");
      if (probability) unit("median", d.value);
      break;
    case strategies::Distribution::Kind::Uniform:
      d.low = j.at("low").get<double>();
      d.high = j.at("high").get<double>();
      probability ? unit("low", d.low) : positive("low", d.low);
      if (probability) unit("high", d.high);
      if (!(d.high >= d.low))
        throw error_at(pointer + "/high", "found " + describe_json_value(j.at("high")) + ", expected at least low (" + j.at("low").dump() + ")");
      break;
  }
  return d;
}

strategies::FederatedSpec decode_federated(const json& j, const ErrorAt& error_at) {
  strategies::FederatedSpec spec;
  spec.algorithm = enum_value(strategies::federated_algorithm_from_string(j.value("algorithm", std::string("fedavg"))), "federated.algorithm");
  const bool fedopt = spec.algorithm == strategies::FederatedAlgorithm::FedOpt;
  spec.server_optimizer = enum_value(strategies::server_optimizer_from_string(j.value("server_optimizer", std::string(fedopt ? "adam" : "mean"))),
                                     "federated.server_optimizer");
  if (fedopt == (spec.server_optimizer == strategies::ServerOptimizer::Mean))
    throw error_at("/federated/server_optimizer", fedopt ? "found \"mean\", expected \"sgd-momentum\", \"adam\" or \"yogi\" for fedopt"
                                                          : "found \"" + std::string(strategies::to_string(spec.server_optimizer)) +
                                                                "\", expected \"mean\" for fedavg (a server optimizer is fedopt's)");
  spec.population = j.value("clients", spec.population);
  spec.per_round = j.value("clients_per_round", spec.per_round);
  if (spec.per_round > spec.population)
    throw error_at("/federated/clients_per_round", "found " + std::to_string(spec.per_round) + ", expected at most the population of " +
                                                       std::to_string(spec.population) + " clients (a round samples without replacement)");
  spec.local_steps = j.value("local_steps", spec.local_steps);
  if (j.contains("speed")) spec.speed = decode_distribution(j["speed"], "/federated/speed", false, error_at);
  if (j.contains("upload_mbps")) spec.upload_mbps = decode_distribution(j["upload_mbps"], "/federated/upload_mbps", false, error_at);
  if (j.contains("download_mbps")) spec.download_mbps = decode_distribution(j["download_mbps"], "/federated/download_mbps", false, error_at);
  if (j.contains("availability")) spec.availability = decode_distribution(j["availability"], "/federated/availability", true, error_at);
  spec.server_gbps = j.value("server_gbps", spec.server_gbps);
  spec.deadline_s = j.value("deadline_s", spec.deadline_s);
  spec.rounds = j.value("rounds", spec.rounds);
  spec.seed = j.value("seed", spec.seed);
  spec.target_samples = j.value("target_samples", spec.target_samples);
  // The fluid simulation of a round's transfers costs about clients_per_round² steps; a billion
  // over all rounds is a few seconds.
  const double work = static_cast<double>(spec.per_round) * static_cast<double>(spec.per_round) * static_cast<double>(spec.rounds);
  if (work > 1e9)
    throw error_at("/federated/rounds", "clients_per_round² × rounds is " + std::to_string(static_cast<long long>(work)) +
                                            ", expected at most 1000000000 (the rounds' transfers are simulated one by one: fewer rounds or clients a round)");
  return spec;
}

DataSpec decode_data(const json& j, const ErrorAt& error_at) {
  DataSpec d;
  d.format = enum_value(data_format_from_string(j.at("format").get<std::string>()), "data.format");
  auto number = [&](const char* key) -> std::optional<double> {
    const auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    return it->get<double>();
  };
  d.stored_bytes_per_sample = number("stored_bytes_per_sample");
  d.decoded_bytes_per_sample = number("decoded_bytes_per_sample");
  d.decode_ms_per_sample = number("decode_ms_per_sample");
  if (j.contains("storage")) {
    const json& st = j["storage"];
    if (st.contains("bandwidth_gbps")) d.storage_gbps = st["bandwidth_gbps"].get<double>();
    d.storage_latency_ms = st.value("latency_ms", d.storage_latency_ms);
  }
  d.threads_per_host = j.value("threads_per_host", d.threads_per_host);
  d.prefetch = j.value("prefetch", d.prefetch);
  if (j.contains("placement")) d.placement = enum_value(placement_from_string(j["placement"].get<std::string>()), "data.placement");
  d.host_to_device_gbps = j.value("host_to_device_gbps", d.host_to_device_gbps);
  // What only the user can know: an image's size on disk varies with the images; decoding one with
  // the user's loader on the user's hosts is measured, not assumed.
  if (d.format == DataFormat::JpegTar && !d.stored_bytes_per_sample)
    throw error_at("/data", "a jpeg-tar dataset needs \"stored_bytes_per_sample\": the mean size of a sample (JPEG and label) in its shards, in bytes");
  return d;
}

}  // namespace

std::string resolve_path(const std::string& folder, const std::string& path) {
  const std::filesystem::path p(path);
  if (folder.empty() || p.is_absolute()) return p.lexically_normal().string();
  return (std::filesystem::path(folder) / p).lexically_normal().string();
}

Scenario decode_scenario(const json& root, const std::string& folder, const ErrorAt& error_at) {
  Scenario s;
  s.name = root.at("name").get<std::string>();
  s.description = root.value("description", std::string());
  s.training = decode_training(root.at("training"));
  s.model = decode_model(root.at("model"), folder, s.training.precision);
  s.cluster = decode_cluster(root.at("cluster"), s.cluster_preset, error_at);
  s.plan = decode_plan(root.value("plan", json::object()));
  if (root.contains("local_update")) s.local_update = decode_local_update(root["local_update"], error_at);
  if (root.contains("federated")) {
    if (s.local_update)
      throw error_at("/federated", "a scenario is local-update training or federated training, not both; expected one of \"local_update\" and \"federated\"");
    s.federated = decode_federated(root["federated"], error_at);
  }
  if (root.contains("data")) {
    if (s.local_update || s.federated)
      throw error_at("/data", "an input pipeline is simulated for synchronous training only; expected no \"data\" beside \"local_update\" or \"federated\"");
    s.data = decode_data(root["data"], error_at);
  }
  s.backend = enum_value(backend_from_string(root.value("backend", std::string("analytical"))), "backend");
  if (root.contains("profile")) s.profile = resolve_path(folder, root["profile"].get<std::string>());
  const json output = root.value("output", json::object());
  s.output_dir = output.contains("dir") ? output["dir"].get<std::string>() : "parasim-out/" + s.name;
  return s;
}

}  // namespace parasim::scenarios
