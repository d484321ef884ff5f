#pragma once
/// The JSON form of a search outcome, schema "parasim.search/1": what `parasim search` writes to
/// search.json. Every ranked candidate, best first, with the figures it was ranked by; units in the
/// keys (`_s` seconds, `_bytes`, `_per_s`, `_fraction` in [0, 1], `_count`):
///
///   { "schema": "parasim.search/1", "scenario": "...", "model": "...",
///     "objective": "time", "price_per_device_hour": 0, "usable_memory_bytes": ...,
///     "counts": { "candidate_count", "valid_count", "fitting_count", "simulated_count",
///                 "refined_count", "pipeline_cut_count" },
///     "refine": { "backend": "simgrid", "note": "why nothing was re-simulated, or empty" },
///     "reference": { "rank": 7 or null, "note": "" },
///     "pareto_ranks": [1, 4, ...],   (the front of the simulated plans)
///     "shape_ranks": [1, 3, ...],    (the best plan of each mesh shape devices × tp × cp × pp × dp × ep)
///     "plans": [ { "rank": 1, "description": "...", "ranked_by": "analytical" | "estimate",
///                  "pareto": true, "reference": false,
///                  "nodes", "device_count", "tp", "cp", "cp_comm", "pp", "dp", "ep", "micro_batch", "micro_batch_count",
///                  "schedule", "virtual_stages", "zero", "recompute", "sequence_parallel",
///                  "stage_layers": [...], "stage_uses": ["data", "model", ...],
///                  "memory": { "peak_stage", "weights_bytes", "gradients_bytes", "optimizer_bytes",
///                              "activations_bytes", "buffers_bytes", "total_bytes", "capacity_bytes",
///                              "headroom_bytes" },
///                  "cost_per_step": 0.12 (only with a price; in the price's currency),
///                  "estimate": EVAL, "analytical": EVAL (when simulated), "refined": EVAL (when re-simulated) } ] }
///   EVAL = { "step_time_s", "samples_per_s", "tokens_per_s", "mfu_fraction", "compute_s",
///            "exposed_comm_s", "bubble_s", "data_load_s", "task_count", "replica_shortcut" }
///
/// Deterministic: keys sorted, every non-integral number rounded to 9 significant digits.
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"

#include "strategies/search/search.hpp"

namespace parasim::strategies::search {

inline constexpr const char* kSearchSchema = "parasim.search/1";

/// The JSON form of one evaluation (EVAL above).
[[nodiscard]] nlohmann::json to_json(const Evaluation& e);
/// The JSON form of `outcome` for scenario `scenario` of model `model`.
[[nodiscard]] nlohmann::json to_json(const SearchOutcome& outcome, const std::string& scenario, const std::string& model);

/// A search.json read back (what `parasim report` draws of it).
struct SavedSearch {
  SearchOutcome outcome;
  std::string scenario;
  std::string model;
};

/// Whether `doc` is a search.json (its "schema" is kSearchSchema).
[[nodiscard]] bool is_search_json(const JsonDocument& doc);
/// Reads a search.json back: every key of the schema is known (the plan knobs are in each plan's
/// description, so they are accepted unread) and any other is an error, located in the file
/// (InputError). The plan knobs and the Pareto and shape ranks are not read back.
[[nodiscard]] SavedSearch search_from_json(const JsonDocument& doc);

}  // namespace parasim::strategies::search
