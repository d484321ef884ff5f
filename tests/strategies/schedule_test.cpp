// Pipeline schedules as data (strategies/schedule): the order of passes on each stage and the
// micro-batches whose activations a stage holds at once.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "strategies/schedule.hpp"

using namespace parasim::strategies;

namespace {

PipelineStep F(std::int32_t mb, std::int32_t chunk) { return PipelineStep{true, mb, chunk}; }
PipelineStep B(std::int32_t mb, std::int32_t chunk) { return PipelineStep{false, mb, chunk}; }

}  // namespace

TEST_CASE("schedule: the order of passes, written out", "[strategies][pipeline]") {
  SECTION("GPipe: every forward, then every backward") {
    CHECK(pipeline_order(Schedule::GPipe, 3, 1, 4, 1) == std::vector{F(0, 1), F(1, 1), F(2, 1), F(3, 1), B(0, 1), B(1, 1), B(2, 1), B(3, 1)});
  }
  SECTION("1F1B, p 3, m 4: stage 0 warms up with p − 1 = 2 forwards") {
    CHECK(pipeline_order(Schedule::OneFOneB, 3, 1, 4, 0) == std::vector{F(0, 0), F(1, 0), F(2, 0), B(0, 0), F(3, 0), B(1, 0), B(2, 0), B(3, 0)});
  }
  SECTION("1F1B, p 3, m 4: the last stage alternates from the start") {
    CHECK(pipeline_order(Schedule::OneFOneB, 3, 1, 4, 2) == std::vector{F(0, 2), B(0, 2), F(1, 2), B(1, 2), F(2, 2), B(2, 2), F(3, 2), B(3, 2)});
  }
  SECTION("interleaved 1F1B, p 2, v 2, m 4, stage 0 (Megatron-LM's order)") {
    // Stage 0 holds chunks 0 and 2. Warm-up: (p − 0 − 1)·2 + (v − 1)·p = 2 + 2 = 4 forwards. The k-th
    // forward runs local chunk (k mod p·v) div p on micro-batch (k div p·v)·p + k mod p:
    //   k = 0..7 → (0, c0) (1, c0) (0, c2) (1, c2) (2, c0) (3, c0) (2, c2) (3, c2);
    // the k-th backward visits the chunks in reverse: (0, c2) (1, c2) (0, c0) (1, c0) (2, c2) (3, c2)
    // (2, c0) (3, c0). After the warm-up one forward and one backward alternate.
    CHECK(pipeline_order(Schedule::Interleaved1F1B, 2, 2, 4, 0) ==
          std::vector{F(0, 0), F(1, 0), F(0, 2), F(1, 2),                                   // warm-up
                      F(2, 0), B(0, 2), F(3, 0), B(1, 2), F(2, 2), B(0, 0), F(3, 2), B(1, 0),  // steady
                      B(2, 2), B(3, 2), B(2, 0), B(3, 0)});                                  // cool-down
  }
}

TEST_CASE("schedule: every pass of every (micro-batch, chunk) appears once, forward before backward", "[strategies][pipeline]") {
  auto [schedule, p, v, m] = GENERATE(table<Schedule, std::int64_t, std::int64_t, std::int64_t>({
      {Schedule::GPipe, 4, 1, 6},
      {Schedule::OneFOneB, 4, 1, 2},
      {Schedule::OneFOneB, 4, 1, 9},
      {Schedule::Interleaved1F1B, 4, 2, 8},
      {Schedule::Interleaved1F1B, 3, 3, 6},
  }));
  for (std::int64_t stage = 0; stage < p; ++stage) {
    INFO(to_string(schedule) << " p " << p << " v " << v << " m " << m << " stage " << stage);
    const auto order = pipeline_order(schedule, p, v, m, stage);
    // m·v forwards and m·v backwards.
    CHECK(order.size() == static_cast<std::size_t>(2 * m * v));
    std::vector<int> state(static_cast<std::size_t>(m * p * v), 0);  // 0 none, 1 forward seen, 2 both
    for (const auto& s : order) {
      CHECK(s.chunk % p == stage);  // chunk c runs on stage c mod p
      auto& st = state[static_cast<std::size_t>(s.micro_batch * p * v + s.chunk)];
      CHECK(st == (s.forward ? 0 : 1));
      st = s.forward ? 1 : 2;
    }
    std::int64_t complete = 0;
    for (int st : state) complete += st == 2;
    CHECK(complete == m * v);
  }
}

