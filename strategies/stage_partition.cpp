#include "strategies/stage_partition.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace parasim::strategies {

std::vector<std::int32_t> balanced_partition(const std::vector<double>& costs, std::int64_t parts) {
  const auto n = costs.size();
  const auto k = static_cast<std::size_t>(parts);
  PARASIM_CHECK(k >= 1 && k <= n, "balanced_partition: 1 <= parts <= layers");
  std::vector<double> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs[i];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[j][i]: the least max-group cost splitting the first i layers into j groups; cut[j][i]: where
  // the last group starts.
  std::vector<std::vector<double>> best(k + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<std::size_t>> cut(k + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t j = 1; j <= k; ++j) {
    for (std::size_t i = j; i <= n - (k - j); ++i) {
      for (std::size_t s = j - 1; s < i; ++s) {
        const double v = std::max(best[j - 1][s], prefix[i] - prefix[s]);
        if (v < best[j][i]) {
          best[j][i] = v;
          cut[j][i] = s;
        }
      }
    }
  }
  std::vector<std::int32_t> group(n, 0);
  std::size_t end = n;
  for (std::size_t j = k; j >= 1; --j) {
    const std::size_t start = cut[j][end];
    for (std::size_t i = start; i < end; ++i) group[i] = static_cast<std::int32_t>(j - 1);
    end = start;
  }
  return group;
}

}  // namespace parasim::strategies
