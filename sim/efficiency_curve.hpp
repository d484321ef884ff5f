#pragma once
/// A rate by size: the profiles' efficiency curves (sim/profile.hpp) and the interference rates that
/// depend on a collective's size (sim/interference.hpp).
#include <utility>
#include <vector>

namespace parasim::sim {

/// Efficiency (0, 1] as a function of a size: piecewise linear in log2(size) between the points,
/// constant beyond the first and last point.
struct EfficiencyCurve {
  std::vector<std::pair<double, double>> points;  ///< (size, efficiency), sizes strictly increasing
  /// Precondition: at least one point.
  [[nodiscard]] double at(double size) const;
  bool operator==(const EfficiencyCurve&) const = default;
};

}  // namespace parasim::sim
