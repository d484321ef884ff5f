#include "sim/profile_json.hpp"

#include <algorithm>
#include <array>

#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "common/did_you_mean.hpp"
#include "common/json_reader.hpp"
#include "sim/collectives/names.hpp"

// The datasheet files, compiled into the binary by parasim_embed (sim/CMakeLists.txt).
namespace parasim::embedded {
std::string_view v100();
std::string_view a100_40gb();
std::string_view a100_80gb();
std::string_view h100_sxm();
std::string_view h200();
std::string_view b200();
std::string_view tpu_v4();
std::string_view tpu_v5e();
std::string_view tpu_v5p();
std::string_view host_cpu();
std::string_view link_classes();
}  // namespace parasim::embedded

namespace parasim::sim {
namespace {

/// An attention implementation's name: 1 to 64 of [a-z0-9-], so it reads the same in every message.
bool valid_kernel_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

nlohmann::json curve_to_json(const EfficiencyCurve& curve) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [size, eff] : curve.points) out.push_back(nlohmann::json::array({size, eff}));
  return out;
}

nlohmann::json sources_to_json(const std::map<std::string, std::string>& sources) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [figure, source] : sources) out[figure] = source;
  return out;
}

EfficiencyCurve read_curve(const JsonDocument& doc, const std::string& pointer) {
  const auto& v = value_at(doc, pointer);
  if (!v.is_array() || v.empty())
    throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected a non-empty array of [size, efficiency] pairs");
  EfficiencyCurve curve;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = json_pointer_append(pointer, i);
    const auto& e = v[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
      throw doc.error_at(at, "found " + describe_json_value(e) + ", expected a [size, efficiency] pair of numbers");
    const double size = e[0].get<double>();
    const double eff = e[1].get<double>();
    if (!std::isfinite(size) || size <= 0)
      throw doc.error_at(json_pointer_append(at, 0), "found " + describe_json_value(e[0]) + ", expected a size > 0");
    if (!std::isfinite(eff) || eff <= 0 || eff > 1)
      throw doc.error_at(json_pointer_append(at, 1), "found " + describe_json_value(e[1]) + ", expected an efficiency in (0, 1]");
    if (!curve.points.empty() && size <= curve.points.back().first)
      throw doc.error_at(json_pointer_append(at, 0), "found " + describe_json_value(e[0]) +
                                                         ", expected a size larger than the previous point's (sizes must increase)");
    curve.points.emplace_back(size, eff);
  }
  return curve;
}

/// Keys of the object at `pointer` (the value there is already known to be an object).
std::vector<std::string> keys_of(const JsonDocument& doc, const std::string& pointer) {
  std::vector<std::string> keys;
  for (auto it = value_at(doc, pointer).begin(); it != value_at(doc, pointer).end(); ++it) keys.push_back(it.key());
  return keys;
}

std::map<std::string, std::string> read_sources(ObjectReader& owner, const std::vector<std::string>& figures) {
  std::map<std::string, std::string> sources;
  if (!owner.has("sources")) {
    owner.accept("sources");
    return sources;
  }
  ObjectReader r = owner.object("sources");
  for (const auto& key : keys_of(r.document(), r.pointer())) {
    bool known = false;
    for (const auto& f : figures) known = known || f == key;
    if (!known)
      throw r.document().error_at_key(r.pointer_of(key), "no figure named \"" + key + "\"" + did_you_mean(key, figures) +
                                                             "; the figures are " + quoted_list(figures));
    sources[key] = r.string(key);
  }
  return sources;
}

