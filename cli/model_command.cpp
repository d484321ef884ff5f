// `parasim model NAME|config.json|graph.json`: what a model costs before any plan — parameters, FLOPs
// and saved activations per sample, in total and per layer.
#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/model_shardings.hpp"
#include "cli/validators.hpp"
#include "cli/output_files.hpp"
#include "cli/thousands.hpp"
#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "models/graph_json.hpp"
#include "models/hf_config.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"

namespace parasim::cli {
namespace {

struct ModelArgs {
  std::string what;
  bool json = false;
  bool layers = false;
  bool list = false;
  std::int64_t batch = 1;
  std::int64_t seq_len = 0;
  std::int64_t image_size = 0;
  std::int64_t num_classes = 0;
  std::int64_t in_channels = 0;
  std::string dtype;
  std::string export_graph;
  std::string plan;  ///< a scenario whose plan's shardings to print
  bool shardings = false;
};

/// Where the graph came from, as printed.
struct LoadedModel {
  models::Graph graph;
  std::string source;  ///< "preset", "hf-config" or "graph-json"
};

// Fixed formats so the output is the same on every run and machine.
std::string scaled(double v, const char* const* units, int count, double step, const char* format) {
  int u = 0;
  while (u + 1 < count && std::abs(v) >= step) {
    v /= step;
    ++u;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v, units[u]);
  return buffer;
}

std::string flops_text(double flops) {
  static const char* const units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
  return scaled(flops, units, 7, 1000.0, "%.3f %s");
}

std::string bytes_text(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return scaled(bytes, units, 6, 1024.0, "%.2f %s");
}

bool is_json_file(const std::string& what) {
  std::error_code ec;
  return (what.size() > 5 && what.compare(what.size() - 5, 5, ".json") == 0) || std::filesystem::is_regular_file(what, ec);
}

LoadedModel load(const ModelArgs& a, const CLI::App& cmd) {
  models::ModelOptions options;
  options.batch = a.batch;
  if (a.seq_len > 0) options.seq_len = a.seq_len;
  if (a.image_size > 0) options.image_size = a.image_size;
  if (a.num_classes > 0) options.num_classes = a.num_classes;
  if (a.in_channels > 0) options.in_channels = a.in_channels;
  if (!a.dtype.empty()) {
    options.dtype = models::dtype_from_string(a.dtype);
    if (!options.dtype)
      throw InputError("<command line>", 0, 0, "", "--dtype: found \"" + a.dtype + "\", expected one of " +
                                                       quoted_list(models::dtype_names()) + did_you_mean(a.dtype, models::dtype_names()));
  }
  if (!is_json_file(a.what)) return {models::build_named_model(a.what, options), "preset"};

  const JsonDocument doc = JsonDocument::read_file(a.what);
  if (models::is_hf_config(doc.root())) return {models::build_hf_model(doc, options), "hf-config"};
  for (const char* option : {"--batch", "--seq-len", "--image-size", "--num-classes", "--in-channels", "--dtype"})
    if (cmd.count(option) > 0)
      throw InputError("<command line>", 0, 0, "", std::string(option) + " does not apply to a graph JSON (" + a.what +
                                                       "): the file fixes every size and dtype");
  return {models::graph_from_json(doc), "graph-json"};
}

/// A mixture of experts: its active parameters are worth printing beside the total.
bool moe(const models::Graph& g) { return g.transformer() && g.transformer()->experts > 0; }

void print_json(std::ostream& out, const LoadedModel& m, bool layers) {
  const models::Graph& g = m.graph;
  const double per_sample = 1.0 / static_cast<double>(g.batch());
  nlohmann::ordered_json j;
  j["model"] = g.name();
  j["source"] = m.source;
  j["batch"] = g.batch();
  j["parameters"] = g.param_count();
  if (moe(g)) j["active_parameters"] = models::active_param_count(g);
  j["fwd_flops_per_sample"] = g.fwd_flops() * per_sample;
  j["bwd_flops_per_sample"] = g.bwd_flops() * per_sample;
  j["saved_activation_bytes_per_sample"] = g.saved_activation_bytes() * per_sample;
  j["operators"] = g.op_count();
  j["edges"] = g.edge_count();
  j["layer_count"] = g.layers().size();
  if (layers) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t l = 0; l < g.layers().size(); ++l) {
      const auto i = static_cast<std::int32_t>(l);
      list.push_back({{"name", g.layers()[l].name},
                      {"operators", g.layer_op_count(i)},
                      {"parameters", g.layer_param_count(i)},
                      {"fwd_flops_per_sample", g.layer_fwd_flops(i) * per_sample},
                      {"bwd_flops_per_sample", g.layer_bwd_flops(i) * per_sample},
                      {"saved_activation_bytes_per_sample", g.layer_saved_activation_bytes(i) * per_sample}});
    }
    j["layers"] = std::move(list);
  }
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

void print_table(std::ostream& out, const LoadedModel& m, bool layers) {
  const models::Graph& g = m.graph;
  const double per_sample = 1.0 / static_cast<double>(g.batch());
  out << "model              " << g.name() << " (" << m.source << ")\n";
  out << "batch              " << g.batch() << "\n";
  out << "parameters         " << with_commas(g.param_count()) << "\n";
  if (moe(g)) out << "active parameters  " << with_commas(models::active_param_count(g)) << " per token (k of e routed experts)\n";
  out << "forward FLOPs      " << flops_text(g.fwd_flops() * per_sample) << " per sample\n";
  out << "backward FLOPs     " << flops_text(g.bwd_flops() * per_sample) << " per sample\n";
  out << "saved activations  " << bytes_text(g.saved_activation_bytes() * per_sample) << " per sample\n";
  out << "operators          " << g.op_count() << "\n";
  out << "layers             " << g.layers().size() << "\n";
  if (!layers) return;
  std::size_t width = 5;
  for (const auto& l : g.layers()) width = std::max(width, l.name.size());
  char line[512];
  std::snprintf(line, sizeof line, "\n%-*s %5s %15s %16s %12s\n", static_cast<int>(width), "layer", "ops", "parameters",
                "fwd FLOPs/sample", "saved/sample");
  out << line;
  for (std::size_t l = 0; l < g.layers().size(); ++l) {
    const auto i = static_cast<std::int32_t>(l);
    std::snprintf(line, sizeof line, "%-*s %5zu %15s %16s %12s\n", static_cast<int>(width), g.layers()[l].name.c_str(),
                  g.layer_op_count(i), with_commas(g.layer_param_count(i)).c_str(), flops_text(g.layer_fwd_flops(i) * per_sample).c_str(),
                  bytes_text(g.layer_saved_activation_bytes(i) * per_sample).c_str());
    out << line;
  }
}

}  // namespace

