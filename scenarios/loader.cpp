#include "scenarios/loader.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/format.hpp"
#include "common/json_document.hpp"
#include "scenarios/decode.hpp"
#include "scenarios/data.hpp"
#include "scenarios/local_update.hpp"
#include "scenarios/model_source.hpp"
#include "scenarios/schema_check.hpp"
#include "scenarios/what_if.hpp"
#include "sim/auto_pipeline.hpp"
#include "sim/auto_sharding.hpp"
#include "sim/cluster.hpp"
#include "sim/cost_model.hpp"
#include "sim/profile_json.hpp"
#include "strategies/plan.hpp"

namespace parasim::scenarios {
namespace {

using nlohmann::json;

/// Turns faults at pointers of the JSON being checked (the file's own, or a variant's) into located
/// InputErrors in the file.
class Reporter {
 public:
  /// For the base scenario: pointers are the file's own.
  explicit Reporter(const JsonDocument& doc) : doc_(doc) {}
  /// For what-if `index` named `name`: pointers of the variant map back to its "set" entries.
  Reporter(const JsonDocument& doc, std::size_t index, std::string name, const std::vector<Assignment>* assignments)
      : doc_(doc), variant_(true), name_(std::move(name)), assignments_(assignments) {
    set_pointer_ = "/what_if/" + std::to_string(index) + "/set";
  }

  [[nodiscard]] InputError error(const std::string& pointer, const std::string& message, bool at_key = false) const {
    if (!variant_) return at_key ? doc_.error_at_key(pointer, message) : doc_.error_at(pointer, message);
    const FaultSource source = source_of(*assignments_, set_pointer_, pointer);
    std::string text = "what-if \"" + name_ + "\": ";
    if (!source.direct) text += "in the variant, " + (pointer.empty() ? std::string("/") : pointer) + ": ";
    text += message;
    return at_key && source.direct ? doc_.error_at_key(source.pointer, text) : doc_.error_at(source.pointer, text);
  }

  /// Where a pointer of the checked JSON sits in the file.
  [[nodiscard]] SourceLocation locate(const std::string& pointer, bool at_key) const {
    if (!variant_) return at_key ? doc_.locate_key(pointer) : doc_.locate(pointer);
    const FaultSource source = source_of(*assignments_, set_pointer_, pointer);
    return at_key && source.direct ? doc_.locate_key(source.pointer) : doc_.locate(source.pointer);
  }

  [[nodiscard]] ErrorAt error_at() const {
    return [this](const std::string& pointer, const std::string& message) { return error(pointer, message); };
  }

 private:
  const JsonDocument& doc_;
  bool variant_ = false;
  std::string name_;
  std::string set_pointer_;
  const std::vector<Assignment>* assignments_ = nullptr;
};

std::string folder_of(const std::string& file) { return std::filesystem::path(file).parent_path().string(); }

void check_structure(const json& root, const Reporter& reporter) {
  const Locator where = [&reporter](const std::string& pointer, bool at_key) { return reporter.locate(pointer, at_key); };
  if (auto fault = check_scenario_structure(root, where)) throw reporter.error(fault->pointer, fault->message, fault->at_key);
}

/// Builds the model as the plan will run it; a problem with what the scenario wrote is located.
models::Graph build_checked_model(const Scenario& s, std::int64_t batch, const Reporter& reporter) {
  try {
    return build_model_graph(s.model, batch, s.file);
  } catch (const InputError& e) {
    // Errors about the scenario's own fields come unlocated; a model file's errors name that file.
    if (e.line() != 0 || e.file() != s.file || e.json_pointer().empty()) throw;
    throw reporter.error(e.json_pointer(), e.message());
  }
}

/// Profiles read while loading one file, by path, so variants that share one read it once.
using ProfileCache = std::map<std::string, sim::Profile>;

const sim::Profile& profile_of(const Scenario& s, ProfileCache& cache, const Reporter& reporter) {
  if (!s.profile) return sim::datasheet_profile();
  if (auto it = cache.find(*s.profile); it != cache.end()) return it->second;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*s.profile, ec))
    throw reporter.error("/profile", "cannot find the profile file \"" + *s.profile +
                                         "\" (paths are relative to the scenario file's folder)");
  // A fault inside the profile is that file's own located error.
  return cache.emplace(*s.profile, sim::profile_from_json(JsonDocument::read_file(*s.profile))).first->second;
}

void check_plan_of(const Scenario& s, const Reporter& reporter);

