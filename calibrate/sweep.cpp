#include "calibrate/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "calibrate/source_text.hpp"
#include "sim/cost_model.hpp"
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

std::string listing(std::span<const Sample> samples, double unit, const char* unit_name, const std::function<std::string(double)>& size_text) {
  std::string out;
  for (const Sample& s : samples) out += (out.empty() ? "" : ", ") + size_text(s.size) + " -> " + fixed(s.rate_per_s / unit, 2);
  return out + " " + unit_name;
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

std::vector<double> interleaved_medians(std::span<const std::function<void()>> runs, int rounds, double min_total_s,
                                       const std::function<void()>& in_step) {
  using Clock = std::chrono::steady_clock;
  PARASIM_CHECK(rounds >= 1, "at least one round");
  std::vector<std::vector<double>> times(runs.size());
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (in_step) in_step();
      // One untimed run first: the runs before it in the round have evicted its operands from the
      // caches, and only a round's first run would find them cold, so a run timed once or twice a
      // round would have a cold median and one timed many times a warm one.
      runs[i]();
      double total = 0;
      do {
        const auto t0 = Clock::now();
        runs[i]();
        times[i].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        total += times[i].back();
      } while (total < min_total_s / rounds);
    }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[(t.size() - 1) / 2]);
  }
  return medians;
}

double median_seconds(const std::function<void()>& run, int min_repeats, double min_total_s, const std::function<void()>& in_step) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> times;
  double total = 0;
  // Once, not before each run: how many runs make min_total_s differs from rank to rank, and a
  // barrier each must be called as often on every rank.
  if (in_step) in_step();
  for (int k = 0; k < min_repeats || total < min_total_s; ++k) {
    const auto t0 = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    total += times.back();
  }
  std::sort(times.begin(), times.end());
  return times[(times.size() - 1) / 2];
}

std::pair<sim::EfficiencyCurve, std::string> thin_gemm_curve(const sim::DeviceProfile& device, models::DType dtype, std::span<const ThinGemm> thin,
                                                            std::int64_t other, std::optional<std::size_t> orientation) {
  PARASIM_CHECK(!thin.empty() && other > 0, "a thin-GEMM sweep has samples");
  PARASIM_CHECK(!orientation || *orientation < 3, "an orientation is m, n or k");
  std::vector<Sample> factors;
  std::string text;
  for (const ThinGemm& t : thin) {
    const double flops = 2.0 * static_cast<double>(t.dim) * static_cast<double>(other) * static_cast<double>(other);
    const double square_s = sim::kernel_seconds(device, models::OpClass::Gemm, dtype, flops, 0, flops, 1);
    double sum = 0;
    for (const double s : t.seconds) sum += std::min(1.0, square_s / s);
    const double factor = orientation ? std::min(1.0, square_s / t.seconds[*orientation]) : sum / static_cast<double>(t.seconds.size());
    factors.push_back({static_cast<double>(t.dim), factor});
    text += (text.empty() ? "" : ", ") + std::to_string(t.dim) + " -> " + fixed(factor, 3);
  }
  return {efficiency_curve(factors, 1.0), text};
}

}  // namespace parasim::calibrate