TEST_CASE("schedule: activations in flight per stage", "[strategies][pipeline][memory]") {
  SECTION("GPipe holds all m micro-batches on every stage") {
    for (std::int64_t stage = 0; stage < 4; ++stage) CHECK(peak_in_flight(pipeline_order(Schedule::GPipe, 4, 1, 7, stage)) == 7);
  }
  SECTION("1F1B: stage i holds p − i (when m ≥ p)") {
    const std::int64_t p = GENERATE(2, 4, 8);
    const std::int64_t m = GENERATE(8, 16);
    // Stage i warms up with p − i − 1 forwards, then its next forward precedes the first backward:
    // p − i forwards live at once.
    for (std::int64_t i = 0; i < p; ++i) CHECK(peak_in_flight(pipeline_order(Schedule::OneFOneB, p, 1, m, i)) == p - i);
  }
  SECTION("1F1B with fewer micro-batches than stages holds all m") {
    // p 8, m 3: stage 0 would warm up with 7, but there are only 3.
    CHECK(peak_in_flight(pipeline_order(Schedule::OneFOneB, 8, 1, 3, 0)) == 3);
    CHECK(peak_in_flight(pipeline_order(Schedule::OneFOneB, 8, 1, 3, 6)) == 2);
  }
  SECTION("interleaved 1F1B: stage 0 holds p·v + p − 1 chunk-micro-batches (Narayanan et al. SC'21)") {
    auto [p, v, m] = GENERATE(table<std::int64_t, std::int64_t, std::int64_t>({{2, 2, 4}, {4, 2, 8}, {4, 3, 8}, {4, 2, 16}, {8, 2, 16}}));
    INFO("p " << p << " v " << v << " m " << m);
    // Stage s warms up with (p − s − 1)·2 + (v − 1)·p forwards; its next forward precedes its first
    // backward, so (p − s − 1)·2 + (v − 1)·p + 1 are live: for stage 0, p·v + p − 1 (e.g. p 4, v 2:
    // 11, i.e. p(1 + (p − 1)/(p·v)) = 5.5 micro-batches of v chunks each — Korthikanti et al. 2022 §4).
    // This needs m·v > the warm-up, i.e. m ≥ 2p for m a multiple of p.
    CHECK(peak_in_flight(pipeline_order(Schedule::Interleaved1F1B, p, v, m, 0)) == p * v + p - 1);
    for (std::int64_t s = 0; s < p; ++s) CHECK(peak_in_flight(pipeline_order(Schedule::Interleaved1F1B, p, v, m, s)) == (p - s - 1) * 2 + (v - 1) * p + 1);
  }
  SECTION("interleaved 1F1B with m = p: stage 0 runs all m·v forwards first") {
    // Warm-up (p − 1)·2 + (v − 1)·p = p·v + p − 2 ≥ m·v = p·v forwards: everything is in flight at once
    // (Megatron-LM treats m = p as all warm-up likewise). p 4, v 2: 8.
    CHECK(peak_in_flight(pipeline_order(Schedule::Interleaved1F1B, 4, 2, 4, 0)) == 8);
    // The last stage warms up with (v − 1)·p = 4 and then alternates: 5 live.
    CHECK(peak_in_flight(pipeline_order(Schedule::Interleaved1F1B, 4, 2, 4, 3)) == 5);
  }
}
