#include <iomanip>
#include <sstream>

#include "cli/commands.hpp"
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
};

std::string with_commas(std::int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > (s[0] == '-' ? 1 : 0); i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

}  // namespace

void add_model_command(CLI::App& app, Action& action, std::ostream& out) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* cmd = app.add_subcommand("model", "Describe a model: parameters, FLOPs, activation memory");
  cmd->add_option("model", args->what, "a preset name, a Hugging Face config.json, or a graph JSON file");
  cmd->add_flag("--json", args->json, "print JSON instead of a table");
  cmd->add_flag("--layers", args->layers, "add the per-layer breakdown");
  cmd->add_flag("--list", args->list, "list the preset names");
  cmd->add_option("--batch", args->batch, "samples per batch (default 1)")->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", args->seq_len, "sequence length (transformers; default: the preset's)")->check(CLI::PositiveNumber);
  cmd->callback([&action, &out, args] {
    action = [&out, args] {
      if (args->list || args->what.empty()) {
        for (const auto& n : models::model_names()) out << n << "\n";
        return 0;
      }
      models::ModelOptions options;
      options.batch = args->batch;
      if (args->seq_len > 0) options.seq_len = args->seq_len;
      const models::Graph g = models::build_named_model(args->what, options);
      out << "model       " << g.name() << "\n";
      out << "parameters  " << with_commas(g.param_count()) << "\n";
      out << std::setprecision(4) << "fwd FLOPs   " << g.fwd_flops() / static_cast<double>(g.batch()) << " per sample\n";
      return 0;
    };
  });
}

}  // namespace parasim::cli
