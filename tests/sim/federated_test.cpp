// Federated rounds (sim/federated.hpp): the fluid sharing of the server's link, a round on a small
// population checked by hand, the deadline, and the seed.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/federated.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

namespace {

strategies::Distribution uniform(double low, double high) {
  strategies::Distribution d;
  d.kind = strategies::Distribution::Kind::Uniform;
  d.low = low;
  d.high = high;
  return d;
}

strategies::Distribution lognormal(double median, double sigma) {
  strategies::Distribution d;
  d.kind = strategies::Distribution::Kind::LogNormal;
  d.value = median;
  d.sigma = sigma;
  return d;
}

/// Three clients, all sampled every round and all responding, with speeds and bandwidths drawn
/// from uniform ranges; a server link so wide that no transfer waits for another.
sim::FederatedInputs small_population() {
  sim::FederatedInputs in;
  in.spec.population = 3;
  in.spec.per_round = 3;
  in.spec.local_steps = 4;
  in.spec.rounds = 5;
  in.spec.seed = 7;
  in.spec.speed = uniform(0.5, 2);
  in.spec.upload_mbps = uniform(5, 20);
  in.spec.download_mbps = uniform(20, 100);
  in.spec.server_gbps = 1e6;
  in.client_step_s = 0.5;
  in.model_bytes = 40e6;
  in.samples_per_step = 32;
  in.aggregate_s_per_update = 0.01;
  in.server_update_s = 0.02;
  return in;
}

}  // namespace

TEST_CASE("the server's link shared max-min fairly, transfers coming and going", "[sim][federated]") {
  // 10 B/s shared by two transfers of 10 bytes from t = 0, capped at 3 and 100 B/s: rates 3 and 7.
  // The second ends at 10 / 7 = 1.428571 s; the first, still capped at 3, at 10 / 3 = 3.333333 s.
  const auto both = sim::fluid_finish_times({0, 0}, {10, 10}, {3, 100}, 10);
  CHECK_THAT(both[0], WithinRel(10.0 / 3, 1e-12));
  CHECK_THAT(both[1], WithinRel(10.0 / 7, 1e-12));
  // A transfer joining later: 20 bytes from t = 0 uncapped has the 10 B/s alone for 1 s (10 bytes
  // left), then shares 5 / 5 with one of 5 bytes starting at t = 1, which ends at t = 2; the first
  // has 5 bytes left at 10 B/s: t = 2.5 s.
  const auto staggered = sim::fluid_finish_times({0, 1}, {20, 5}, {100, 100}, 10);
  CHECK_THAT(staggered[0], WithinRel(2.5, 1e-12));
  CHECK_THAT(staggered[1], WithinRel(2.0, 1e-12));
  // No bytes: done as it starts.
  CHECK(sim::fluid_finish_times({4}, {0}, {1}, 10)[0] == 4);
}

TEST_CASE("a round lasts as long as its slowest sampled client's download, compute and upload, then the aggregation", "[sim][federated]") {
  const sim::FederatedInputs in = small_population();
  const auto clients = sim::draw_clients(in.spec);
  REQUIRE(clients.size() == 3);
  // By hand, from the drawn figures: client i takes 40e6 / download_i, then 4 steps × 0.5 s /
  // speed_i, then 40e6 / upload_i; the round ends with the slowest, then 3 updates × 0.01 s and
  // 0.02 s of server optimizer. Every round samples all three, so every round is the same.
  double slowest = 0;
  for (const auto& c : clients) {
    CHECK(c.speed >= 0.5);
    CHECK(c.speed <= 2);
    slowest = std::max(slowest, 40e6 / c.download + 4 * 0.5 / c.speed + 40e6 / c.upload);
  }
  const sim::FederatedRun run = sim::simulate_federated(in);
  REQUIRE(run.round_s.size() == 5);
  for (const double r : run.round_s) CHECK_THAT(r, WithinRel(slowest + 3 * 0.01 + 0.02, 1e-9));
  CHECK(run.late_fraction == 0);
  CHECK(run.unavailable_fraction == 0);
  // Each round aggregates 3 clients × 4 steps × 32 samples; the server sends and receives 3 models.
  CHECK(run.samples_per_round == 3 * 4 * 32);
  CHECK_THAT(run.server_bytes_per_round, WithinRel(6 * 40e6, 1e-12));

  // A deadline between the fastest and the slowest client: the round lasts the deadline, the late
  // updates are dropped (and counted), the aggregation covers the others.
  std::vector<double> finish;
  for (const auto& c : clients) finish.push_back(40e6 / c.download + 4 * 0.5 / c.speed + 40e6 / c.upload);
  std::sort(finish.begin(), finish.end());
  sim::FederatedInputs cut = in;
  cut.spec.deadline_s = (finish[0] + finish[2]) / 2;
  const auto in_time = static_cast<double>(std::count_if(finish.begin(), finish.end(), [&](double f) { return f <= cut.spec.deadline_s; }));
  const sim::FederatedRun bounded = sim::simulate_federated(cut);
  for (const double r : bounded.round_s) CHECK_THAT(r, WithinRel(cut.spec.deadline_s + in_time * 0.01 + 0.02, 1e-9));
  CHECK_THAT(bounded.late_fraction, WithinRel((3 - in_time) / 3, 1e-12));
  CHECK(bounded.samples_per_round == in_time * 4 * 32);
}

TEST_CASE("1000 clients, 100 a round, log-normal speeds: a seed gives the same rounds, another seed others", "[sim][federated]") {
  sim::FederatedInputs in;
  in.spec.population = 1000;
  in.spec.per_round = 100;
  in.spec.rounds = 50;
  in.spec.speed = lognormal(1, 0.5);
  in.spec.upload_mbps = lognormal(10, 0.7);
  in.spec.availability = uniform(0.8, 1);
  in.client_step_s = 1;
  in.model_bytes = 10e6;
  in.samples_per_step = 32;
  const sim::FederatedRun a = sim::simulate_federated(in), b = sim::simulate_federated(in);
  CHECK(a.round_s == b.round_s);
  CHECK(a.mean_s == b.mean_s);
  CHECK(a.p50_s <= a.p90_s);
  CHECK(a.p90_s <= a.p99_s);
  CHECK(a.p99_s == *std::max_element(a.round_s.begin(), a.round_s.end()));  // nearest rank of 50: the 50th
  // About a tenth of the sampled clients do not respond (availability uniform on [0.8, 1]).
  CHECK(a.unavailable_fraction > 0.05);
  CHECK(a.unavailable_fraction < 0.15);
  in.spec.seed = 2;
  CHECK(sim::simulate_federated(in).round_s != a.round_s);
  // A deadline bounds every round (it ends at the deadline at the latest, then aggregates).
  in.spec.deadline_s = a.p50_s;
  const sim::FederatedRun bounded = sim::simulate_federated(in);
  for (const double r : bounded.round_s) CHECK(r <= in.spec.deadline_s);
  CHECK(bounded.late_fraction > 0);
}

TEST_CASE("quantiles by nearest rank", "[sim][federated]") {
  // Of 1..10: the 50% quantile is the 5th value, 90% the 9th, 99% the 10th.
  const std::vector<double> v{10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  CHECK(sim::quantile(v, 0.5) == 5);
  CHECK(sim::quantile(v, 0.9) == 9);
  CHECK(sim::quantile(v, 0.99) == 10);
  CHECK(sim::quantile(v, 0) == 1);
}