void add_model_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* cmd = app.add_subcommand("model", "Describe a model: parameters, FLOPs, activation memory");
  cmd->add_option("model", args->what, "a preset name, a Hugging Face config.json, or a graph JSON file");
  cmd->add_flag("--json", args->json, "print JSON instead of a table");
  cmd->add_flag("--layers", args->layers, "add the per-layer breakdown");
  cmd->add_flag("--list", args->list, "list the preset names");
  cmd->add_option("--batch", args->batch, "samples per batch (default 1)")->check(integer_at_least(1));
  cmd->add_option("--seq-len", args->seq_len, "sequence length (transformers; default: the preset's)")->check(integer_at_least(1));
  cmd->add_option("--image-size", args->image_size, "image side in pixels (CNNs and MLPs)")->check(integer_at_least(1));
  cmd->add_option("--num-classes", args->num_classes, "classes (CNNs and MLPs)")->check(integer_at_least(1));
  cmd->add_option("--in-channels", args->in_channels, "image channels (CNNs and MLPs)")->check(integer_at_least(1));
  cmd->add_option("--dtype", args->dtype, "activation and weight dtype: fp32, tf32, fp16, bf16, fp8, ...");
  cmd->add_option("--export-graph", args->export_graph, "also write the operator graph as graph JSON to this file");
  cmd->add_option("--plan", args->plan, "a scenario: with --shardings, its model under its plan");
  cmd->add_flag("--shardings", args->shardings,
                "with --plan: every operator's sharding (dims, output, weights), where it came from, and the collectives where layouts meet");
  cmd->callback([&action, &out, args, cmd] {
    action = [&out, args, cmd] {
      if (args->shardings || !args->plan.empty()) {
        if (args->plan.empty() || !args->shardings || !args->what.empty())
          throw InputError("<command line>", 0, 0, "", "--shardings and --plan SCENARIO.json go together, without a model name: the scenario names the model");
        print_shardings(out, args->plan, args->json);
        return 0;
      }
      if (args->list || args->what.empty()) {
        for (const auto& n : models::model_names()) out << n << "\n";
        return 0;
      }
      const LoadedModel m = load(*args, *cmd);
      // Builders and the graph JSON reader return valid graphs; anything else is a parasim bug.
      if (const auto problem = m.graph.check()) PARASIM_CHECK(false, "invalid graph from " + args->what + ": " + problem->message);
      if (!args->export_graph.empty()) write_atomically(args->export_graph, models::to_json_text(m.graph));
      if (args->json) print_json(out, m, args->layers);
      else print_table(out, m, args->layers);
      return 0;
    };
  });
}

}  // namespace parasim::cli