/// {"compute": {"all-reduce": 0.84, ...}, "communication": {...}, "compute_by_size": {"all-reduce":
/// [[bytes, rate], ...], ...}, "communication_by_size": {...}, "nccl_channels_in_node": 24}: rates in
/// (0, 1] by interference class (sim/interference.hpp), a class left out keeping rate 1; where a
/// class was measured at several sizes, its rates by the collective's bytes (a curve as the
/// efficiency curves are); and NCCL's channel count inside a node.
InterferenceRates read_interference(ObjectReader r) {
  InterferenceRates rates;
  const JsonDocument& doc = r.document();
  rates.nccl_channels_in_node = r.number_or("nccl_channels_in_node", 1, 0);
  const auto& names = interference_class_names();
  auto class_of = [&](const ObjectReader& by, const std::string& key) {
    const auto it = std::find(names.begin(), names.end(), key);
    if (it == names.end())
      throw doc.error_at_key(by.pointer_of(key), "unknown collective kind or kernel \"" + key + "\"" + did_you_mean(key, names) +
                                                     "; expected one of " + quoted_list(names));
    return static_cast<std::size_t>(it - names.begin());
  };
  // Each side's object: a member per class, read by `read` (class index, the object, the key).
  auto each_class = [&](const char* side, const auto& read) {
    if (!r.has(side)) {
      r.accept(side);
      return;
    }
    ObjectReader by = r.object(side);
    for (const auto& key : keys_of(doc, by.pointer())) read(class_of(by, key), by, key);
    by.finish();
  };
  for (auto [side, into] : {std::pair{"compute", &rates.compute}, std::pair{"communication", &rates.communication}})
    each_class(side, [into = into](std::size_t k, ObjectReader& by, const std::string& key) {
      const double rate = by.positive(key);
      if (rate > 1) throw by.error(key, "found " + std::to_string(rate) + ", expected a rate in (0, 1]: the fraction of full speed kept");
      (*into)[k] = rate;
    });
  for (auto [side, into] : {std::pair{"compute_by_size", &rates.compute_by_size}, std::pair{"communication_by_size", &rates.communication_by_size}})
    each_class(side, [&doc, into = into](std::size_t k, ObjectReader& by, const std::string& key) {
      by.accept(key);
      (*into)[k] = read_curve(doc, by.pointer_of(key));
    });
  r.finish();
  return rates;
}

nlohmann::json interference_to_json(const InterferenceRates& rates) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [side, from] : {std::pair<const char*, const std::array<double, kInterferenceClassCount>*>{"compute", &rates.compute},
                                   {"communication", &rates.communication}}) {
    nlohmann::json by = nlohmann::json::object();
    for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
      if ((*from)[k] < 1) by[interference_class_names()[k]] = (*from)[k];
    if (!by.empty()) out[side] = by;
  }
  for (const auto& [side, from] : {std::pair<const char*, const std::array<EfficiencyCurve, kInterferenceClassCount>*>{"compute_by_size", &rates.compute_by_size},
                                   {"communication_by_size", &rates.communication_by_size}}) {
    nlohmann::json by = nlohmann::json::object();
    for (std::size_t k = 0; k < kInterferenceClassCount; ++k)
      if (!(*from)[k].points.empty()) by[interference_class_names()[k]] = curve_to_json((*from)[k]);
    if (!by.empty()) out[side] = by;
  }
  if (rates.nccl_channels_in_node > 0) out["nccl_channels_in_node"] = rates.nccl_channels_in_node;
  return out;
}

