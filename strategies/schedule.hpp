#pragma once
/// Pipeline schedules as data: for each stage, the order in which it runs forward and backward passes
/// of (micro-batch, model chunk) pairs. The lowering issues compute tasks in this order; the memory
/// model counts the micro-batches in flight from it.
#include <cstdint>
#include <vector>

#include "strategies/plan_spec.hpp"

namespace parasim::strategies {

struct PipelineStep {
  bool forward = true;
  std::int32_t micro_batch = 0;
  std::int32_t chunk = 0;  ///< model chunk index (global: stage + pp · local chunk)
  bool operator==(const PipelineStep&) const = default;
};

/// The order of passes on `stage` (0-based) of `pp` stages with `micro_batches` micro-batches and
/// `virtual_stages` chunks per stage.
///  - GPipe (Huang et al. 2019): every forward, then every backward.
///  - 1F1B (Narayanan et al. 2021, PipeDream-Flush): pp − stage − 1 warm-up forwards, then one
///    forward and one backward alternately, then the remaining backwards.
///  - Interleaved 1F1B (Narayanan et al. SC'21 §2.2, Megatron-LM's schedule): chunk-micro-batches in
///    groups of pp per chunk; (pp − stage − 1)·2 + (virtual_stages − 1)·pp warm-up forwards.
///    Precondition: micro_batches % pp == 0.
[[nodiscard]] std::vector<PipelineStep> pipeline_order(Schedule schedule, std::int64_t pp, std::int64_t virtual_stages,
                                                       std::int64_t micro_batches, std::int64_t stage);

/// Peak number of (micro-batch, chunk) forward passes whose activations a stage holds at once.
[[nodiscard]] std::int64_t peak_in_flight(const std::vector<PipelineStep>& order);

}  // namespace parasim::strategies
