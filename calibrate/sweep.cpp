#include "calibrate/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "common/error.hpp"

namespace parasim::calibrate {

sim::EfficiencyCurve efficiency_curve(std::span<const Sample> samples, double peak_per_s) {
  PARASIM_CHECK(!samples.empty() && peak_per_s > 0, "an efficiency curve needs samples and a positive peak");
  std::map<double, double> fastest;  // size → rate
  for (const Sample& s : samples) {
    PARASIM_CHECK(s.size > 0 && s.rate_per_s > 0 && s.rate_per_s <= peak_per_s, "a sample's size and rate must be positive and its rate at most the peak");
    double& rate = fastest[s.size];
    rate = std::max(rate, s.rate_per_s);
  }
  sim::EfficiencyCurve curve;
  for (const auto& [size, rate] : fastest) curve.points.emplace_back(size, rate / peak_per_s);
  return curve;
}

double best_rate(std::span<const Sample> samples) {
  PARASIM_CHECK(!samples.empty(), "no samples");
  double best = 0;
  for (const Sample& s : samples) best = std::max(best, s.rate_per_s);
  return best;
}

double best_seconds(const std::function<void()>& run, int min_repeats, double min_total_s) {
  using Clock = std::chrono::steady_clock;
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int k = 0; k < min_repeats || total < min_total_s; ++k) {
    const auto t0 = Clock::now();
    run();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

}  // namespace parasim::calibrate
