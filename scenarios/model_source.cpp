#include "scenarios/model_source.hpp"

#include <cctype>
#include <filesystem>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "models/graph_json.hpp"
#include "models/hf_config.hpp"

namespace parasim::scenarios {
namespace {

/// The option a models/ message is about: "seq_len (4096) exceeds ...", "option image_size does not
/// apply ...", "image_size must be between ..." → that name; else "".
std::string option_named(const std::string& problem) {
  std::string text = problem;
  if (text.rfind("option ", 0) == 0) text = text.substr(7);
  std::size_t n = 0;
  while (n < text.size() && (std::islower(static_cast<unsigned char>(text[n])) || text[n] == '_')) ++n;
  return text.substr(0, n);
}

/// The scenario field a model problem is about: one of the model options the scenario wrote, a field of
/// the inline transformer, or else `fallback`.
std::string field_of_problem(const std::string& problem, const ModelSpec& spec, const std::string& fallback) {
  const std::string field = option_named(problem);
  const std::pair<const char*, bool> options[] = {{"seq_len", spec.options.seq_len.has_value()},
                                                  {"image_size", spec.options.image_size.has_value()},
                                                  {"num_classes", spec.options.num_classes.has_value()},
                                                  {"in_channels", spec.options.in_channels.has_value()},
                                                  {"attention", spec.options.attention.has_value()}};
  for (const auto& [name, written] : options)
    if (field == name) return written ? "/model/" + field : fallback;
  if (spec.source == ModelSource::Transformer && !field.empty() && field != "batch") return "/model/transformer/" + field;
  return fallback;
}

/// Everything before the first "\": " of `model "gpt2": problem`.
std::string strip_model_prefix(const std::string& message) {
  const auto colon = message.find("\": ");
  return colon == std::string::npos ? message : message.substr(colon + 3);
}

void require_file(const std::string& path, const std::string& file, const std::string& pointer) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(file, 0, 0, pointer, "cannot find the file \"" + path + "\" (paths are relative to the scenario file's folder)");
}

/// The options that only CNN and MLP presets take are errors for any transformer source.
void reject_cnn_options(const ModelSpec& spec, const std::string& file, const std::string& what) {
  const std::pair<const char*, bool> cnn_options[] = {{"image_size", spec.options.image_size.has_value()},
                                                      {"num_classes", spec.options.num_classes.has_value()},
                                                      {"in_channels", spec.options.in_channels.has_value()}};
  for (const auto& [name, set] : cnn_options)
    if (set)
      throw InputError(file, 0, 0, std::string("/model/") + name,
                       std::string(name) + " applies to CNN and MLP presets, not to " + what);
}

models::Graph build_checked_transformer(models::TransformerConfig c, const ModelSpec& spec, std::int64_t batch,
                                        const std::string& file, const std::string& source_pointer) {
  c.batch = batch;
  if (spec.options.seq_len) c.seq_len = *spec.options.seq_len;
  if (spec.options.dtype) c.dtype = *spec.options.dtype;
  if (spec.options.attention) c.attention = *spec.options.attention;
  if (auto problem = models::validate(c))
    throw InputError(file, 0, 0, field_of_problem(*problem, spec, source_pointer), "model \"" + c.name + "\": " + *problem);
  return models::build_transformer(c);
}

}  // namespace

models::Graph build_model_graph(const ModelSpec& spec, std::int64_t batch, const std::string& file) {
  models::ModelOptions options = spec.options;
  options.batch = batch;
  switch (spec.source) {
    case ModelSource::Preset:
      try {
        return models::build_named_model(spec.preset, options, file, "/model/preset");
      } catch (const InputError& e) {
        if (e.line() != 0 || e.json_pointer() != "/model/preset") throw;
        // "model \"gpt2\": seq_len (4096) exceeds max_positions (1024)" is about model.seq_len.
        throw InputError(file, 0, 0, field_of_problem(strip_model_prefix(e.message()), spec, "/model/preset"), e.message());
      }
    case ModelSource::Transformer:
      reject_cnn_options(spec, file, "an inline transformer");
      return build_checked_transformer(spec.transformer, spec, batch, file, "/model/transformer");
    case ModelSource::HfConfig: {
      require_file(spec.path, file, "/model/hf_config");
      reject_cnn_options(spec, file, "a Hugging Face transformer config");
      // A fault inside the config is the config file's own located error.
      const JsonDocument doc = JsonDocument::read_file(spec.path);
      return build_checked_transformer(models::transformer_config_from_hf(doc), spec, batch, file, "/model/hf_config");
    }
    case ModelSource::Graph: {
      require_file(spec.path, file, "/model/graph");
      if (spec.options.attention)
        throw InputError(file, 0, 0, "/model/attention",
                         "attention does not apply to a graph JSON: the file's operators fix how attention runs");
      const std::pair<const char*, bool> sized[] = {{"seq_len", spec.options.seq_len.has_value()},
                                                    {"image_size", spec.options.image_size.has_value()},
                                                    {"num_classes", spec.options.num_classes.has_value()},
                                                    {"in_channels", spec.options.in_channels.has_value()}};
      for (const auto& [name, set] : sized)
        if (set)
          throw InputError(file, 0, 0, std::string("/model/") + name,
                           std::string(name) + " does not apply to a graph JSON: the file fixes every size");
      return models::graph_from_json(JsonDocument::read_file(spec.path));
    }
  }
  PARASIM_CHECK(false, "unknown model source");
  return {};
}

}  // namespace parasim::scenarios
