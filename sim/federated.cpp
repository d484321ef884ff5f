#include "sim/federated.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <unordered_map>

#include "common/error.hpp"

namespace parasim::sim {
namespace {

/// Draws from the seed's stream: std::mt19937_64's sequence is fixed by the C++ standard, and the
/// conversions below are ours, so a seed gives the same clients on every platform's library.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, 1): the top 53 bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  /// Standard normal, Box–Muller (both uniforms drawn every time).
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  double from(const strategies::Distribution& d) {
    switch (d.kind) {
      case strategies::Distribution::Kind::Constant: return d.value;
      case strategies::Distribution::Kind::LogNormal: return d.value * std::exp(d.sigma * normal());
      case strategies::Distribution::Kind::Uniform: return d.low + (d.high - d.low) * uniform();
    }
    return d.value;
  }
  /// Uniform integer in [0, n): the uniform draw scaled (n is far below 2^53).
  std::int64_t below(std::int64_t n) { return std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(uniform() * static_cast<double>(n))); }

 private:
  std::mt19937_64 engine_;
};

std::vector<FederatedClient> draw(const strategies::FederatedSpec& spec, Draws& draws) {
  std::vector<FederatedClient> clients(static_cast<std::size_t>(spec.population));
  for (auto& c : clients) {
    c.speed = draws.from(spec.speed);
    c.upload = draws.from(spec.upload_mbps) * 1e6 / 8;
    c.download = draws.from(spec.download_mbps) * 1e6 / 8;
    c.availability = std::clamp(draws.from(spec.availability), 0.0, 1.0);
    PARASIM_CHECK(c.speed > 0 && c.upload > 0 && c.download > 0, "clients draw positive speeds and bandwidths");
  }
  return clients;
}

}  // namespace

std::vector<FederatedClient> draw_clients(const strategies::FederatedSpec& spec) {
  Draws draws(spec.seed);
  return draw(spec, draws);
}

std::vector<double> fluid_finish_times(const std::vector<double>& start, const std::vector<double>& bytes, const std::vector<double>& cap,
                                       double capacity) {
  const std::size_t n = start.size();
  PARASIM_CHECK(bytes.size() == n && cap.size() == n && capacity > 0, "a fluid star of transfers with a capacity");
  std::vector<double> finish(n, 0), left(bytes);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return start[a] < start[b]; });
  std::vector<std::size_t> active;
  std::vector<double> rate(n, 0);
  std::size_t next = 0;
  double t = 0;
  const double inf = std::numeric_limits<double>::infinity();
  while (true) {
    // Transfers that have started join (one of no bytes finishes as it starts).
    while (next < n && (active.empty() ? true : start[order[next]] <= t)) {
      const std::size_t i = order[next++];
      t = std::max(t, start[i]);
      PARASIM_CHECK(cap[i] > 0 && bytes[i] >= 0, "a transfer with a positive rate");
      if (bytes[i] == 0) {
        finish[i] = start[i];
      } else {
        active.push_back(i);
      }
    }
    if (active.empty()) {
      if (next >= n) break;
      continue;
    }
    // Max-min fair rates: in increasing order of cap, each takes its cap or an equal share of what
    // is left, whichever is less.
    std::stable_sort(active.begin(), active.end(), [&](std::size_t a, std::size_t b) { return cap[a] < cap[b]; });
    double remaining = capacity;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const double share = remaining / static_cast<double>(active.size() - k);
      rate[active[k]] = std::min(cap[active[k]], share);
      remaining -= rate[active[k]];
    }
    // The next event: a transfer's start, or the first to finish (which then ends exactly, free of
    // rounding in the others' remaining bytes).
    double dt = next < n ? start[order[next]] - t : inf;
    std::optional<std::size_t> finishing;
    for (const std::size_t i : active) {
      const double d = left[i] / rate[i];
      if (d <= dt) dt = d, finishing = i;
    }
    for (const std::size_t i : active) left[i] -= rate[i] * dt;
    t += dt;
    if (finishing) left[*finishing] = 0;
    std::vector<std::size_t> still;
    for (const std::size_t i : active) {
      if (left[i] <= bytes[i] * 1e-12) {
        finish[i] = t;
      } else {
        still.push_back(i);
      }
    }
    active = std::move(still);
  }
  return finish;
}