DeviceProfile read_device(const JsonDocument& doc, const std::string& pointer, const std::string& name) {
  ObjectReader r(doc, pointer);
  DeviceProfile d;
  d.name = name;
  d.description = r.string_or("description", "");
  {
    ObjectReader peaks = r.object("peak_flops_per_s");
    for (const auto& key : keys_of(doc, peaks.pointer())) {
      const auto dtype = models::dtype_from_string(key);
      if (!dtype)
        throw doc.error_at_key(peaks.pointer_of(key), "unknown dtype \"" + key + "\"" + did_you_mean(key, models::dtype_names()) +
                                                          "; expected one of " + quoted_list(models::dtype_names()));
      d.peak_flops_per_s[*dtype] = peaks.positive(key);
    }
    if (d.peak_flops_per_s.empty())
      throw doc.error_at(peaks.pointer(), "found an empty object, expected the peak FLOP/s of at least one dtype");
  }
  d.memory_bandwidth_bytes_per_s = r.positive("memory_bandwidth_bytes_per_s");
  d.memory_capacity_bytes = r.positive("memory_capacity_bytes");
  d.memory_reserved_bytes = r.number_or("memory_reserved_bytes", 0, 0);
  if (d.memory_reserved_bytes >= d.memory_capacity_bytes)
    throw r.error("memory_reserved_bytes", "the reserve must be smaller than memory_capacity_bytes");
  r.required("gemm_efficiency");
  d.gemm_efficiency = read_curve(doc, r.pointer_of("gemm_efficiency"));
  if (r.has("gemm_efficiency_by_dtype")) {
    ObjectReader by = r.object("gemm_efficiency_by_dtype");
    for (const auto& key : keys_of(doc, by.pointer())) {
      const auto dtype = models::dtype_from_string(key);
      if (!dtype || !d.peak_flops_per_s.count(*dtype))
        throw doc.error_at_key(by.pointer_of(key), "found \"" + key + "\", expected a dtype with a peak in peak_flops_per_s");
      by.required(key);
      d.gemm_efficiency_by_dtype[*dtype] = read_curve(doc, by.pointer_of(key));
    }
    by.finish();
  } else {
    r.accept("gemm_efficiency_by_dtype");
  }
  if (r.has("attention_efficiency")) {
    for (const auto& at : r.array("attention_efficiency")) {
      ObjectReader e(doc, at);
      AttentionEfficiency a;
      a.implementation = e.string("implementation");
      if (!valid_kernel_name(a.implementation))
        throw e.error("implementation", "found \"" + a.implementation +
                                            "\", expected a kernel library's name of 1 to 64 lower-case letters, digits and '-' (\"cudnn\", \"flash-attention-2\")");
      const std::string dtype = e.string("dtype");
      const auto t = models::dtype_from_string(dtype);
      if (!t || !d.peak_flops_per_s.count(*t))
        throw e.error("dtype", "found \"" + dtype + "\", expected a dtype with a peak in peak_flops_per_s");
      a.dtype = *t;
      a.head_dim = e.integer("head_dim", 1);
      a.causal = e.boolean_or("causal", true);
      e.required("forward");
      a.forward = read_curve(doc, e.pointer_of("forward"));
      e.required("backward");
      a.backward = read_curve(doc, e.pointer_of("backward"));
      e.finish();
      for (const auto& other : d.attention_efficiency)
        if (other.implementation == a.implementation && other.dtype == a.dtype && other.head_dim == a.head_dim && other.causal == a.causal)
          throw doc.error_at(at, "a second " + a.implementation + " curve for " + dtype + ", head dim " + std::to_string(a.head_dim) +
                                     (a.causal ? ", causal" : ", full mask") + "; each combination may appear once");
      d.attention_efficiency.push_back(std::move(a));
    }
  } else {
    r.accept("attention_efficiency");
  }
  r.required("memory_efficiency");
  d.memory_efficiency = read_curve(doc, r.pointer_of("memory_efficiency"));
  d.kernel_launch_overhead_s = r.number("kernel_launch_overhead_s", 0);
  if (r.has("gemm_thin_efficiency")) {
    r.required("gemm_thin_efficiency");
    d.gemm_thin_efficiency = read_curve(doc, r.pointer_of("gemm_thin_efficiency"));
  } else {
    r.accept("gemm_thin_efficiency");
  }
  if (r.has("gemm_thin_backward_efficiency")) {
    r.required("gemm_thin_backward_efficiency");
    d.gemm_thin_backward_efficiency = read_curve(doc, r.pointer_of("gemm_thin_backward_efficiency"));
  } else {
    r.accept("gemm_thin_backward_efficiency");
  }
  if (r.has("gemm_thin_efficiency_by_dim")) {
    ObjectReader by = r.object("gemm_thin_efficiency_by_dim");
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string dim(1, "mnk"[i]);
      by.required(dim);
      d.gemm_thin_efficiency_by_dim[i] = read_curve(doc, by.pointer_of(dim));
    }
    by.finish();
  } else {
    r.accept("gemm_thin_efficiency_by_dim");
  }
  d.convolution = r.string_or("convolution", "winograd");
  if (d.convolution != "winograd" && d.convolution != "im2col-gemm")
    throw r.error("convolution", "found \"" + d.convolution + "\", expected \"winograd\" or \"im2col-gemm\"");
  d.softmax_flops_per_s = r.number_or("softmax_flops_per_s", 0, 0);
  d.optimizer_flops_per_s = r.number_or("optimizer_flops_per_s", 0, 0);
  // A rate and its curves come together: one without the others prices nothing. The optimizer's
  // update, weights read again out of cache (the forward and the backward's pair), and the memory
  // pass out of cache (its output cold, its input cold).
  auto rate_and_curves = [&](const char* rate_key, double& rate, std::initializer_list<std::pair<const char*, EfficiencyCurve*>> curves) {
    bool any = r.has(rate_key);
    for (const auto& [key, curve] : curves) any = any || r.has(key);
    if (!any) {
      r.accept(rate_key);
      for (const auto& [key, curve] : curves) r.accept(key);
      return;
    }
    rate = r.positive(rate_key);
    for (const auto& [key, curve] : curves) {
      (void)r.required(key);
      *curve = read_curve(doc, r.pointer_of(key));
    }
  };
  rate_and_curves("optimizer_bytes_per_s", d.optimizer_bytes_per_s, {{"optimizer_memory_efficiency", &d.optimizer_memory_efficiency}});
  rate_and_curves("weight_reuse_bytes_per_s", d.weight_reuse_bytes_per_s, {{"weight_reuse_efficiency", &d.weight_reuse_efficiency}});
  rate_and_curves("weight_reuse_backward_bytes_per_s", d.weight_reuse_backward_bytes_per_s,
                  {{"weight_reuse_backward_efficiency", &d.weight_reuse_backward_efficiency}});
  rate_and_curves("memory_reuse_bytes_per_s", d.memory_reuse_bytes_per_s,
                  {{"memory_reuse_efficiency", &d.memory_reuse_efficiency}, {"memory_reuse_read_efficiency", &d.memory_reuse_read_efficiency}});
  if (r.has("interference")) {
    d.interference = read_interference(r.object("interference"));
  } else {
    r.accept("interference");
  }
  if (r.has("rank_spread")) {
    ObjectReader spread = r.object("rank_spread");
    d.rank_spread.ranks = spread.integer("ranks", 2);
    d.rank_spread.slowest_over_mean = spread.number("slowest_over_mean", 1);
    if (d.rank_spread.slowest_over_mean > 10)
      throw spread.error("slowest_over_mean", "found " + std::to_string(d.rank_spread.slowest_over_mean) +
                                                  ", expected at most 10 (the slowest rank's time over the ranks' mean)");
    spread.finish();
  } else {
    r.accept("rank_spread");
  }
  if (r.has("shared_host")) {
    // The entry it names is checked once every device is read (find_missing_link's loop, below).
    ObjectReader shared = r.object("shared_host");
    d.shared_host.ranks = shared.integer("ranks", 2);
    d.shared_host.device = shared.string("device");
    shared.finish();
  } else {
    r.accept("shared_host");
  }
  d.default_intra_link = r.string_or("default_intra_link", "");
  d.default_inter_link = r.string_or("default_inter_link", "");
  d.sources = read_sources(r, figure_names(d));
  if (r.has("held_out")) {
    for (const auto& at : r.array("held_out")) {
      ObjectReader e(doc, at);
      HeldOutCheck c;
      c.kernel = e.string("kernel");
      if (c.kernel != "gemm" && c.kernel != "memory") throw e.error("kernel", "found \"" + c.kernel + "\", expected \"gemm\" or \"memory\"");
      c.shape = e.string("shape");
      c.measured_s = e.positive("measured_s");
      c.predicted_s = e.positive("predicted_s");
      e.finish();
      d.held_out.push_back(std::move(c));
    }
  } else {
    r.accept("held_out");
  }
  r.finish();
  return d;
}

