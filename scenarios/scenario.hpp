#pragma once
/// A Scenario: one training run to simulate, as validated values — the model to build, the training
/// settings, the cluster, the parallel plan, the backend and profile to use, where results go, and the
/// what-if variants, each a full Scenario of its own. scenarios/loader.hpp makes one from a file; the
/// format is scenarios/scenario.schema.json, documented in scenarios/README.md.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/placement.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"
#include "sim/cluster_spec.hpp"
#include "strategies/federated.hpp"
#include "strategies/local_update.hpp"
#include "strategies/plan_spec.hpp"

namespace parasim::scenarios {

/// Where the model comes from: exactly one of the scenario's model.preset, model.transformer,
/// model.hf_config or model.graph.
enum class ModelSource { Preset, Transformer, HfConfig, Graph };

struct ModelSpec {
  ModelSource source = ModelSource::Preset;
  std::string preset;  ///< Preset: the zoo name
  /// Transformer: the inline config; its seq_len is model.seq_len (default 2048), its dtype the training
  /// precision, its batch set when the graph is built.
  models::TransformerConfig transformer;
  /// HfConfig / Graph: the file, resolved against the scenario file's folder.
  std::string path;
  /// seq_len, image_size, num_classes, in_channels as written (unset: the model's own); dtype is the
  /// training precision; batch is set when the graph is built (micro_batch × dp).
  models::ModelOptions options;
  bool operator==(const ModelSpec&) const = default;
};

enum class Backend { Analytical, SimGrid };

/// How a dataset's samples are stored: WebDataset-style tar shards of JPEG images and labels,
/// fixed-size binary records in the CIFAR layout, or pre-tokenized text (Megatron-LM's indexed
/// dataset, memory-mapped: nothing to decode).
enum class DataFormat { JpegTar, CifarBin, Tokens };
[[nodiscard]] std::string_view to_string(DataFormat f);
[[nodiscard]] std::optional<DataFormat> data_format_from_string(std::string_view s);
[[nodiscard]] std::optional<data::Placement> placement_from_string(std::string_view s);

/// The scenario's input pipeline as written ("data"; scenarios/README.md): scenarios/data.hpp
/// resolves it against the model into sim::InputPipeline.
struct DataSpec {
  DataFormat format = DataFormat::Tokens;
  std::optional<double> stored_bytes_per_sample;   ///< unset: the format's (README)
  std::optional<double> decoded_bytes_per_sample;  ///< the inputs a device receives; unset: the model's input
  std::optional<double> decode_ms_per_sample;      ///< one thread; unset: 0 for tokens, required otherwise
  std::optional<double> storage_gbps;              ///< per host; unset: not a limit
  double storage_latency_ms = 0;                   ///< per sample read
  std::int64_t threads_per_host = 1;
  std::int64_t prefetch = 2;
  data::Placement placement = data::Placement::Sharded;
  double host_to_device_gbps = 252;
  bool operator==(const DataSpec&) const = default;
};

struct Scenario {
  std::string name;  ///< the scenario's name; for a what-if variant, the what-if's name
  std::string description;
  /// The scenario file as given to load_scenario (or the name given to parse_scenario).
  std::string file;
  /// JSON pointer of this scenario in its file: "" for the base, "/what_if/N" for a variant.
  std::string pointer;
  ModelSpec model;
  strategies::TrainingSpec training;
  /// The cluster with its preset (if any) already applied and every override written over it.
  sim::ClusterSpec cluster;
  std::string cluster_preset;  ///< the preset it started from, "" when none (for reports)
  strategies::PlanSpec plan;
  /// Local-update training (DiLoCo, Streaming DiLoCo): `plan` is then each replica's plan on its
  /// share of the devices (scenarios/local_update.hpp). Absent: every step synchronous.
  std::optional<strategies::LocalUpdateSpec> local_update;
  /// Federated training across devices (FedAvg, FedOpt): `cluster` and `plan` are then one client's
  /// (scenarios/federated.hpp). Absent: every step synchronous.
  std::optional<strategies::FederatedSpec> federated;
  /// The input pipeline to simulate; absent: the inputs are on the devices when a step starts.
  std::optional<DataSpec> data;
  Backend backend = Backend::Analytical;
  /// A calibrated profile file, resolved against the scenario file's folder; nothing = the built-in
  /// datasheet profile.
  std::optional<std::string> profile;
  /// Output folder (relative to the current directory unless absolute): output.dir, else
  /// "parasim-out/<name>"; a variant's default is "<base output>/<slug of its name>".
  std::string output_dir;
  /// The what-if variants in file order (each complete, with no what-ifs of its own).
  std::vector<Scenario> what_ifs;
  /// For a variant: what its what-if set, as written — (dotted path, value as compact JSON) in file
  /// order, e.g. {"cluster.device", "\"h100-sxm\""}; for reports that say what each variant changed.
  std::vector<std::pair<std::string, std::string>> changes;

  bool operator==(const Scenario&) const;
};

[[nodiscard]] std::string_view to_string(ModelSource s);
[[nodiscard]] std::string_view to_string(Backend b);
/// Names as written in scenarios: "analytical", "simgrid".
[[nodiscard]] const std::vector<std::string>& backend_names();
[[nodiscard]] std::optional<Backend> backend_from_string(std::string_view s);

/// A lowercase folder name for a what-if name: letters and digits kept, every other run of characters
/// becomes one '-' ("IB 400G" → "ib-400g"); "variant" if nothing is left.
[[nodiscard]] std::string slug(std::string_view name);

/// A readable listing, one field a line (for test failure messages and debugging).
std::ostream& operator<<(std::ostream& out, const Scenario& s);

}  // namespace parasim::scenarios