/// Decodes a structurally valid scenario and checks what the schema cannot: names, the cluster against
/// the profile, the model, the plan against both.
Scenario decode_and_check(const json& root, const std::string& file, const Reporter& reporter, ProfileCache& profiles) {
  Scenario s = decode_scenario(root, folder_of(file), reporter.error_at());
  s.file = file;
  const sim::Profile& profile = profile_of(s, profiles, reporter);
  if (auto problem = profile_problem(s, profile)) throw reporter.error(problem->pointer, problem->message);
  // A decode time the data section leaves out comes from the profile's calibrated loader.
  if (s.data && s.data->format != DataFormat::Tokens && !s.data->decode_ms_per_sample && !profile_loader(*s.data, profile))
    throw reporter.error("/data", std::string("a ") + std::string(to_string(s.data->format)) + " dataset needs \"decode_ms_per_sample\" (the milliseconds one " +
                                      "loader thread takes to decode and augment one sample), or a profile whose loader was calibrated on that " +
                                      "format (parasim calibrate --backend loader --data DIR)");
  if (s.training.grad_precision && !models::mixed_precision(s.training.precision) && *s.training.grad_precision != models::DType::F32)
    throw reporter.error("/training/grad_precision", "found \"" + std::string(models::to_string(*s.training.grad_precision)) + "\", but training runs in " +
                                                         std::string(models::to_string(s.training.precision)) +
                                                         "; expected \"fp32\" (gradients are kept at least as wide as the weights)");

  // A local update runs the plan on each replica's share of the devices and of the batch: the plan
  // is judged there (every replica has as many devices; their kinds were checked above).
  std::optional<Scenario> replica;
  if (s.local_update) {
    if (auto problem = local_update_problem(s)) throw reporter.error(problem->pointer, problem->message);
    replica = replica_scenario(s, 0);
  }
  check_plan_of(replica ? *replica : s, reporter);
  if (s.plan.auto_sharding) {
    if (s.local_update || s.federated)
      throw reporter.error("/plan/auto_sharding", "automatic sharding plans one synchronous step; it does not apply beside local_update or federated");
    solve_auto_sharding(s, profile);
  }
  return s;
}


/// Checks what the plan of `s` runs: the model it builds for the plan's batch, the attention kernel,
/// a graph file's fixed batch, and the plan against the model and the devices.
void check_plan_of(const Scenario& s, const Reporter& reporter) {
  const std::int64_t devices = s.cluster.device_count();
  // The plan is judged on the graph it will run: one micro-batch of every data-parallel replica.
  // A micro-batch round larger than the global batch is a fault check_plan reports before it looks at
  // the graph's batch; capping it keeps an absurd size from reaching the graph builder.
  const std::int64_t dp = strategies::resolve_dp(s.plan, devices);
  const std::int64_t batch = std::min(s.training.micro_batch * dp, s.training.global_batch);
  const models::Graph graph = build_checked_model(s, batch, reporter);
  if (!s.training.attention_kernel.empty()) {
    bool fused = false;
    for (models::OpId op = 0; op < graph.op_count() && !fused; ++op) fused = graph.op(op).kind == models::OpKind::Attention;
    if (!fused)
      throw reporter.error("/training/attention_kernel", "found \"" + s.training.attention_kernel + "\", but the model " + graph.name() +
                                                             " has no fused attention; expected no attention_kernel");
  }
  if (s.model.source == ModelSource::Graph && graph.batch() != s.training.micro_batch * dp) {
    // A graph file fixes its batch; the plan must run exactly that many samples per micro-batch round.
    const std::string n = std::to_string(graph.batch());
    throw reporter.error("/training/micro_batch",
                         "the graph in \"" + s.model.path + "\" is built for a batch of " + n + " samples, so micro_batch × dp must be " +
                             n + "; found " + std::to_string(s.training.micro_batch) + " × " + std::to_string(dp) + " = " +
                             std::to_string(s.training.micro_batch * dp));
  }
  if (auto problem = strategies::check_plan(graph, s.training, s.plan, devices)) {
    // A graph file's own annotation is located in that file.
    if (!problem->file.empty()) throw JsonDocument::read_file(problem->file).error_at(problem->pointer, problem->message);
    throw reporter.error(problem->pointer, problem->message);
  }
}