LinkProfile read_link(const JsonDocument& doc, const std::string& pointer, const std::string& name) {
  ObjectReader r(doc, pointer);
  LinkProfile l;
  l.name = name;
  l.description = r.string_or("description", "");
  l.bandwidth_bytes_per_s = r.positive("bandwidth_bytes_per_s");
  l.latency_s = r.number("latency_s", 0);
  r.required("efficiency");
  l.efficiency = read_curve(doc, r.pointer_of("efficiency"));
  if (r.has("collective_efficiency")) {
    ObjectReader kinds = r.object("collective_efficiency");
    for (const auto& key : keys_of(doc, kinds.pointer())) {
      kinds.accept(key);
      std::optional<CollectiveKind> kind;
      std::string expected;
      for (const auto k : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather, CollectiveKind::AllToAll, CollectiveKind::Broadcast,
                           CollectiveKind::SendRecv}) {
        if (key == to_string(k)) kind = k;
        expected += (expected.empty() ? "\"" : ", \"") + std::string(to_string(k)) + "\"";
      }
      if (!kind)
        throw doc.error_at_key(kinds.pointer_of(key), "found \"" + key + "\", expected a collective kind other than the all-reduce (" + expected +
                                                          "); the all-reduce's curve is \"efficiency\"");
      l.collective_efficiency[*kind] = read_curve(doc, kinds.pointer_of(key));
    }
  } else {
    r.accept("collective_efficiency");
  }
  if (r.has("protocols")) {
    for (const auto& at : r.array("protocols")) {
      ObjectReader e(doc, at);
      Protocol p;
      p.name = e.string("name");
      if (!valid_kernel_name(p.name))
        throw e.error("name", "found \"" + p.name + "\", expected a protocol's name of 1 to 64 lower-case letters, digits and '-' (\"simple\", \"ll128\")");
      p.hop_latency_s = e.number("hop_latency_s", 0);
      p.bandwidth_fraction = e.positive("bandwidth_fraction");
      if (p.bandwidth_fraction > 1) throw e.error("bandwidth_fraction", "found " + std::to_string(p.bandwidth_fraction) + ", expected a fraction in (0, 1]");
      p.base_latency_s = e.number_or("base_latency_s", 0, 0);
      e.finish();
      for (const auto& other : l.protocols)
        if (other.name == p.name) throw doc.error_at(at, "a second protocol \"" + p.name + "\"; each may appear once");
      l.protocols.push_back(std::move(p));
    }
  } else {
    r.accept("protocols");
  }
  l.sources = read_sources(r, figure_names(l));
  r.finish();
  return l;
}

