#pragma once
/// The search space: which values of each knob the search tries, and its enumeration into groups of
/// candidates. A group holds the candidates that share one make_plan call — the same mesh, cut,
/// schedule, micro-batch size and sequence parallelism — and differ only in ZeRO stage and
/// recomputation, which change no sharding.
#include <cstdint>
#include <vector>

#include "models/graph.hpp"
#include "strategies/plan_spec.hpp"
#include "strategies/search/candidate.hpp"

namespace parasim::strategies::search {

/// The values each knob takes; an empty list means every value that can be valid (listed per field).
struct SearchSpace {
  std::vector<std::int64_t> nodes;  ///< node counts; empty = the scenario's
  /// Tensor-parallel degrees; empty = every divisor of the device count (check_plan keeps those that
  /// divide the heads, the MLP width or the channels).
  std::vector<std::int64_t> tp;
  /// Pipeline stages; empty = every divisor of devices / tp up to the model's layer count.
  std::vector<std::int64_t> pp;
  /// Expert-parallel degrees; empty = every divisor of dp that divides the experts (1 for dense models).
  std::vector<std::int64_t> ep;
  /// Context-parallel degrees (transformers); empty = 1 and every power of two cp with 2·cp dividing
  /// the sequence and at least kMinContextTokens tokens left on each device (see kMinContextTokens).
  std::vector<std::int64_t> cp;
  /// Micro-batch sizes; empty = kDefaultMicroBatches (those whose micro_batch × dp divides the global batch).
  std::vector<std::int64_t> micro_batch;
  std::vector<Schedule> schedule;  ///< empty = gpipe, 1f1b, interleaved-1f1b
  /// Interleaved 1F1B: every v from 2 to this bound whose chunks divide the layers evenly.
  std::int64_t max_virtual_stages = 4;
  std::vector<int> zero;              ///< empty = 0, 1, 2, 3 (0 alone when dp = 1: the others change nothing)
  std::vector<Recompute> recompute;   ///< empty = none, selective, full
  std::vector<bool> sequence_parallel;  ///< empty = false, true (true only with tp > 1 on a transformer)
  bool operator==(const SearchSpace&) const = default;
};

/// The fewest tokens per device the default cp range leaves (a bound on the search space, as
/// kDefaultMicroBatches is; a space that lists cp explicitly may go below it). Why about here: a
/// ring step computes 4·s_l²·h FLOPs of attention on s_l local tokens and passes 4·s_l·h_kv bytes of
/// K/V, so it hides the pass only while s_l ≥ (h_kv/h)·F/B (F the attention's FLOP/s, B the link's
/// B/s): with multi-head attention at ~400 TF/s that is ~900 tokens over NVLink4's 450 GB/s and
/// ~8,000 over a 50 GB/s NDR port. Every context-parallel plan in NeMo's long-sequence table
/// (performance_long_sequence.md) keeps 16,384 or more tokens per device.
inline constexpr std::int64_t kMinContextTokens = 4096;

/// The micro-batch sizes tried when the space lists none.
inline const std::vector<std::int64_t> kDefaultMicroBatches{1, 2, 4, 8};

/// One variant of a group: its ZeRO stage and recomputation.
struct Variant {
  int zero = 0;
  Recompute recompute = Recompute::None;
  bool operator==(const Variant&) const = default;
};

/// Candidates sharing one make_plan call.
struct CandidateGroup {
  Candidate base;                 ///< zero and recompute as in variants.front()
  std::vector<Variant> variants;  ///< in (zero, recompute) order
  [[nodiscard]] Candidate candidate(std::size_t variant) const;
};
/// The most variants a group can hold: 4 ZeRO stages × 3 recomputation policies.
inline constexpr std::size_t kMaxVariants = 12;

/// Facts about the model the enumeration needs (from its graph at any batch).
struct ModelFacts {
  std::int64_t layers = 1;       ///< pipeline-cuttable layers: transformer blocks, else graph layers
  bool transformer = false;
  std::int64_t experts = 0;      ///< MoE experts per layer; 0 for dense models
  std::int64_t seq_len = 0;      ///< a transformer's sequence length; 0 otherwise
  std::int64_t experts_per_token = 0;  ///< MoE top-k; 0 for dense models
  [[nodiscard]] static ModelFacts of(const models::Graph& graph);
};

/// Every group of the space, in key order (candidates ordered by key_less). `base` supplies the knobs
/// the search does not vary (gradient buckets, overlap, blocking sends, accumulation, mesh order);
/// `training` the global batch, precision and optimizer. Only structural validity is judged here
/// (degrees multiply to the device count, micro-batches divide the global batch, interleaving needs
/// pp > 1 and a micro-batch count divisible by pp); check_plan judges the rest.
[[nodiscard]] std::vector<CandidateGroup> enumerate_groups(const SearchSpace& space, const ModelFacts& model, const TrainingSpec& training,
                                                           const PlanSpec& base, std::int64_t devices_per_node);

}  // namespace parasim::strategies::search