/// The set entries of what-if `index`, in file order, each checked to name a settable field.
std::vector<Assignment> read_assignments(const JsonDocument& doc, std::size_t index, const std::string& name) {
  const std::string set_pointer = "/what_if/" + std::to_string(index) + "/set";
  const json& set = doc.root().at(json::json_pointer(set_pointer));
  std::vector<Assignment> out;
  for (const auto& item : set.items()) {
    const std::string source = json_pointer_append(set_pointer, item.key());
    if (auto problem = check_field_path(item.key()))
      throw doc.error_at_key(source, "what-if \"" + name + "\": " + *problem);
    out.push_back(Assignment{item.key(), field_pointer(item.key()), source, item.value()});
  }
  // Later entries win where two write the same place, so order them as written, not as nlohmann sorts keys.
  std::stable_sort(out.begin(), out.end(), [&doc](const Assignment& a, const Assignment& b) {
    const SourceLocation la = doc.locate_key(a.source_pointer), lb = doc.locate_key(b.source_pointer);
    return std::tie(la.line, la.column) < std::tie(lb.line, lb.column);
  });
  return out;
}

Scenario load_variant(const JsonDocument& doc, const Scenario& base, std::size_t index, ProfileCache& profiles) {
  const std::string pointer = "/what_if/" + std::to_string(index);
  const json& entry = doc.root().at(json::json_pointer(pointer));
  const std::string name = entry.at("name").get<std::string>();
  const std::vector<Assignment> assignments = read_assignments(doc, index, name);
  const Reporter reporter(doc, index, name, &assignments);
  const json variant_json = apply_assignments(doc.root(), assignments);
  check_structure(variant_json, reporter);
  Scenario v = decode_and_check(variant_json, doc.file(), reporter, profiles);
  v.name = name;
  v.description = entry.value("description", std::string());
  v.pointer = pointer;
  for (const Assignment& a : assignments) v.changes.emplace_back(a.key, a.value.dump());
  const bool sets_output = std::any_of(assignments.begin(), assignments.end(), [](const Assignment& a) {
    return a.key == "output" || a.key.rfind("output.", 0) == 0;
  });
  if (!sets_output || !variant_json.contains("output") || !variant_json["output"].contains("dir"))
    v.output_dir = base.output_dir + "/" + slug(name);
  return v;
}

Scenario load_document(const JsonDocument& doc) {
  const std::string& file = doc.file();
  const Reporter reporter(doc);
  check_structure(doc.root(), reporter);
  ProfileCache profiles;
  Scenario s = decode_and_check(doc.root(), file, reporter, profiles);

  const json what_ifs = doc.root().value("what_if", json::array());
  std::vector<std::pair<std::string, std::size_t>> seen_slugs;
  for (std::size_t i = 0; i < what_ifs.size(); ++i) {
    const std::string name = what_ifs[i].at("name").get<std::string>();
    const std::string name_pointer = "/what_if/" + std::to_string(i) + "/name";
    for (const auto& [other_slug, j] : seen_slugs) {
      const std::string other = what_ifs[j].at("name").get<std::string>();
      if (other == name)
        throw doc.error_at(name_pointer, "what-if name \"" + name + "\" is already used by /what_if/" + std::to_string(j) +
                                             "; each what-if needs its own name");
      if (other_slug == slug(name))
        throw doc.error_at(name_pointer, "what-if name \"" + name + "\" and \"" + other + "\" (/what_if/" +
                                             std::to_string(j) + ") differ only in case or punctuation (both \"" + other_slug +
                                             "\"), so a reader of the reports cannot tell them apart; rename one");
    }
    // "base" names the scenario itself in every table and report.
    if (slug(name) == "base")
      throw doc.error_at(name_pointer, "what-if name \"" + name + "\" is the base's, which every table and report already shows; name the what-if after what it changes");
    seen_slugs.emplace_back(slug(name), i);
    s.what_ifs.push_back(load_variant(doc, s, i, profiles));
  }
  return s;
}

}  // namespace