double quantile(std::vector<double> values, double q) {
  PARASIM_CHECK(!values.empty() && q >= 0 && q <= 1, "a quantile of at least one value");
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

FederatedRun simulate_federated(const FederatedInputs& in) {
  const auto& spec = in.spec;
  PARASIM_CHECK(spec.population >= 1 && spec.per_round >= 1 && spec.per_round <= spec.population && spec.rounds >= 1 && spec.local_steps >= 1 &&
                    spec.server_gbps > 0,
                "a federated population that can be sampled");
  Draws draws(spec.seed);
  const std::vector<FederatedClient> clients = draw(spec, draws);
  const double link = spec.server_gbps * 1e9 / 8;
  FederatedRun run;
  double unavailable = 0, late = 0, sampled = 0, samples = 0, bytes = 0, busy = 0, total = 0;
  for (std::int64_t round = 0; round < spec.rounds; ++round) {
    // The sample: a partial Fisher–Yates shuffle of the population, its swaps kept sparse (only the
    // positions moved are stored), so a round costs its sample, not the population.
    std::unordered_map<std::int64_t, std::int64_t> moved;
    auto at = [&](std::int64_t i) {
      const auto it = moved.find(i);
      return it == moved.end() ? i : it->second;
    };
    std::vector<std::int64_t> chosen;
    for (std::int64_t k = 0; k < spec.per_round; ++k) {
      const std::int64_t j = k + draws.below(spec.population - k);
      const std::int64_t picked = at(j);
      moved[j] = at(k);
      chosen.push_back(picked);
    }
    std::vector<std::int64_t> responding;
    for (const std::int64_t c : chosen)
      if (draws.uniform() < clients[static_cast<std::size_t>(c)].availability) responding.push_back(c);
    sampled += static_cast<double>(chosen.size());
    unavailable += static_cast<double>(chosen.size() - responding.size());
    // Downloads at once, the computations, the uploads as they come.
    const std::size_t n = responding.size();
    std::vector<double> zero(n, 0), model(n, in.model_bytes), down(n), up(n), upload_start(n);
    for (std::size_t i = 0; i < n; ++i) {
      const FederatedClient& c = clients[static_cast<std::size_t>(responding[i])];
      down[i] = c.download;
      up[i] = c.upload;
    }
    const std::vector<double> got = n ? fluid_finish_times(zero, model, down, link) : std::vector<double>{};
    for (std::size_t i = 0; i < n; ++i)
      upload_start[i] = got[i] + static_cast<double>(spec.local_steps) * in.client_step_s / clients[static_cast<std::size_t>(responding[i])].speed;
    const std::vector<double> sent = n ? fluid_finish_times(upload_start, model, up, link) : std::vector<double>{};
    double end = 0;
    std::size_t in_time = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (spec.deadline_s > 0 && sent[i] > spec.deadline_s) continue;
      ++in_time;
      end = std::max(end, sent[i]);
    }
    late += static_cast<double>(n - in_time);
    // With a deadline, a missing client keeps the server waiting until it.
    if (spec.deadline_s > 0 && in_time < chosen.size()) end = spec.deadline_s;
    const double seconds = end + static_cast<double>(in_time) * in.aggregate_s_per_update + in.server_update_s;
    run.round_s.push_back(seconds);
    samples += static_cast<double>(in_time) * static_cast<double>(spec.local_steps) * in.samples_per_step;
    // The server link's bytes and busy time in each direction (until the deadline where one cuts
    // an upload short).
    double down_busy = 0, up_busy = 0;
    for (std::size_t i = 0; i < n; ++i) {
      down_busy = std::max(down_busy, got[i]);
      bytes += in.model_bytes;
      const double arrived = spec.deadline_s > 0 ? std::min(sent[i], spec.deadline_s) : sent[i];
      bytes += sent[i] > upload_start[i] ? in.model_bytes * std::clamp((arrived - upload_start[i]) / (sent[i] - upload_start[i]), 0.0, 1.0) : 0;
    }
    // Busy: the time some transfer is in flight in each direction, over the round.
    std::vector<std::pair<double, double>> spans;
    for (std::size_t i = 0; i < n; ++i) spans.push_back({upload_start[i], std::min(sent[i], end)});
    std::sort(spans.begin(), spans.end());
    double covered_to = 0;
    for (const auto& [a, b] : spans) {
      const double from = std::max(a, covered_to);
      if (b > from) up_busy += b - from;
      covered_to = std::max(covered_to, b);
    }
    busy += seconds > 0 ? (down_busy + up_busy) / (2 * seconds) : 0;
    total += seconds;
  }
  const double rounds = static_cast<double>(spec.rounds);
  run.mean_s = total / rounds;
  run.p50_s = quantile(run.round_s, 0.5);
  run.p90_s = quantile(run.round_s, 0.9);
  run.p99_s = quantile(run.round_s, 0.99);
  run.unavailable_fraction = sampled > 0 ? unavailable / sampled : 0;
  run.late_fraction = sampled > 0 ? late / sampled : 0;
  run.samples_per_round = samples / rounds;
  run.server_bytes_per_round = bytes / rounds;
  run.server_link_utilisation = busy / rounds;
  return run;
}

}  // namespace parasim::sim
