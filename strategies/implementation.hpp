#pragma once
/// The framework that runs a plan, as far as it decides the plan's communication: how ZeRO-3 / FSDP
/// gathers the sharded weights (in what units, how far ahead, whether compute may run meanwhile,
/// whether the backward pass gathers them again) and how gradients are bucketed and reduced. The
/// same plan runs at very different speeds under different frameworks (DeepSpeed's ZeRO-3 of 2021
/// fetched one parameter at a time and synchronised the device before each), so a prediction names
/// the implementation it assumes. Each named profile's parameters are the framework's documented
/// defaults, cited in implementation.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parasim::strategies {

enum class Framework {
  MegatronCore,   ///< Megatron-Core: DDP with the distributed optimizer (ZeRO 1–2); ZeRO-3 through PyTorch FSDP2
  PyTorch,        ///< PyTorch DDP (ZeRO 0) and FSDP2 fully_shard (ZeRO 2–3)
  DeepSpeed,      ///< DeepSpeed ZeRO from v0.6 (2022): coalesced per-module fetches, prefetched, event waits
  DeepSpeed2021,  ///< DeepSpeed ZeRO-3 v0.3.13–v0.5.5 (2021): per-parameter fetches behind device synchronisation
};

/// The units ZeRO-3 gathers weights in.
enum class GatherUnit {
  Layer,      ///< one all-gather per layer (FSDP2: a fully_shard unit per transformer block)
  Module,     ///< one per operator holding weights (DeepSpeed's per-submodule fetch, coalesced)
  Parameter,  ///< one per weight tensor (DeepSpeed before v0.6)
};

struct Implementation {
  Framework framework = Framework::MegatronCore;
  GatherUnit gather_unit = GatherUnit::Layer;
  /// Gather units issued ahead of the one computing: at least `prefetch_units`, and more while the
  /// weights in flight stay under `prefetch_elements` (0: no such budget).
  std::int64_t prefetch_units = 1;
  double prefetch_elements = 0;
  /// The host waits for the device before every gather and after every fetch: no gather overlaps
  /// compute, and nothing is prefetched.
  bool synchronous = false;
  /// Copy kernels per rank of the group a gather or reduce-scatter launches to move each rank's
  /// shard between the flat buffer and a list of tensors (torch.distributed's list APIs), each costing
  /// the device's kernel launch overhead while the synchronised device waits. 0 for flat-buffer
  /// collectives.
  double copies_per_rank = 0;
  /// Weights with fewer elements stay whole on every rank: never gathered.
  double persistence_elements = 0;
  /// With recomputation, a layer's weights are gathered for the recomputed forward and again for the
  /// backward when its weights exceed this many elements (DeepSpeed releases a parameter unless it is
  /// used again within stage3_max_reuse_distance elements); infinity: kept for the backward.
  double max_reuse_elements = 0;
  /// Gradient reduction: a bucket leaves once this many bytes are ready, under ZeRO 0–2 and under
  /// ZeRO-3 (0: after every backward item that completes gradients, FSDP2's per-unit
  /// reduce-scatter); or one reduction per weight tensor.
  double bucket_bytes = 0;
  double zero3_bucket_bytes = 0;
  bool reduce_per_parameter = false;

  /// The bucket under ZeRO stage `zero`.
  [[nodiscard]] double bucket_for(int zero) const { return zero >= 3 ? zero3_bucket_bytes : bucket_bytes; }

  bool operator==(const Implementation&) const = default;
};

/// "megatron-core", "pytorch", "deepspeed", "deepspeed-2021".
[[nodiscard]] std::string_view to_string(Framework f);
[[nodiscard]] const std::vector<std::string>& framework_names();
[[nodiscard]] std::optional<Framework> framework_from_string(std::string_view s);

/// The framework a plan runs under when the scenario names none: Megatron-Core for transformers,
/// PyTorch for every other model.
[[nodiscard]] Framework default_framework(bool transformer);

/// The profile of `framework` for a plan over `dp` data-parallel ranks whose weight gradients are
/// `grad_bytes` bytes each: its documented defaults; `bucket_mb`, when given, replaces the bucket size.
[[nodiscard]] Implementation implementation_of(Framework framework, std::int64_t dp, double grad_bytes, std::optional<double> bucket_mb);

/// One line on what the profile does, for reports ("per-layer all-gathers, one layer prefetched, ...").
[[nodiscard]] std::string describe(const Implementation& implementation);

}  // namespace parasim::strategies
