#include "strategies/schedule.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace parasim::strategies {
namespace {

// Megatron-LM's mapping of the k-th forward (or backward) chunk-micro-batch of a stage to its model
// chunk and micro-batch (schedules.py, get_model_chunk_id): micro-batches advance in groups of pp per
// chunk; backward visits chunks in reverse.
PipelineStep interleaved_step(std::int64_t k, std::int64_t pp, std::int64_t v, std::int64_t stage, bool forward) {
  const std::int64_t in_group = k % (pp * v);
  std::int64_t local_chunk = in_group / pp;
  if (!forward) local_chunk = v - 1 - local_chunk;
  const std::int64_t micro_batch = (k / (pp * v)) * pp + k % pp;
  return PipelineStep{forward, static_cast<std::int32_t>(micro_batch), static_cast<std::int32_t>(stage + local_chunk * pp)};
}

}  // namespace

std::vector<PipelineStep> pipeline_order(Schedule schedule, std::int64_t pp, std::int64_t v, std::int64_t m, std::int64_t stage) {
  PARASIM_CHECK(pp >= 1 && v >= 1 && m >= 1 && stage >= 0 && stage < pp, "pipeline_order: bad arguments");
  std::vector<PipelineStep> order;
  const auto c = static_cast<std::int32_t>(stage);
  switch (schedule) {
    case Schedule::GPipe:
      PARASIM_CHECK(v == 1, "GPipe has one chunk per stage");
      for (std::int64_t i = 0; i < m; ++i) order.push_back({true, static_cast<std::int32_t>(i), c});
      for (std::int64_t i = 0; i < m; ++i) order.push_back({false, static_cast<std::int32_t>(i), c});
      break;
    case Schedule::OneFOneB: {
      PARASIM_CHECK(v == 1, "1F1B has one chunk per stage");
      const std::int64_t warmup = std::min(pp - stage - 1, m);
      std::int64_t f = 0, b = 0;
      for (; f < warmup; ++f) order.push_back({true, static_cast<std::int32_t>(f), c});
      while (f < m) {
        order.push_back({true, static_cast<std::int32_t>(f++), c});
        order.push_back({false, static_cast<std::int32_t>(b++), c});
      }
      while (b < m) order.push_back({false, static_cast<std::int32_t>(b++), c});
      break;
    }
    case Schedule::Interleaved1F1B: {
      PARASIM_CHECK(m % pp == 0, "interleaved 1F1B needs micro_batches % pp == 0");
      const std::int64_t total = m * v;
      const std::int64_t warmup = std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
      std::int64_t f = 0, b = 0;
      for (; f < warmup; ++f) order.push_back(interleaved_step(f, pp, v, stage, true));
      while (f < total) {
        order.push_back(interleaved_step(f++, pp, v, stage, true));
        order.push_back(interleaved_step(b++, pp, v, stage, false));
      }
      while (b < total) order.push_back(interleaved_step(b++, pp, v, stage, false));
      break;
    }
  }
  return order;
}

std::int64_t peak_in_flight(const std::vector<PipelineStep>& order) {
  std::int64_t live = 0, peak = 0;
  for (const auto& s : order) {
    live += s.forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace parasim::strategies
