#pragma once
/// The JSON form of a Result: schema "parasim.result/1", what `parasim SCENARIO` writes to
/// result.json and `parasim report` reads back. Every number carries its unit in its key
/// (`_s` seconds, `_bytes`, `_per_s`, `_fraction` a ratio in [0, 1], `_count` a plain count):
///
///   { "schema": "parasim.result/1",
///     "scenario": "...", "variant": "base", "model": "...", "plan": "...",
///     "backend": "analytical", "profile": { "name": "datasheet", "origin": "built-in datasheet figures" },
///     "device_kind": "a100-80gb", "device_count": 8, "task_count": 1234,
///     "attention_kernel": "cudnn" (models with fused attention: the implementation whose curves timed
///                          it, or "gemm curve"),
///     "step_time_s": 0.5,
///     "throughput": { "samples_per_s", "tokens_per_s", "model_tflop_per_s_per_device" },
///     "utilization": { "mfu_fraction", "hfu_fraction", "bubble_fraction",
///                      "model_flop_per_step", "hardware_flop_per_step" },
///     "time_breakdown_mean": { "forward_s", "backward_s", "recompute_s", "optimizer_s", "tensor_comm_s",
///                              "pipeline_comm_s", "gradient_comm_s", "expert_comm_s", "data_load_s",
///                              "idle_s", "compute_s", "exposed_comm_s" },
///     "memory": { "capacity_bytes", "fits", "peak_stage", "peak_bytes",
///                 "per_stage": [ { "stage", "in_flight_forward_passes", "parameter_count", "weights_bytes",
///                                  "gradients_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes",
///                                  "total_bytes" } ] },
///     "communication": { "intra_node_bytes_per_step", "inter_node_bytes_per_step" },
///     "links": { "classes": [ { "link_class", "link_count", "used_link_count", "bytes", "max_load_s",
///                               "max_busy_s", "mean_busy_s", "bottleneck_phase_count" } ],
///                "busiest": [ { "link", "link_class", "bandwidth_bytes_per_s", "bytes", "load_s", "busy_s" } ],
///                "shared_link_count" },
///     "notes": [ "..." ],
///     "local_update" (scenarios with one): { "algorithm", "replica_count", "inner_step_count",
///                      "fragment_count", "overlap_step_count", "compression", "outer_optimizer",
///                      "inner_step_s", "outer_step_s", "time_per_inner_step_s", "samples_per_s",
///                      "tokens_per_s", "compute_utilization_fraction", "wan_utilization_fraction",
///                      "wan_bytes_per_inner_step", "pseudo_gradient_bytes",
///                      "wan_bandwidth_for_95_percent_bytes_per_s" (0: no bandwidth reaches 95%),
///                      "outer_state_bytes", "target_tokens", "time_to_target_s",
///                      "synchronous_step_s", "synchronous_wan_bytes_per_step", "outer_task_count" },
///     "federated" (scenarios with one): { "algorithm", "server_optimizer", "client_count",
///                   "clients_per_round_count", "local_step_count", "round_count", "seed", "speed",
///                   "upload_mbit_per_s", "download_mbit_per_s", "availability" (the distributions,
///                   described), "server_bytes_per_s", "deadline_s" (0: none), "client_step_s",
///                   "model_bytes", "round_{mean,p50,p90,p99}_s", "unavailable_fraction",
///                   "late_fraction", "samples_per_round", "samples_per_s", "server_bytes_per_round",
///                   "server_link_utilization_fraction", "target_samples", "time_to_target_s" },
///     "input" (scenarios with "data"): { "placement", "threads_per_host", "prefetch_micro_batches",
///               "hosts_loading", "samples_read", "read_bytes", "host_to_device_bytes",
///               "device_to_device_bytes", "network_bytes", "loader_step_s", "storage_bound", and with
///               the verdict "unbounded_step_s", "input_bound", "fewest_threads_per_host" (0: none
///               up to 1024 threads), "step_at_fewest_threads_s" },
///     "per_stage_times": [ { "stage", "device_count", "compute_{min,mean,max}_s", "exposed_comm_{...}_s",
///                            "idle_{...}_s", "comm_busy_{...}_s" } ],
///     "per_device_times": { "omitted_device_count": 0,
///                           "devices": [ { "device", "stage", "comm_busy_s", "time_breakdown": {...} } ] } }
///
/// `compute_s`, `exposed_comm_s`, `peak_bytes`, `total_bytes` and `per_stage_times` are derived from
/// the other figures for readers of the file; they are checked for shape and otherwise ignored when
/// read back. Large clusters stay small on disk: per-device entries are written for the first
/// `max_devices` devices only (the count of the rest is `omitted_device_count`), while the per-stage
/// aggregates always cover every device.
///
/// Deterministic: the same Result gives byte-identical text. Keys are sorted (nlohmann's default
/// object), and every double is rounded to 9 significant digits before it is written, so noise in
/// the last bits of a sum never changes the file and a golden result.json diffs only on a real
/// change — except whole numbers below 2^53 (counts of bytes, parameters, FLOPs), written exactly.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_document.hpp"
#include "sim/result.hpp"

namespace parasim::sim {

struct ResultJsonOptions {
  /// Per-device entries written (the first ones in device order); ≥ 0.
  std::int64_t max_devices = 64;
};

/// Minimum, mean and maximum over the devices of one pipeline stage, in seconds.
struct TimeSpread {
  double min_s = 0, mean_s = 0, max_s = 0;
  bool operator==(const TimeSpread&) const = default;
};

/// How the devices of one pipeline stage spend the step.
struct StageTimes {
  std::int64_t stage = 0;
  std::int64_t devices = 0;  ///< devices aggregated (those of Result::per_device in this stage)
  TimeSpread compute;        ///< TimeBreakdown::compute_s()
  TimeSpread exposed_comm;   ///< TimeBreakdown::exposed_comm_s()
  TimeSpread idle;
  TimeSpread comm_busy;      ///< DeviceTimes::comm_busy_s (overlapped or not)
  bool operator==(const StageTimes&) const = default;
};

/// Aggregates of Result::per_device by stage, in ascending stage order. A Result read back from a
/// file whose per-device list was cut holds fewer entries than devices; the aggregates then cover
/// those entries only, and each StageTimes::devices says how many.
[[nodiscard]] std::vector<StageTimes> stage_times(const Result& result);

/// The JSON form of `result`. Throws InternalError when a figure is not finite (a summary bug:
/// parasim never writes a figure it did not compute).
[[nodiscard]] nlohmann::json to_json(const Result& result, const ResultJsonOptions& options = {});
/// A JSON array of the results, in order (base first, then the what-ifs).
[[nodiscard]] nlohmann::json to_json(std::span<const Result> results, const ResultJsonOptions& options = {});

/// The text of a JSON value as parasim writes it: indented by 2, a final newline, invalid UTF-8 in
/// strings replaced by U+FFFD rather than thrown on.
[[nodiscard]] std::string json_text(const nlohmann::json& value);

/// Reads the result object at `pointer` of `doc`. Throws InputError (file, line, column, JSON
/// pointer) on a schema other than "parasim.result/1", a missing or unknown key ("did you mean"),
/// a value of the wrong type or range, or per-device entries that do not match device_count.
[[nodiscard]] Result result_from_json(const JsonDocument& doc, const std::string& pointer = "");
/// Reads a file's results: one result object, or an array of them (what to_json of a span writes).
[[nodiscard]] std::vector<Result> results_from_json(const JsonDocument& doc);

}  // namespace parasim::sim
