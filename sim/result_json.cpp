#include "sim/result_json.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/json_reader.hpp"

namespace parasim::sim {
namespace {

using nlohmann::json;

/// The key of each category's seconds in a time breakdown, indexed by Category. Identifiers, not the
/// display names of to_string(Category): a key must not change when a label is reworded.
constexpr std::array<const char*, kCategoryCount> kCategoryKeys = {
    "forward_s",       "backward_s",      "recompute_s",     "optimizer_s", "tensor_comm_s",
    "pipeline_comm_s", "gradient_comm_s", "expert_comm_s",   "data_load_s",
};

/// A figure as written: finite; a whole number below 2^53 (a count of bytes, parameters or FLOPs)
/// exactly, anything else rounded to 9 significant digits.
json number(double x, std::string_view what) {
  PARASIM_CHECK(std::isfinite(x), "result figure " + std::string(what) + " is not finite");
  if (std::fabs(x) < 9007199254740992.0 && std::trunc(x) == x) return x == 0 ? 0.0 : x;
  return round_significant(x, 9);
}

json breakdown_to_json(const TimeBreakdown& b) {
  json out = json::object();
  for (std::size_t c = 0; c < kCategoryKeys.size(); ++c) out[kCategoryKeys[c]] = number(b.seconds[c], kCategoryKeys[c]);
  out["idle_s"] = number(b.idle_s, "idle_s");
  out["compute_s"] = number(b.compute_s(), "compute_s");
  out["exposed_comm_s"] = number(b.exposed_comm_s(), "exposed_comm_s");
  return out;
}

json stage_memory_to_json(const strategies::StageMemory& s) {
  const auto& m = s.memory;
  return json{
      {"stage", s.stage},
      {"in_flight_forward_passes", s.in_flight},
      {"parameter_count", number(s.parameters, "parameter_count")},
      {"weights_bytes", number(m.weights_bytes, "weights_bytes")},
      {"gradients_bytes", number(m.gradients_bytes, "gradients_bytes")},
      {"optimizer_bytes", number(m.optimizer_bytes, "optimizer_bytes")},
      {"activations_bytes", number(m.activations_bytes, "activations_bytes")},
      {"buffers_bytes", number(m.buffers_bytes, "buffers_bytes")},
      {"total_bytes", number(m.total_bytes(), "total_bytes")},
  };
}

void put_spread(json& out, const std::string& name, const TimeSpread& s) {
  out[name + "_min_s"] = number(s.min_s, name);
  out[name + "_mean_s"] = number(s.mean_s, name);
  out[name + "_max_s"] = number(s.max_s, name);
}

json stage_times_to_json(const StageTimes& s) {
  json out = json{{"stage", s.stage}, {"device_count", s.devices}};
  put_spread(out, "compute", s.compute);
  put_spread(out, "exposed_comm", s.exposed_comm);
  put_spread(out, "idle", s.idle);
  put_spread(out, "comm_busy", s.comm_busy);
  return out;
}

// ---- reading ----

TimeBreakdown read_breakdown(ObjectReader r) {
  TimeBreakdown b;
  for (std::size_t c = 0; c < kCategoryKeys.size(); ++c) b.seconds[c] = r.number(kCategoryKeys[c], 0);
  b.idle_s = r.number("idle_s", 0);
  // Derived (sums of the above): checked for type, recomputed by whoever needs them.
  (void)r.number_or("compute_s", 0, 0);
  (void)r.number_or("exposed_comm_s", 0, 0);
  r.finish();
  return b;
}

strategies::StageMemory read_stage_memory(ObjectReader r) {
  strategies::StageMemory s;
  s.stage = r.integer("stage", 0);
  s.in_flight = r.integer("in_flight_forward_passes", 0);
  s.parameters = r.number("parameter_count", 0);
  s.memory.weights_bytes = r.number("weights_bytes", 0);
  s.memory.gradients_bytes = r.number("gradients_bytes", 0);
  s.memory.optimizer_bytes = r.number("optimizer_bytes", 0);
  s.memory.activations_bytes = r.number("activations_bytes", 0);
  s.memory.buffers_bytes = r.number("buffers_bytes", 0);
  (void)r.number_or("total_bytes", 0, 0);  // derived
  r.finish();
  return s;
}

/// Per-stage aggregates are derived from the per-device times; they are checked for shape only.
void check_stage_times(ObjectReader r) {
  (void)r.integer("stage", 0);
  (void)r.integer("device_count", 0);
  for (const char* name : {"compute", "exposed_comm", "idle", "comm_busy"})
    for (const char* stat : {"_min_s", "_mean_s", "_max_s"}) (void)r.number(std::string(name) + stat, 0);
  r.finish();
}

}  // namespace

std::vector<StageTimes> stage_times(const Result& result) {
  std::map<std::int64_t, std::vector<const DeviceTimes*>> by_stage;
  for (const auto& d : result.per_device) by_stage[d.stage].push_back(&d);
  std::vector<StageTimes> out;
  for (const auto& [stage, devices] : by_stage) {
    StageTimes s;
    s.stage = stage;
    s.devices = static_cast<std::int64_t>(devices.size());
    auto spread = [&](auto figure) {
      TimeSpread t{figure(*devices.front()), 0, figure(*devices.front())};
      for (const DeviceTimes* d : devices) {
        const double v = figure(*d);
        t.min_s = std::min(t.min_s, v);
        t.max_s = std::max(t.max_s, v);
        t.mean_s += v;
      }
      t.mean_s /= static_cast<double>(devices.size());
      return t;
    };
    s.compute = spread([](const DeviceTimes& d) { return d.breakdown.compute_s(); });
    s.exposed_comm = spread([](const DeviceTimes& d) { return d.breakdown.exposed_comm_s(); });
    s.idle = spread([](const DeviceTimes& d) { return d.breakdown.idle_s; });
    s.comm_busy = spread([](const DeviceTimes& d) { return d.comm_busy_s; });
    out.push_back(s);
  }
  return out;
}

json to_json(const Result& r, const ResultJsonOptions& options) {
  PARASIM_CHECK(options.max_devices >= 0, "max_devices must be >= 0");
  json out = json::object();
  out["schema"] = kResultSchema;
  out["scenario"] = r.scenario;
  out["variant"] = r.variant;
  out["model"] = r.model;
  out["plan"] = r.plan;
  out["backend"] = r.backend;
  out["profile"] = json{{"name", r.profile}, {"origin", r.profile_origin}};
  out["device_kind"] = r.device_kind;
  if (!r.attention_kernel.empty()) out["attention_kernel"] = r.attention_kernel;
  out["implementation"] = json{{"framework", r.implementation}, {"detail", r.implementation_detail}};
  out["device_count"] = r.devices;
  out["task_count"] = r.tasks;
  out["replica_shortcut"] = r.replica_shortcut;
  out["simulated_device_count"] = r.simulated_devices;
  out["step_time_s"] = number(r.step_time_s, "step_time_s");
  out["throughput"] = json{
      {"samples_per_s", number(r.samples_per_s, "samples_per_s")},
      {"tokens_per_s", number(r.tokens_per_s, "tokens_per_s")},
      {"model_tflop_per_s_per_device", number(r.model_tflops_per_device, "model_tflop_per_s_per_device")},
  };
  out["utilization"] = json{
      {"mfu_fraction", number(r.mfu, "mfu_fraction")},
      {"hfu_fraction", number(r.hfu, "hfu_fraction")},
      {"bubble_fraction", number(r.bubble_fraction, "bubble_fraction")},
      {"model_flop_per_step", number(r.model_flops_per_step, "model_flop_per_step")},
      {"hardware_flop_per_step", number(r.hardware_flops_per_step, "hardware_flop_per_step")},
  };
  out["time_breakdown_mean"] = breakdown_to_json(r.breakdown);
  out["interference"] = json{
      {"compute_lost_s", number(r.interference_compute_s, "interference compute_lost_s")},
      {"step_cost_s", number(r.interference_step_s, "interference step_cost_s")},
  };

  json stages = json::array();
  double peak_bytes = 0;
  for (const auto& s : r.memory) {
    stages.push_back(stage_memory_to_json(s));
    if (s.stage == r.peak_memory_stage) peak_bytes = s.memory.total_bytes();
  }
  out["memory"] = json{
      {"capacity_bytes", number(r.memory_capacity_bytes, "memory capacity_bytes")},
      {"fits", r.fits},
      {"peak_stage", r.peak_memory_stage},
      {"peak_bytes", number(peak_bytes, "memory peak_bytes")},
      {"per_stage", std::move(stages)},
  };
  out["communication"] = json{
      {"intra_node_bytes_per_step", number(r.intra_node_bytes, "intra_node_bytes_per_step")},
      {"inter_node_bytes_per_step", number(r.inter_node_bytes, "inter_node_bytes_per_step")},
  };

  json classes = json::array();
  for (const auto& c : r.link_classes)
    classes.push_back(json{{"link_class", c.link_class},
                           {"link_count", c.links},
                           {"used_link_count", c.links_used},
                           {"payload_bytes", number(c.bytes, "link class payload_bytes")},
                           {"max_load_s", number(c.max_load_s, "link class max_load_s")},
                           {"max_busy_s", number(c.max_busy_s, "link class max_busy_s")},
                           {"mean_busy_s", number(c.mean_busy_s, "link class mean_busy_s")},
                           {"bottleneck_phase_count", c.bottleneck_phases}});
  json busiest = json::array();
  for (const auto& l : r.busiest_links)
    busiest.push_back(json{{"link", l.name},
                           {"link_class", l.link_class},
                           {"bandwidth_bytes_per_s", number(l.bandwidth_bytes_per_s, "link bandwidth_bytes_per_s")},
                           {"payload_bytes", number(l.bytes, "link payload_bytes")},
                           {"load_s", number(l.load_s, "link load_s")},
                           {"busy_s", number(l.busy_s, "link busy_s")}});
  out["links"] = json{{"classes", std::move(classes)}, {"busiest", std::move(busiest)}, {"shared_link_count", r.shared_links}};
  out["notes"] = r.notes;
  if (const auto& lu = r.local_update) {
    out["local_update"] = json{
        {"algorithm", lu->algorithm},
        {"replica_count", lu->replicas},
        {"inner_step_count", lu->inner_steps},
        {"fragment_count", lu->fragments},
        {"overlap_step_count", lu->overlap_steps},
        {"compression", lu->compression},
        {"outer_optimizer", lu->outer_optimizer},
        {"inner_step_s", number(lu->inner_step_s, "local_update inner_step_s")},
        {"outer_step_s", number(lu->outer_step_s, "local_update outer_step_s")},
        {"time_per_inner_step_s", number(lu->time_per_inner_step_s, "local_update time_per_inner_step_s")},
        {"samples_per_s", number(lu->samples_per_s, "local_update samples_per_s")},
        {"tokens_per_s", number(lu->tokens_per_s, "local_update tokens_per_s")},
        {"compute_utilization_fraction", number(lu->compute_utilisation, "local_update compute_utilization_fraction")},
        {"wan_utilization_fraction", number(lu->wan_utilisation, "local_update wan_utilization_fraction")},
        {"wan_bytes_per_inner_step", number(lu->wan_bytes_per_inner_step, "local_update wan_bytes_per_inner_step")},
        {"pseudo_gradient_bytes", number(lu->pseudo_gradient_bytes, "local_update pseudo_gradient_bytes")},
        {"wan_bandwidth_for_95_percent_bytes_per_s", number(lu->wan_bandwidth_for_95_bytes_per_s, "local_update wan_bandwidth_for_95_percent_bytes_per_s")},
        {"outer_state_bytes", number(lu->outer_state_bytes, "local_update outer_state_bytes")},
        {"target_tokens", number(lu->target_tokens, "local_update target_tokens")},
        {"time_to_target_s", number(lu->time_to_target_s, "local_update time_to_target_s")},
        {"synchronous_step_s", number(lu->sync_step_s, "local_update synchronous_step_s")},
        {"synchronous_wan_bytes_per_step", number(lu->sync_wan_bytes_per_step, "local_update synchronous_wan_bytes_per_step")},
        {"outer_task_count", lu->outer_tasks},
    };
  }

  if (const auto& f = r.federated) {
    out["federated"] = json{
        {"algorithm", f->algorithm},
        {"server_optimizer", f->server_optimizer},
        {"client_count", f->population},
        {"clients_per_round_count", f->per_round},
        {"local_step_count", f->local_steps},
        {"round_count", f->rounds},
        {"seed", f->seed},
        {"speed", f->speed},
        {"upload_mbit_per_s", f->upload_mbps},
        {"download_mbit_per_s", f->download_mbps},
        {"availability", f->availability},
        {"server_bytes_per_s", number(f->server_gbps * 1e9 / 8, "federated server_bytes_per_s")},
        {"deadline_s", number(f->deadline_s, "federated deadline_s")},
        {"client_step_s", number(f->client_step_s, "federated client_step_s")},
        {"model_bytes", number(f->model_bytes, "federated model_bytes")},
        {"round_mean_s", number(f->round_mean_s, "federated round_mean_s")},
        {"round_p50_s", number(f->round_p50_s, "federated round_p50_s")},
        {"round_p90_s", number(f->round_p90_s, "federated round_p90_s")},
        {"round_p99_s", number(f->round_p99_s, "federated round_p99_s")},
        {"unavailable_fraction", number(f->unavailable_fraction, "federated unavailable_fraction")},
        {"late_fraction", number(f->late_fraction, "federated late_fraction")},
        {"samples_per_round", number(f->samples_per_round, "federated samples_per_round")},
        {"samples_per_s", number(f->samples_per_s, "federated samples_per_s")},
        {"server_bytes_per_round", number(f->server_bytes_per_round, "federated server_bytes_per_round")},
        {"server_link_utilization_fraction", number(f->server_link_utilisation, "federated server_link_utilization_fraction")},
        {"target_samples", number(f->target_samples, "federated target_samples")},
        {"time_to_target_s", number(f->time_to_target_s, "federated time_to_target_s")},
    };
  }

  if (const auto& f = r.input) {
    json in{
        {"placement", f->placement},
        {"threads_per_host", f->threads_per_host},
        {"prefetch_micro_batches", f->prefetch},
        {"hosts_loading", f->hosts_loading},
        {"samples_read", f->samples_read},
        {"read_bytes", number(f->read_bytes, "input read_bytes")},
        {"host_to_device_bytes", number(f->host_to_device_bytes, "input host_to_device_bytes")},
        {"device_to_device_bytes", number(f->device_to_device_bytes, "input device_to_device_bytes")},
        {"network_bytes", number(f->network_bytes, "input network_bytes")},
        {"loader_step_s", number(f->loader_step_s, "input loader_step_s")},
        {"storage_bound", f->storage_bound},
    };
    if (f->verdict) {
      in["unbounded_step_s"] = number(f->unbounded_step_s, "input unbounded_step_s");
      in["input_bound"] = f->input_bound;
      in["fewest_threads_per_host"] = f->fewest_threads;
      in["step_at_fewest_threads_s"] = number(f->step_at_fewest_s, "input step_at_fewest_threads_s");
    }
    out["input"] = std::move(in);
  }

  json per_stage = json::array();
  for (const auto& s : stage_times(r)) per_stage.push_back(stage_times_to_json(s));
  out["per_stage_times"] = std::move(per_stage);

  const std::size_t written = std::min(r.per_device.size(), static_cast<std::size_t>(options.max_devices));
  json devices = json::array();
  for (std::size_t i = 0; i < written; ++i) {
    const DeviceTimes& d = r.per_device[i];
    devices.push_back(json{{"device", d.device},
                           {"stage", d.stage},
                           {"comm_busy_s", number(d.comm_busy_s, "comm_busy_s")},
                           {"time_breakdown", breakdown_to_json(d.breakdown)}});
  }
  // Omitted = every device not written (also those a Result read from a cut file never had).
  out["per_device_times"] = json{{"omitted_device_count", std::max<std::int64_t>(0, r.devices - static_cast<std::int64_t>(written))},
                                 {"devices", std::move(devices)}};
  return out;
}

json to_json(std::span<const Result> results, const ResultJsonOptions& options) {
  json out = json::array();
  for (const auto& r : results) out.push_back(to_json(r, options));
  return out;
}

std::string json_text(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result result_from_json(const JsonDocument& doc, const std::string& pointer) {
  ObjectReader r(doc, pointer);
  {
    const std::string schema = r.string("schema");
    if (schema != kResultSchema)
      throw r.error("schema", "found schema \"" + schema + "\", expected \"" + kResultSchema +
                                  "\" (a result.json written by this version of parasim)");
  }
  Result out;
  out.scenario = r.string("scenario");
  out.variant = r.string("variant");
  out.model = r.string("model");
  out.plan = r.string("plan");
  out.backend = r.string("backend");
  {
    ObjectReader p = r.object("profile");
    out.profile = p.string("name");
    out.profile_origin = p.string("origin");
    p.finish();
  }
  out.device_kind = r.string("device_kind");
  if (r.has("attention_kernel")) out.attention_kernel = r.string("attention_kernel");
  if (r.has("implementation")) {
    ObjectReader i = r.object("implementation");
    out.implementation = i.string("framework");
    out.implementation_detail = i.string_or("detail", "");
    i.finish();
  } else {
    r.accept("implementation");
  }
  out.devices = r.integer("device_count", 1);
  out.tasks = r.integer("task_count", 0);
  out.replica_shortcut = r.boolean_or("replica_shortcut", false);
  out.simulated_devices = r.integer("simulated_device_count", 0);
  out.step_time_s = r.positive("step_time_s");
  {
    ObjectReader t = r.object("throughput");
    out.samples_per_s = t.number("samples_per_s", 0);
    out.tokens_per_s = t.number("tokens_per_s", 0);
    out.model_tflops_per_device = t.number("model_tflop_per_s_per_device", 0);
    t.finish();
  }
  {
    ObjectReader u = r.object("utilization");
    out.mfu = u.number("mfu_fraction", 0);
    out.hfu = u.number("hfu_fraction", 0);
    out.bubble_fraction = u.number("bubble_fraction", 0);
    out.model_flops_per_step = u.number("model_flop_per_step", 0);
    out.hardware_flops_per_step = u.number("hardware_flop_per_step", 0);
    u.finish();
  }
  out.breakdown = read_breakdown(r.object("time_breakdown_mean"));
  if (r.has("interference")) {
    ObjectReader i = r.object("interference");
    out.interference_compute_s = i.number("compute_lost_s", 0);
    out.interference_step_s = i.number("step_cost_s", 0);
    i.finish();
  } else {
    r.accept("interference");
  }
  {
    ObjectReader m = r.object("memory");
    out.memory_capacity_bytes = m.positive("capacity_bytes");
    {
      const auto& fits = m.required("fits");
      if (!fits.is_boolean())
        throw doc.error_at(m.pointer_of("fits"), "found " + describe_json_value(fits) + ", expected true or false");
      out.fits = fits.get<bool>();
    }
    out.peak_memory_stage = m.integer("peak_stage", 0);
    (void)m.number_or("peak_bytes", 0, 0);  // derived
    for (const auto& at : m.array("per_stage")) out.memory.push_back(read_stage_memory(ObjectReader(doc, at)));
    m.finish();
  }
  {
    ObjectReader c = r.object("communication");
    out.intra_node_bytes = c.number("intra_node_bytes_per_step", 0);
    out.inter_node_bytes = c.number("inter_node_bytes_per_step", 0);
    c.finish();
  }
  // Link-level figures and notes came with issue 4; files written before them have neither.
  if (r.has("links")) {
    ObjectReader links = r.object("links");
    for (const auto& at : links.array("classes")) {
      ObjectReader c(doc, at);
      LinkClassFigures f;
      f.link_class = c.string("link_class");
      f.links = c.integer("link_count", 0);
      f.links_used = c.integer("used_link_count", 0);
      f.bytes = c.number("payload_bytes", 0);
      f.max_load_s = c.number("max_load_s", 0);
      f.max_busy_s = c.number("max_busy_s", 0);
      f.mean_busy_s = c.number("mean_busy_s", 0);
      f.bottleneck_phases = c.integer("bottleneck_phase_count", 0);
      c.finish();
      out.link_classes.push_back(f);
    }
    for (const auto& at : links.array("busiest")) {
      ObjectReader l(doc, at);
      LinkFigures f;
      f.name = l.string("link");
      f.link_class = l.string("link_class");
      f.bandwidth_bytes_per_s = l.positive("bandwidth_bytes_per_s");
      f.bytes = l.number("payload_bytes", 0);
      f.load_s = l.number("load_s", 0);
      f.busy_s = l.number("busy_s", 0);
      l.finish();
      out.busiest_links.push_back(f);
    }
    out.shared_links = links.integer("shared_link_count", 0);
    links.finish();
  }
  if (r.has("notes"))
    for (const auto& at : r.array("notes")) out.notes.push_back(read_string(doc, at));
  if (r.has("local_update")) {
    ObjectReader l = r.object("local_update");
    LocalUpdateFigures f;
    f.algorithm = l.string("algorithm");
    f.replicas = l.integer("replica_count", 2);
    f.inner_steps = l.integer("inner_step_count", 1);
    f.fragments = l.integer("fragment_count", 1);
    f.overlap_steps = l.integer("overlap_step_count", 0);
    f.compression = l.string("compression");
    f.outer_optimizer = l.string("outer_optimizer");
    f.inner_step_s = l.positive("inner_step_s");
    f.outer_step_s = l.positive("outer_step_s");
    f.time_per_inner_step_s = l.positive("time_per_inner_step_s");
    f.samples_per_s = l.number("samples_per_s", 0);
    f.tokens_per_s = l.number("tokens_per_s", 0);
    f.compute_utilisation = l.number("compute_utilization_fraction", 0);
    f.wan_utilisation = l.number("wan_utilization_fraction", 0);
    f.wan_bytes_per_inner_step = l.number("wan_bytes_per_inner_step", 0);
    f.pseudo_gradient_bytes = l.number("pseudo_gradient_bytes", 0);
    f.wan_bandwidth_for_95_bytes_per_s = l.number("wan_bandwidth_for_95_percent_bytes_per_s", 0);
    f.outer_state_bytes = l.number("outer_state_bytes", 0);
    f.target_tokens = l.number("target_tokens", 0);
    f.time_to_target_s = l.number("time_to_target_s", 0);
    f.sync_step_s = l.positive("synchronous_step_s");
    f.sync_wan_bytes_per_step = l.number("synchronous_wan_bytes_per_step", 0);
    f.outer_tasks = l.integer("outer_task_count", 0);
    l.finish();
    out.local_update = f;
  }
  if (r.has("federated")) {
    ObjectReader l = r.object("federated");
    FederatedFigures f;
    f.algorithm = l.string("algorithm");
    f.server_optimizer = l.string("server_optimizer");
    f.population = l.integer("client_count", 1);
    f.per_round = l.integer("clients_per_round_count", 1);
    f.local_steps = l.integer("local_step_count", 1);
    f.rounds = l.integer("round_count", 1);
    f.seed = static_cast<std::uint64_t>(l.integer("seed", 0));
    f.speed = l.string("speed");
    f.upload_mbps = l.string("upload_mbit_per_s");
    f.download_mbps = l.string("download_mbit_per_s");
    f.availability = l.string("availability");
    f.server_gbps = l.positive("server_bytes_per_s") * 8 / 1e9;
    f.deadline_s = l.number("deadline_s", 0);
    f.client_step_s = l.positive("client_step_s");
    f.model_bytes = l.positive("model_bytes");
    f.round_mean_s = l.positive("round_mean_s");
    f.round_p50_s = l.positive("round_p50_s");
    f.round_p90_s = l.positive("round_p90_s");
    f.round_p99_s = l.positive("round_p99_s");
    f.unavailable_fraction = l.number("unavailable_fraction", 0);
    f.late_fraction = l.number("late_fraction", 0);
    f.samples_per_round = l.number("samples_per_round", 0);
    f.samples_per_s = l.number("samples_per_s", 0);
    f.server_bytes_per_round = l.number("server_bytes_per_round", 0);
    f.server_link_utilisation = l.number("server_link_utilization_fraction", 0);
    f.target_samples = l.number("target_samples", 0);
    f.time_to_target_s = l.number("time_to_target_s", 0);
    l.finish();
    out.federated = f;
  }
  if (r.has("input")) {
    ObjectReader l = r.object("input");
    InputFigures f;
    f.placement = l.string("placement");
    f.threads_per_host = l.integer("threads_per_host", 1);
    f.prefetch = l.integer("prefetch_micro_batches", 1);
    f.hosts_loading = l.integer("hosts_loading", 0);
    f.samples_read = l.integer("samples_read", 0);
    f.read_bytes = l.number("read_bytes", 0);
    f.host_to_device_bytes = l.number("host_to_device_bytes", 0);
    f.device_to_device_bytes = l.number("device_to_device_bytes", 0);
    f.network_bytes = l.number("network_bytes", 0);
    f.loader_step_s = l.number("loader_step_s", 0);
    f.storage_bound = l.boolean_or("storage_bound", false);
    f.verdict = l.has("input_bound");
    if (f.verdict) {
      f.unbounded_step_s = l.positive("unbounded_step_s");
      f.input_bound = l.boolean_or("input_bound", false);
      f.fewest_threads = l.integer("fewest_threads_per_host", 0);
      f.step_at_fewest_s = l.number("step_at_fewest_threads_s", 0);
    }
    l.finish();
    out.input = f;
  }
  for (const auto& at : r.array("per_stage_times")) check_stage_times(ObjectReader(doc, at));
  {
    ObjectReader pd = r.object("per_device_times");
    const std::int64_t omitted = pd.integer("omitted_device_count", 0);
    for (const auto& at : pd.array("devices")) {
      ObjectReader d(doc, at);
      DeviceTimes t;
      t.device = d.integer("device", 0);
      if (t.device >= out.devices)
        throw d.error("device", "found device " + std::to_string(t.device) + ", expected a device id below device_count " +
                                    std::to_string(out.devices));
      t.stage = d.integer("stage", 0);
      t.comm_busy_s = d.number("comm_busy_s", 0);
      t.breakdown = read_breakdown(d.object("time_breakdown"));
      d.finish();
      out.per_device.push_back(t);
    }
    const auto listed = static_cast<std::int64_t>(out.per_device.size());
    if (listed + omitted != out.devices)
      throw pd.error("omitted_device_count", "found " + std::to_string(omitted) + " omitted and " + std::to_string(listed) +
                                                 " listed devices, expected them to add up to device_count " +
                                                 std::to_string(out.devices));
    pd.finish();
  }
  r.finish();
  return out;
}

std::vector<Result> results_from_json(const JsonDocument& doc) {
  std::vector<Result> out;
  if (doc.root().is_array()) {
    if (doc.root().empty()) throw doc.error_at("", "found an empty array, expected at least one result");
    for (std::size_t i = 0; i < doc.root().size(); ++i) out.push_back(result_from_json(doc, json_pointer_append("", i)));
  } else {
    out.push_back(result_from_json(doc, ""));
  }
  return out;
}

}  // namespace parasim::sim