/// Reads the optional "devices" and "links" members of `r` into `profile`. A name already present
/// is an error (two datasheet files, or a user file, defining the same device).
void read_members(ObjectReader& r, Profile& profile) {
  const JsonDocument& doc = r.document();
  if (r.has("devices")) {
    ObjectReader devices = r.object("devices");
    for (const auto& name : keys_of(doc, devices.pointer())) {
      devices.accept(name);
      if (profile.devices.count(name))
        throw doc.error_at_key(devices.pointer_of(name), "device \"" + name + "\" is defined twice");
      profile.devices.emplace(name, read_device(doc, devices.pointer_of(name), name));
    }
  } else {
    r.accept("devices");
  }
  if (r.has("loaders")) {
    ObjectReader loaders = r.object("loaders");
    for (const auto& name : keys_of(doc, loaders.pointer())) {
      if (name != "jpeg-tar" && name != "cifar-bin")
        throw doc.error_at_key(loaders.pointer_of(name), "found a loader for \"" + name + "\"; expected \"jpeg-tar\" or \"cifar-bin\"");
      if (profile.loaders.count(name)) throw doc.error_at_key(loaders.pointer_of(name), "loader \"" + name + "\" is defined twice");
      ObjectReader l = loaders.object(name);
      LoaderProfile lp;
      lp.decode_s_per_sample = l.positive("decode_s_per_sample");
      if (l.has("decode_s_per_sample_at_threads"))
        for (const auto& at : l.array("decode_s_per_sample_at_threads")) {
          const nlohmann::json& v = doc.root().at(nlohmann::json::json_pointer(at));
          if (!v.is_number() || !(v.get<double>() > 0)) throw doc.error_at(at, "found " + describe_json_value(v) + ", expected a number > 0 (seconds)");
          lp.decode_s_at_threads.push_back(v.get<double>());
        }
      lp.copy_bytes_per_s = l.positive("copy_bytes_per_s");
      lp.image_size = l.integer("image_size", 1);
      lp.source = l.string("source");
      if (l.has("checks"))
        for (const auto& at : l.array("checks")) {
          ObjectReader c(doc, at);
          LoaderCheck check;
          check.placement = c.enum_string("placement", {"naive", "per_device", "sharded"});
          check.threads = c.integer("threads", 1);
          check.measured_s_per_sample = c.positive("measured_s_per_sample");
          check.predicted_s_per_sample = c.positive("predicted_s_per_sample");
          c.finish();
          lp.checks.push_back(check);
        }
      l.finish();
      profile.loaders.emplace(name, lp);
    }
  } else {
    r.accept("loaders");
  }
  if (r.has("links")) {
    ObjectReader links = r.object("links");
    for (const auto& name : keys_of(doc, links.pointer())) {
      links.accept(name);
      if (profile.links.count(name)) throw doc.error_at_key(links.pointer_of(name), "link \"" + name + "\" is defined twice");
      profile.links.emplace(name, read_link(doc, links.pointer_of(name), name));
    }
  } else {
    r.accept("links");
  }
}