std::optional<sim::ClusterProblem> profile_problem(const Scenario& s, const sim::Profile& profile) {
  if (auto problem = sim::check_cluster_spec(s.cluster, profile)) return sim::ClusterProblem{"/cluster" + problem->pointer, problem->message};
  // Every device kind must compute in the training precision (fp16 and bf16 stand for each other and
  // tf32 falls back to fp32, as the cost model reads peaks; fp8 needs an fp8 peak: Hopper and later),
  // and have curves for a named attention implementation.
  std::vector<std::string> kinds{s.cluster.device};
  for (const auto& g : s.cluster.node_groups)
    if (!g.device.empty()) kinds.push_back(g.device);
  const models::DType p = s.training.precision;
  for (const auto& kind : kinds) {
    if (!sim::find_gemm_peak_flops(profile.device(kind), p))
      return sim::ClusterProblem{"/training/precision", "found \"" + std::string(models::to_string(p)) + "\", but the " + kind +
                                                            " profile gives no peak FLOP/s in it; expected a precision the device computes in"};
    const std::string& kernel = s.training.attention_kernel;
    if (kernel.empty()) continue;
    const std::vector<std::string> known = profile.device(kind).attention_kernels();
    if (std::find(known.begin(), known.end(), kernel) == known.end()) {
      std::string expected;
      for (const auto& k : known) expected += (expected.empty() ? "\"" : ", \"") + k + "\"";
      return sim::ClusterProblem{
          "/training/attention_kernel",
          "found \"" + kernel + "\", but the " + kind + " profile gives no attention curves for it; expected " +
              (known.empty() ? std::string("no attention_kernel (the device has no fused attention curves: its kernel runs on the GEMM curve)")
                             : "one of " + expected)};
    }
  }
  return std::nullopt;
}

Scenario parse_scenario(std::string_view text, const std::string& file) { return load_document(JsonDocument::parse(text, file)); }

Scenario load_scenario(const std::string& path) { return load_document(JsonDocument::read_file(path)); }

sim::Profile scenario_profile(const Scenario& s) {
  if (!s.profile) return sim::datasheet_profile();
  return sim::profile_from_json(JsonDocument::read_file(*s.profile));
}

models::Graph build_model(const Scenario& s) {
  return build_model_graph(s.model, s.training.micro_batch * strategies::resolve_dp(s.plan, s.cluster.device_count()), s.file);
}

void solve_auto_sharding(Scenario& s, const sim::Profile& profile) {
  const models::Graph graph = build_model(s);
  const strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, s.cluster.device_count());
  const sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  const sim::DeviceProfile& device = profile.device(cluster.devices.front().kind);
  sim::AutoShardingOptions options;
  options.time_limit_s = s.plan.auto_sharding_time_limit_s;
  if (plan.pp > 1 && plan.virtual_stages == 1) {
    // Stages cut and each sharded on its own (sim/auto_pipeline.hpp).
    const sim::AutoPipeline p = sim::auto_pipeline(graph, plan, cluster, device, options, s.plan.stage_layers);
    s.plan.shardings = p.annotations;
    s.plan.stage_layers = p.cut.stage_layers;
    s.plan.auto_sharding_outcome = p.outcome();
    std::string cut;
    for (auto n : p.cut.stage_layers) cut += (cut.empty() ? "" : ", ") + std::to_string(n);
    std::string report = "auto-sharding: " + std::to_string(plan.pp) + " pipeline stages of [" + cut + "] layers" +
                         (p.cut_chosen ? ", cut by dynamic programming over " + std::to_string(p.layer_programs) +
                                             " layer programs (Alpa's T = Σ t + (m − 1) · max t = " + format_number(p.cut.latency_s) + " s)"
                                       : ", as the plan's stage_layers") +
                         "; " + p.outcome() + "\n";
    std::int64_t first = 0;
    for (std::size_t st = 0; st < p.stages.size(); ++st) {
      const sim::AutoSharding& a = p.stages[st];
      const std::int64_t end = first + p.cut.stage_layers[st];
      report += "  stage " + std::to_string(st) + " (layers " + std::to_string(first) + "–" + std::to_string(end - 1) + "): " + a.outcome() +
                ", the program's estimate " + format_number(a.objective_s) + " s a step\n";
      for (const auto& c : a.choices)
        if (c.candidates > 1)
          report += "    " + c.pattern + (c.operators > 1 ? ", " + std::to_string(c.operators) + " operators" : "") + ": " + c.sharding + "\n";
      first = end;
    }
    s.plan.auto_sharding_report = std::move(report);
    return;
  }
  const sim::AutoSharding a = sim::auto_shard(graph, plan, cluster, device, options);
  s.plan.shardings = a.annotations;
  s.plan.auto_sharding_outcome = std::string(sim::to_string(a.status));
  if (a.status == sim::LinearSolution::Status::Feasible) s.plan.auto_sharding_outcome += ", gap " + format_number(a.gap * 100) + "%";
  std::string report = "auto-sharding: " + a.outcome() + ", the program's estimate " + format_number(a.objective_s) + " s a step\n";
  for (const auto& c : a.choices)
    if (c.candidates > 1) report += "  " + c.pattern + (c.operators > 1 ? ", " + std::to_string(c.operators) + " operators" : "") + ": " + c.sharding + "\n";
  s.plan.auto_sharding_report = std::move(report);
}

}  // namespace parasim::scenarios
