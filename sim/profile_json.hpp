#pragma once
/// The JSON form of a Profile: the built-in datasheet files in sim/profiles/, a profile written by
/// `parasim calibrate`, or one a user writes. Units are SI base units named in the keys (bytes,
/// seconds, FLOP/s), so a profile survives to_json → from_json unchanged:
///
///   { "name": "datasheet", "origin": "built-in datasheet figures",
///     "devices": { "a100-80gb": { "description": "...",
///                                 "peak_flops_per_s": { "bf16": 312e12, ... },
///                                 "memory_bandwidth_bytes_per_s": 2.039e12, "memory_capacity_bytes": ...,
///                                 "memory_reserved_bytes": ..., "gemm_efficiency": [[flops, eff], ...],
///                                 "memory_efficiency": [[bytes, eff], ...], "kernel_launch_overhead_s": 5e-6,
///                                 "default_intra_link": "nvlink3", "default_inter_link": "ib-hdr",
///                                 "sources": { "<figure name>": "where it comes from", ... } } },
///     "links": { "nvlink3": { "description": "...", "bandwidth_bytes_per_s": 300e9, "latency_s": 1.9e-6,
///                             "efficiency": [[bytes, eff], ...], "sources": { ... } } } }
///
/// Figure names are those of figure_names() in sim/profile.hpp. sim/profiles/README.md documents
/// every field and where the datasheet figures come from.
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "sim/profile.hpp"

namespace parasim::sim {

[[nodiscard]] nlohmann::json to_json(const Profile& profile);

/// Reads the profile object at `pointer` of `doc`. "name" is required; "origin" defaults to
/// "profile file <doc.file()>". Throws InputError (file, line, column, JSON pointer) on a missing or
/// unknown key ("did you mean"), a value of the wrong type or range, an efficiency outside (0, 1],
/// curve sizes not strictly increasing, a source for a figure that does not exist, or a device whose
/// default link is not among the profile's links.
[[nodiscard]] Profile profile_from_json(const JsonDocument& doc, const std::string& pointer = "");

}  // namespace parasim::sim
