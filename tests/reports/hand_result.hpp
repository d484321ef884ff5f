#pragma once
// A Result written by hand with round figures (each exact in 9 significant digits, so it survives the
// JSON form unchanged) for tests that check formatted numbers.
#include "sim/result.hpp"

namespace parasim::testing {

/// Two devices, one per pipeline stage; a step of `step_time_s` split as below on every device.
inline sim::Result hand_result(const std::string& variant = "base", double step_time_s = 2.0) {
  sim::Result r;
  r.scenario = "hand";
  r.variant = variant;
  r.model = "toy";
  r.plan = "pp 2, 1f1b";
  r.backend = "analytical";
  r.profile = "datasheet";
  r.profile_origin = "built-in datasheet figures";
  r.device_kind = "a100-80gb";
  r.devices = 2;
  r.tasks = 40;
  r.step_time_s = step_time_s;
  r.samples_per_s = 8 / step_time_s;      // 8 samples per step
  r.tokens_per_s = 8 * 1024 / step_time_s;  // 1024 tokens per sample
  r.model_flops_per_step = 1e15;
  r.hardware_flops_per_step = 1.25e15;
  r.model_tflops_per_device = 1e15 / step_time_s / 2 / 1e12;
  r.mfu = 0.4;
  r.hfu = 0.5;
  // A quarter of the step forward, half backward, an eighth exposed pipeline sends, an eighth idle.
  sim::TimeBreakdown b;
  b.seconds[static_cast<std::size_t>(sim::Category::Forward)] = 0.25 * step_time_s;
  b.seconds[static_cast<std::size_t>(sim::Category::Backward)] = 0.5 * step_time_s;
  b.seconds[static_cast<std::size_t>(sim::Category::PipelineComm)] = 0.125 * step_time_s;
  b.idle_s = 0.125 * step_time_s;
  r.breakdown = b;
  r.bubble_fraction = 0.125;
  for (std::int64_t d = 0; d < 2; ++d) r.per_device.push_back(sim::DeviceTimes{d, d, b, 0.5});
  // Decimal bytes: 2 GB weights, 2 GB gradients, 12 GB optimizer state, 4 GB (stage 0) or 2 GB
  // (stage 1) activations, 0.5 GB buffers.
  for (std::int64_t s = 0; s < 2; ++s) {
    strategies::StageMemory m;
    m.stage = s;
    m.in_flight = 2 - s;
    m.parameters = 1e9;
    m.memory = {2e9, 2e9, 12e9, 4e9 - 2e9 * static_cast<double>(s), 0.5e9};
    r.memory.push_back(m);
  }
  r.memory_capacity_bytes = 78e9;
  r.fits = true;
  r.peak_memory_stage = 0;
  r.intra_node_bytes = 0;
  r.inter_node_bytes = 3e9;
  return r;
}

}  // namespace parasim::testing
