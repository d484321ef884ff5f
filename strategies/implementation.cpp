#include "strategies/implementation.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

namespace parasim::strategies {

std::string_view to_string(Framework f) {
  switch (f) {
    case Framework::MegatronCore: return "megatron-core";
    case Framework::PyTorch: return "pytorch";
    case Framework::DeepSpeed: return "deepspeed";
    case Framework::DeepSpeed2021: return "deepspeed-2021";
  }
  return "megatron-core";
}

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names{"megatron-core", "pytorch", "deepspeed", "deepspeed-2021"};
  return names;
}

std::optional<Framework> framework_from_string(std::string_view s) {
  for (Framework f : {Framework::MegatronCore, Framework::PyTorch, Framework::DeepSpeed, Framework::DeepSpeed2021})
    if (to_string(f) == s) return f;
  return std::nullopt;
}

Framework default_framework(bool transformer) { return transformer ? Framework::MegatronCore : Framework::PyTorch; }

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// PyTorch FSDP2 (torch.distributed.fsdp.fully_shard; pytorch.org/docs/stable/distributed.fsdp.fully_shard.html):
/// one all-gather and one reduce-scatter per fully_shard unit (a transformer block); the next
/// unit's all-gather is issued as the current one computes, forward (implicit prefetch, two
/// all-gather outputs alive) and backward (explicit, one unit ahead in reverse order);
/// reshard_after_forward (the default for every unit but the root) frees a unit's weights after its
/// forward, so the backward gathers them again.
Implementation fsdp2() {
  Implementation i;
  i.gather_unit = GatherUnit::Layer;
  i.prefetch_units = 1;
  // The pre-backward hook gathers a unit once for its recomputed forward and its backward.
  i.max_reuse_elements = std::numeric_limits<double>::infinity();
  i.zero3_bucket_bytes = 0;  // one reduce-scatter per unit, as its backward ends
  return i;
}

/// DeepSpeed's ZeRO-3 defaults (deepspeed/runtime/zero/config.py; deepspeed.readthedocs.io, "ZeRO"):
/// stage3_prefetch_bucket_size 5e7 elements, stage3_param_persistence_threshold 1e5 elements,
/// stage3_max_reuse_distance 1e9 elements, reduce_bucket_size 5e8 elements.
void deepspeed_defaults(Implementation& i, double grad_bytes) {
  i.prefetch_elements = 5e7;
  i.persistence_elements = 1e5;
  i.max_reuse_elements = 1e9;
  i.bucket_bytes = 5e8 * grad_bytes;
  i.zero3_bucket_bytes = i.bucket_bytes;
}

}  // namespace

Implementation implementation_of(Framework framework, std::int64_t dp, double grad_bytes, std::optional<double> bucket_mb) {
  Implementation i;
  switch (framework) {
    case Framework::MegatronCore:
      // ZeRO-3 runs through FSDP2 (Megatron-LM --use-torch-fsdp2); ZeRO 1–2 through Megatron-Core's
      // DDP and distributed optimizer, whose bucket holds max(40M, 1M · dp) parameters
      // (megatron/core/distributed/distributed_data_parallel.py: "larger DP sizes need larger buckets").
      i = fsdp2();
      i.bucket_bytes = std::max(40e6, 1e6 * static_cast<double>(dp)) * grad_bytes;
      break;
    case Framework::PyTorch:
      // DDP buckets gradients in 25 MiB (torch.nn.parallel.DistributedDataParallel, bucket_cap_mb = 25);
      // FSDP2 reduce-scatters per unit.
      i = fsdp2();
      i.bucket_bytes = 25 * kMiB;
      break;
    case Framework::DeepSpeed:
      // From v0.6 (PR #1453, "Various ZeRO Stage3 Optimizations", 2022): a submodule's parameters
      // are flattened into one all-gather (all_gather_coalesced), prefetched in trace order up to
      // stage3_prefetch_bucket_size elements, waited for by events, not device synchronisations.
      i.gather_unit = GatherUnit::Module;
      i.prefetch_units = 1;
      deepspeed_defaults(i, grad_bytes);
      break;
    case Framework::DeepSpeed2021:
      // v0.3.13 (ZeRO-3's first release, March 2021) to v0.5.5: _allgather_param gathers one
      // parameter at a time with torch.distributed.all_gather into a list of per-rank views and calls
      // torch.cuda.synchronize() before each, and fetch_sub_module synchronises the device again after
      // each submodule (deepspeed/runtime/zero/partition_parameters.py and stage3.py at v0.3.16; PR
      // #1188, v0.5.6: "the async version is not async at all, because each all_gather calls
      // torch.cuda.synchronize()", and "torch.distributed.all_gather will do implicit memcpy at the
      // end of each ncclAllgather"). Gradients are reduce-scattered one parameter at a time
      // (_reduce_scatter_gradients) from a list of per-rank views. Each rank's view costs a copy
      // kernel (PyTorch's ProcessGroupNCCL flattens a list input and copies a list output back one
      // tensor at a time), launched by the host while the synchronised device waits.
      i.gather_unit = GatherUnit::Parameter;
      i.prefetch_units = 0;
      i.synchronous = true;
      i.copies_per_rank = 1;
      deepspeed_defaults(i, grad_bytes);
      i.prefetch_elements = 0;
      i.reduce_per_parameter = true;
      break;
  }
  i.framework = framework;
  if (bucket_mb) i.bucket_bytes = i.zero3_bucket_bytes = *bucket_mb * kMiB;
  return i;
}

std::string describe(const Implementation& i) {
  std::ostringstream d;
  d.setf(std::ios::fixed);
  d.precision(1);
  d << to_string(i.framework) << ": ZeRO-3 gathers per "
    << (i.gather_unit == GatherUnit::Layer ? "layer" : i.gather_unit == GatherUnit::Module ? "module" : "parameter");
  if (i.synchronous) {
    d << ", synchronised (no overlap)";
  } else {
    d << ", " << i.prefetch_units << " ahead";
    if (i.prefetch_elements > 0) d << " (up to " << i.prefetch_elements / 1e6 << "M elements)";
  }
  if (i.copies_per_rank > 0) d << ", a copy kernel per rank and collective";
  if (i.reduce_per_parameter) {
    d << "; gradients reduced per parameter";
  } else {
    d << "; gradient buckets of " << i.bucket_bytes / kMiB << " MiB";
    d << (i.zero3_bucket_bytes > 0 ? "" : " (ZeRO-3: per layer)");
  }
  return d.str();
}

}  // namespace parasim::strategies
