#pragma once
/// Building the model graph a scenario names: a zoo preset, an inline transformer, a Hugging Face
/// config.json or a parasim graph JSON.
#include <cstdint>
#include <string>

#include "models/graph.hpp"
#include "scenarios/scenario.hpp"

namespace parasim::scenarios {

/// The graph of `spec` for `batch` samples (the scenario's micro_batch × dp) in its dtype.
/// Throws InputError: for a problem with what the scenario wrote, named by `file` with the pointer of
/// the field at fault (under "/model") and no line — the loader locates it; for a problem inside a
/// model file, that file's own located error.
[[nodiscard]] models::Graph build_model_graph(const ModelSpec& spec, std::int64_t batch, const std::string& file);

}  // namespace parasim::scenarios