/// The first default link of a device that the profile lacks, or the first shared-host entry that
/// names no device of the profile (or one with a shared-host entry of its own): (device, field and
/// the member under it where there is one, message), or nothing.
struct MissingLink {
  std::string device;
  std::string field;
  std::string member;
  std::string message;
};
std::optional<MissingLink> find_missing_link(const Profile& profile) {
  std::vector<std::string> names, device_names;
  for (const auto& [name, link] : profile.links) names.push_back(name);
  for (const auto& [name, d] : profile.devices) device_names.push_back(name);
  for (const auto& [name, d] : profile.devices) {
    for (const auto& [field, link] : {std::pair<std::string, std::string>{"default_intra_link", d.default_intra_link},
                                      {"default_inter_link", d.default_inter_link}}) {
      if (link.empty() || profile.links.count(link)) continue;
      return MissingLink{name, field, "",
                         "unknown link \"" + link + "\"" + did_you_mean(link, names) + "; the profile's links are " + quoted_list(names)};
    }
    if (d.shared_host.ranks == 0) continue;
    const auto it = profile.devices.find(d.shared_host.device);
    if (it == profile.devices.end())
      return MissingLink{name, "shared_host", "device",
                         "unknown device \"" + d.shared_host.device + "\"" + did_you_mean(d.shared_host.device, device_names) +
                             "; the profile's devices are " + quoted_list(device_names)};
    if (it->first == name || it->second.shared_host.ranks > 0)
      return MissingLink{name, "shared_host", "device",
                         "found \"" + d.shared_host.device + "\", a device with a shared_host entry of its own; expected the entry measured with the host's ranks running at once, which has none"};
  }
  return std::nullopt;
}

Profile load_datasheet() {
  const std::pair<const char*, std::string_view (*)()> files[] = {
      {"v100", embedded::v100},           {"a100_40gb", embedded::a100_40gb}, {"a100_80gb", embedded::a100_80gb},
      {"h100_sxm", embedded::h100_sxm},   {"h200", embedded::h200},           {"b200", embedded::b200},
      {"tpu_v4", embedded::tpu_v4},       {"tpu_v5e", embedded::tpu_v5e},     {"tpu_v5p", embedded::tpu_v5p},
      {"host_cpu", embedded::host_cpu},   {"link_classes", embedded::link_classes},
  };
  Profile profile;
  profile.name = "datasheet";
  profile.origin = "built-in datasheet figures";
  try {
    for (const auto& [stem, text] : files) {
      const JsonDocument doc = JsonDocument::parse(text(), std::string("sim/profiles/") + stem + ".json");
      ObjectReader r(doc, "");
      read_members(r, profile);
      r.finish();
    }
  } catch (const InputError& e) {
    // The embedded files are part of parasim, so a fault in them is a parasim bug, not bad input.
    throw InternalError(std::string("built-in datasheet profile: ") + e.what());
  }
  if (auto missing = find_missing_link(profile))
    throw InternalError("built-in datasheet profile: device \"" + missing->device + "\", " + missing->field + ": " + missing->message);
  return profile;
}

}  // namespace

