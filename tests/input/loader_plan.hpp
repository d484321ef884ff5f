#pragma once
// The plans the input-pipeline tests load for: a 4-layer transformer (sequence 64) whose plan the
// loader reads only for its mesh and batch sizes.
#include <cstdint>

#include "models/transformer.hpp"
#include "strategies/plan.hpp"

namespace parasim::testing {

/// The plan under `spec` on `devices` devices, global batch `global_batch` in micro-batches of
/// `micro_batch`.
inline strategies::Plan loader_plan(const strategies::PlanSpec& spec, std::int64_t devices, std::int64_t global_batch, std::int64_t micro_batch) {
  models::TransformerConfig c;
  c.name = "loader-gpt";
  c.layers = 4;
  c.hidden = 64;
  c.heads = 4;
  c.vocab = 128;
  c.seq_len = 64;
  c.batch = micro_batch * strategies::resolve_dp(spec, devices);
  strategies::TrainingSpec training;
  training.global_batch = global_batch;
  training.micro_batch = micro_batch;
  return strategies::make_plan(models::build_transformer(c), training, spec, devices);
}

}  // namespace parasim::testing
