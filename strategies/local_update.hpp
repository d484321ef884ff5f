#pragma once
/// Local-update training (the scenario's "local_update"): k model replicas, each running the
/// scenario's plan on its own share of the devices, take H inner optimizer steps on their own data and
/// then synchronise — the outer step. The replicas are an outer mesh axis over the sites of the
/// cluster's WAN (one or more replicas per site), as FAX puts clients beside the data and model axes.
///
///  - DiLoCo (Douillard et al. 2023, arXiv:2311.08105): after H inner steps every replica's
///    pseudo-gradient (its parameters at the last outer step less its parameters now) is averaged
///    over the replicas by an all-reduce, and an outer optimizer (Nesterov momentum SGD) applies it to
///    the parameters of the last outer step; the replicas wait for it.
///  - Streaming DiLoCo (Douillard et al. 2025, arXiv:2501.18512): the parameters in `fragments`
///    fragments, each synchronised once every H inner steps on a stagger of H / fragments steps, its
///    all-reduce overlapped with the next `overlap_steps` inner steps (τ) before the replica merges it.
///  - PAPA (Jolicoeur-Martineau et al. 2023, arXiv:2304.03094): a population of models each pulled
///    toward the population's mean every H steps, w ← α·w + (1 − α)·mean(w) (its "gradual" form,
///    α = 0.99 every 10 steps in the authors' code): an all-reduce of the weights themselves, no
///    outer state.
///  - Branch-train-merge (Li et al. 2022, arXiv:2208.03306): branches trained independently for H
///    steps, then merged by averaging their parameters once (an all-reduce of the weights).
///
/// No JSON here: scenarios/decode.cpp reads the scenario's section into these values.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::strategies {

enum class LocalUpdateAlgorithm { DiLoCo, StreamingDiLoCo, PAPA, BranchTrainMerge };
/// The outer optimizer: Nesterov momentum SGD (DiLoCo's: it keeps a momentum buffer beside the
/// parameters of the last outer step), or plain SGD (FedAvg's averaging with a server learning rate:
/// no momentum buffer).
enum class OuterOptimizer { Nesterov, SGD };
/// What the pseudo-gradient is sent as: the gradient reduction's own dtype (none), 16-bit floats,
/// 8-bit integers with a scale per tensor, 4-bit floats (E3M0, Streaming DiLoCo §2.4: each replica's
/// outer gradient quantised before it is sent, the sum kept in fp32), or the largest
/// `topk_fraction` of its elements as (value, index) pairs in 4 bytes each.
enum class Compression { None, FP16, Int8, FP4, TopK };

struct LocalUpdateSpec {
  LocalUpdateAlgorithm algorithm = LocalUpdateAlgorithm::DiLoCo;
  /// Model replicas, each on device_count / replicas consecutive devices; 0 = one per site.
  std::int64_t replicas = 0;
  std::int64_t inner_steps = 500;  ///< H (DiLoCo's default, §3)
  /// Streaming DiLoCo: fragments of the parameters, each synchronised on its own inner step; 0 = one
  /// per three layers of the model (the paper's fragment size, §3), at most inner_steps.
  std::int64_t fragments = 1;
  /// Streaming DiLoCo: inner steps a fragment's all-reduce overlaps before it is merged (τ).
  std::int64_t overlap_steps = 0;
  OuterOptimizer outer_optimizer = OuterOptimizer::Nesterov;
  double outer_learning_rate = 0.7;  ///< DiLoCo §3 (its value; the time model does not use it)
  double outer_momentum = 0.9;       ///< DiLoCo §3
  double mixing = 0.99;              ///< PAPA's α (recorded; the time model does not use it)
  Compression compression = Compression::None;
  double topk_fraction = 0.01;  ///< TopK: the share of elements sent
  /// Tokens (transformers) or samples (other models) the run trains on: the report gives the wall time
  /// to reach them. 0: not asked.
  double target_tokens = 0;
  bool operator==(const LocalUpdateSpec&) const = default;

  [[nodiscard]] bool streaming() const { return algorithm == LocalUpdateAlgorithm::StreamingDiLoCo; }
  /// PAPA and branch-train-merge average the weights themselves: no pseudo-gradient, no outer optimizer.
  [[nodiscard]] bool averages_weights() const { return algorithm == LocalUpdateAlgorithm::PAPA || algorithm == LocalUpdateAlgorithm::BranchTrainMerge; }
};

[[nodiscard]] std::string_view to_string(LocalUpdateAlgorithm a);  ///< "diloco", "streaming-diloco", "papa", "branch-train-merge"
[[nodiscard]] std::string_view to_string(OuterOptimizer o);         ///< "nesterov", "sgd"
[[nodiscard]] std::string_view to_string(Compression c);            ///< "none", "fp16", "int8", "fp4", "top-k"
[[nodiscard]] const std::vector<std::string>& local_update_algorithm_names();
[[nodiscard]] const std::vector<std::string>& outer_optimizer_names();
[[nodiscard]] const std::vector<std::string>& compression_names();
[[nodiscard]] std::optional<LocalUpdateAlgorithm> local_update_algorithm_from_string(std::string_view s);
[[nodiscard]] std::optional<OuterOptimizer> outer_optimizer_from_string(std::string_view s);
[[nodiscard]] std::optional<Compression> compression_from_string(std::string_view s);

/// Bytes one element of the pseudo-gradient takes on the wire, for elements reduced in
/// `reduce_bytes` bytes each (the plan's gradient dtype): None keeps them; FP16 sends 2; Int8 1 (the
/// one fp32 scale per tensor is left out: 4 bytes against millions); FP4 0.5; TopK sends
/// topk_fraction of the elements as a 4-byte value and a 4-byte index each.
[[nodiscard]] double wire_bytes_per_element(const LocalUpdateSpec& spec, double reduce_bytes);

/// Whether the pseudo-gradients are summed by an all-reduce (dense payloads: each replica's share
/// reduced on the way) or gathered whole by every replica (top-k: the sum of sparse vectors with
/// different indices is not sparse, so every replica receives every other's pairs and sums them).
[[nodiscard]] bool gathered(const LocalUpdateSpec& spec);

/// Memory-bound passes over the parameters of one device that the outer step makes, in bytes per
/// parameter read plus written, before and after the synchronisation. Before: the pseudo-gradient
/// (read the anchor and the parameters, write the difference: 3 × 4 bytes) and its compression (read
/// 4, write the wire bytes; top-k reads the difference twice more to select). After: decompression
/// (read the wire bytes, write 4) and the outer optimizer (Nesterov: read the average, the momentum
/// and the anchor, write the momentum, the anchor and the parameters: 6 × 4; SGD: read the average
/// and the anchor, write the anchor and the parameters: 4 × 4). The outer state is fp32, as DiLoCo
/// keeps it. PAPA and branch-train-merge send the weights as they are (before: compression only)
/// and mix the mean into them (after: read both, write: 3 × 4).
struct OuterStepBytes {
  double before = 0, after = 0;
};
[[nodiscard]] OuterStepBytes outer_step_bytes_per_parameter(const LocalUpdateSpec& spec, double reduce_bytes);

/// Bytes per parameter the outer optimizer keeps on the device beyond the inner plan's own: the fp32
/// anchor (the parameters of the last outer step) and, for Nesterov, its fp32 momentum buffer; none
/// for PAPA and branch-train-merge.
[[nodiscard]] double outer_state_bytes_per_parameter(const LocalUpdateSpec& spec);

}  // namespace parasim::strategies