nlohmann::json to_json(const Profile& profile) {
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [name, d] : profile.devices) {
    nlohmann::json peaks = nlohmann::json::object();
    for (const auto& [dtype, flops] : d.peak_flops_per_s) peaks[std::string(models::to_string(dtype))] = flops;
    devices[name] = {
        {"description", d.description},
        {"peak_flops_per_s", peaks},
        {"memory_bandwidth_bytes_per_s", d.memory_bandwidth_bytes_per_s},
        {"memory_capacity_bytes", d.memory_capacity_bytes},
        {"memory_reserved_bytes", d.memory_reserved_bytes},
        {"gemm_efficiency", curve_to_json(d.gemm_efficiency)},
        {"memory_efficiency", curve_to_json(d.memory_efficiency)},
        {"kernel_launch_overhead_s", d.kernel_launch_overhead_s},
        {"default_intra_link", d.default_intra_link},
        {"default_inter_link", d.default_inter_link},
        {"sources", sources_to_json(d.sources)},
    };
    if (d.softmax_flops_per_s > 0) devices[name]["softmax_flops_per_s"] = d.softmax_flops_per_s;
    if (d.rank_spread.ranks > 0)
      devices[name]["rank_spread"] = {{"ranks", d.rank_spread.ranks}, {"slowest_over_mean", d.rank_spread.slowest_over_mean}};
    if (d.shared_host.ranks > 0) devices[name]["shared_host"] = {{"ranks", d.shared_host.ranks}, {"device", d.shared_host.device}};
    if (d.convolution != "winograd") devices[name]["convolution"] = d.convolution;
    if (!d.gemm_thin_efficiency.points.empty()) devices[name]["gemm_thin_efficiency"] = curve_to_json(d.gemm_thin_efficiency);
    if (!d.gemm_thin_efficiency_by_dim[0].points.empty())
      devices[name]["gemm_thin_efficiency_by_dim"] = {{"m", curve_to_json(d.gemm_thin_efficiency_by_dim[0])},
                                                      {"n", curve_to_json(d.gemm_thin_efficiency_by_dim[1])},
                                                      {"k", curve_to_json(d.gemm_thin_efficiency_by_dim[2])}};
    if (!d.gemm_thin_backward_efficiency.points.empty())
      devices[name]["gemm_thin_backward_efficiency"] = curve_to_json(d.gemm_thin_backward_efficiency);
    if (d.optimizer_flops_per_s > 0) devices[name]["optimizer_flops_per_s"] = d.optimizer_flops_per_s;
    if (d.optimizer_bytes_per_s > 0) {
      devices[name]["optimizer_bytes_per_s"] = d.optimizer_bytes_per_s;
      devices[name]["optimizer_memory_efficiency"] = curve_to_json(d.optimizer_memory_efficiency);
    }
    if (d.weight_reuse_bytes_per_s > 0) {
      devices[name]["weight_reuse_bytes_per_s"] = d.weight_reuse_bytes_per_s;
      devices[name]["weight_reuse_efficiency"] = curve_to_json(d.weight_reuse_efficiency);
    }
    if (d.weight_reuse_backward_bytes_per_s > 0) {
      devices[name]["weight_reuse_backward_bytes_per_s"] = d.weight_reuse_backward_bytes_per_s;
      devices[name]["weight_reuse_backward_efficiency"] = curve_to_json(d.weight_reuse_backward_efficiency);
    }
    if (d.memory_reuse_bytes_per_s > 0) {
      devices[name]["memory_reuse_bytes_per_s"] = d.memory_reuse_bytes_per_s;
      devices[name]["memory_reuse_efficiency"] = curve_to_json(d.memory_reuse_efficiency);
      devices[name]["memory_reuse_read_efficiency"] = curve_to_json(d.memory_reuse_read_efficiency);
    }
    if (!d.gemm_efficiency_by_dtype.empty()) {
      nlohmann::json by = nlohmann::json::object();
      for (const auto& [dtype, curve] : d.gemm_efficiency_by_dtype) by[std::string(models::to_string(dtype))] = curve_to_json(curve);
      devices[name]["gemm_efficiency_by_dtype"] = by;
    }
    if (!d.attention_efficiency.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& a : d.attention_efficiency)
        list.push_back({{"implementation", a.implementation},
                        {"dtype", std::string(models::to_string(a.dtype))}, {"head_dim", a.head_dim}, {"causal", a.causal},
                        {"forward", curve_to_json(a.forward)}, {"backward", curve_to_json(a.backward)}});
      devices[name]["attention_efficiency"] = list;
    }
    if (!d.interference.none()) devices[name]["interference"] = interference_to_json(d.interference);
    if (!d.held_out.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& c : d.held_out)
        list.push_back({{"kernel", c.kernel}, {"shape", c.shape}, {"measured_s", c.measured_s}, {"predicted_s", c.predicted_s}});
      devices[name]["held_out"] = list;
    }
  }
  nlohmann::json links = nlohmann::json::object();
  for (const auto& [name, l] : profile.links) {
    links[name] = {
        {"description", l.description},
        {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
        {"latency_s", l.latency_s},
        {"efficiency", curve_to_json(l.efficiency)},
        {"sources", sources_to_json(l.sources)},
    };
    if (!l.collective_efficiency.empty()) {
      nlohmann::json kinds = nlohmann::json::object();
      for (const auto& [kind, curve] : l.collective_efficiency) kinds[std::string(to_string(kind))] = curve_to_json(curve);
      links[name]["collective_efficiency"] = kinds;
    }
    if (!l.protocols.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& p : l.protocols)
        list.push_back({{"name", p.name}, {"hop_latency_s", p.hop_latency_s}, {"bandwidth_fraction", p.bandwidth_fraction},
                        {"base_latency_s", p.base_latency_s}});
      links[name]["protocols"] = list;
    }
  }
  nlohmann::json out{{"name", profile.name}, {"origin", profile.origin}, {"devices", devices}, {"links", links}};
  if (!profile.loaders.empty()) {
    nlohmann::json loaders = nlohmann::json::object();
    for (const auto& [name, l] : profile.loaders) {
      nlohmann::json checks = nlohmann::json::array();
      for (const auto& c : l.checks)
        checks.push_back({{"placement", c.placement}, {"threads", c.threads}, {"measured_s_per_sample", c.measured_s_per_sample},
                          {"predicted_s_per_sample", c.predicted_s_per_sample}});
      loaders[name] = {{"decode_s_per_sample", l.decode_s_per_sample}, {"decode_s_per_sample_at_threads", l.decode_s_at_threads},
                       {"copy_bytes_per_s", l.copy_bytes_per_s}, {"image_size", l.image_size}, {"checks", checks}, {"source", l.source}};
    }
    out["loaders"] = loaders;
  }
  return out;
}

Profile profile_from_json(const JsonDocument& doc, const std::string& pointer) {
  ObjectReader r(doc, pointer);
  Profile profile;
  profile.name = r.string("name");
  profile.origin = r.string_or("origin", "profile file " + doc.file());
  read_members(r, profile);
  r.finish();
  if (auto missing = find_missing_link(profile)) {
    std::string at = json_pointer_append(json_pointer_append(json_pointer_append(pointer, "devices"), missing->device), missing->field);
    if (!missing->member.empty()) at = json_pointer_append(at, missing->member);
    throw doc.error_at(at, missing->message);
  }
  return profile;
}

const Profile& datasheet_profile() {
  static const Profile profile = load_datasheet();
  return profile;
}

}  // namespace parasim::sim
