#pragma once
/// The order in which the lowering makes units (one pass, forward or backward, of one micro-batch
/// through one chunk on its stage's devices).
#include <cstdint>
#include <vector>

#include "sim/work/work.hpp"
#include "strategies/schedule.hpp"

namespace parasim::sim {

/// Of m micro-batches and C chunks, the number of a unit among all 2·m·C.
[[nodiscard]] inline std::uint32_t unit_index(bool forward, std::int64_t j, std::int64_t c, std::int64_t m, std::int64_t C) {
  return static_cast<std::uint32_t>(((forward ? 0 : m) + j) * C + c);
}

/// Each stage's units in its schedule's order (strategies::pipeline_order), stages taken in turn, a
/// stage's next unit made as soon as the units sending to it are made: a list schedule of the
/// pipeline, which exists because every schedule is deadlock-free. So every stage's issue order
/// follows the order the units are made in, and every send precedes its receiver.
[[nodiscard]] std::vector<strategies::PipelineStep> unit_order(const std::vector<ChunkWork>& chunks, strategies::Schedule schedule,
                                                               std::int64_t pp, std::int64_t v, std::int64_t m);

}  // namespace parasim::sim
