// Every plan of a grid (tp × pp × dp × schedule × sequence parallel × ZeRO × recompute) on a small GPT,
// lowered and simulated on the flat machine, keeps the invariants that hold whatever the plan:
//  - the task graph runs to completion (no deadlock), to the same timeline in both engines;
//  - each device's time splits into parts that sum to the step time (result.hpp's TimeBreakdown);
//  - FLOPs are conserved: on the flat machine a kernel of F FLOPs takes F / 1e12 s (GEMMs at the fp16
//    peak, element-wise kernels at the fp32 peak, both 1e12 FLOP/s; memory never binds), so the
//    compute time summed over devices, times 1e12, is the FLOPs executed. Where no operator is
//    replicated over a tensor-parallel group (tp 1, or tp 2 with sequence parallel, which splits the
//    norms, dropouts and residual adds over the sequence), that must equal the step's hardware FLOPs:
//    every operator runs once per micro-batch and replica, split exactly by its sharding. (Gradient
//    accumulation is fused into the weight-gradient GEMMs here, so no extra pass adds compute.)
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flat_machine.hpp"
#include "models/transformer.hpp"
#include "sim/simulate.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;
using strategies::PlanSpec;
using strategies::Recompute;
using strategies::Schedule;

TEST_CASE("plan grid: every plan runs to completion and conserves time and FLOPs", "[sim][lower][engine][pipeline]") {
  const sim::Profile profile = testing::flat_profile(1e12, 1e12);
  int plans = 0;
  for (std::int64_t tp : {1, 2})
    for (bool sp : {false, true})
      for (std::int64_t pp : {1, 2})
        for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved1F1B})
          for (std::int64_t dp : {1, 2})
            for (int zero : {0, 1, 2, 3})
              for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full})
                for (bool blocking : {false, true})
                  for (bool overlap : {true, false}) {
                if (sp && tp == 1) continue;
                if (schedule == Schedule::Interleaved1F1B && pp == 1) continue;
                if (zero > 0 && dp == 1) continue;
                PlanSpec spec;
                spec.tp = tp;
                spec.pp = pp;
                spec.dp = dp;
                spec.sequence_parallel = sp;
                spec.schedule = schedule;
                spec.virtual_stages = schedule == Schedule::Interleaved1F1B ? 2 : 1;
                spec.zero = zero;
                spec.recompute = recompute;
                spec.grad_accumulation = strategies::GradAccumulation::Fused;
                spec.blocking_p2p = blocking;
                spec.overlap_grad_reduce = overlap;
                const std::int64_t devices = tp * pp * dp;
                models::TransformerConfig c;
                c.name = "small-gpt";
                c.layers = 4;
                c.hidden = 64;
                c.heads = 4;
                c.vocab = 128;
                c.seq_len = 32;
                c.batch = dp;  // micro-batch 1 × dp
                const models::Graph g = models::build_transformer(c);
                strategies::TrainingSpec training;
                training.global_batch = 4 * dp;  // 4 micro-batches
                INFO("tp " << tp << (sp ? " (sp)" : "") << ", pp " << pp << " " << strategies::to_string(schedule) << ", dp " << dp
                           << ", zero " << zero << ", recompute " << strategies::to_string(recompute)
                           << (blocking ? ", blocking sends" : "") << (overlap ? "" : ", no overlap"));
                const auto problem = strategies::check_plan(g, training, spec, devices);
                INFO((problem ? problem->message : std::string("plan ok")));
                REQUIRE_FALSE(problem);
                const strategies::Plan plan = strategies::make_plan(g, training, spec, devices);
                sim::Simulation s;
                REQUIRE_NOTHROW(s = sim::simulate(g, plan, testing::flat_cluster(devices, 1e9, 1e-6), profile));
                ++plans;
                // The event-loop engine gives the same timeline as the dataflow one simulate used.
                std::vector<Picoseconds> coll_ps;
                for (const auto& e : s.collectives) coll_ps.push_back(e.time);
                CHECK(sim::simulate_fifo_events(s.step.tasks, coll_ps) == s.timeline);
                const sim::Result& r = s.result;
                double compute_s = 0;
                for (const auto& d : r.per_device) {
                  double parts = d.breakdown.idle_s;
                  for (double x : d.breakdown.seconds) parts += x;
                  INFO("device " << d.device);
                  CHECK_THAT(parts, WithinRel(r.step_time_s, 1e-9));
                  for (auto cat : {sim::Category::Forward, sim::Category::Backward, sim::Category::Recompute})
                    compute_s += d.breakdown.seconds[static_cast<std::size_t>(cat)];
                }
                if (tp == 1 || sp) CHECK_THAT(compute_s * 1e12, WithinRel(r.hardware_flops_per_step, 1e-6));
                // Without sequence parallel the replicated (b, s, h) operators run on every tp rank: more.
                if (tp > 1 && !sp) CHECK(compute_s * 1e12 > r.hardware_flops_per_step);
              }
  // tp settings 3 (tp 1; tp 2; tp 2 with sp) × schedules 5 (pp 1: gpipe, 1f1b; pp 2: the three) ×
  // data settings 5 (dp 1; dp 2 with ZeRO 0–3) × recompute 3 × blocking sends 2 × overlap 2 = 900 plans.
  CHECK(plans == 900);
}
