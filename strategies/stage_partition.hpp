#pragma once
/// Cutting a sequence of layers into contiguous pipeline chunks.
#include <cstdint>
#include <vector>

namespace parasim::strategies {

/// Splits layers with the given costs into `parts` contiguous non-empty groups minimising the largest
/// group cost (the classic linear-partition dynamic programme, O(n²·parts)); ties go to the earliest
/// cut so the answer is deterministic. Returns the group index of every layer.
/// Precondition: 1 ≤ parts ≤ costs.size().
[[nodiscard]] std::vector<std::int32_t> balanced_partition(const std::vector<double>& costs, std::int64_t parts);

}  // namespace parasim::strategies
