#include "strategies/search/space.hpp"

#include <algorithm>

namespace parasim::strategies::search {
namespace {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    out.push_back(d);
    if (d != n / d) out.push_back(n / d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The listed values that pass `ok`, or every candidate value that does when the list is empty.
template <class T, class Ok>
std::vector<T> values(const std::vector<T>& listed, const std::vector<T>& all, Ok ok) {
  std::vector<T> out;
  for (const T& v : listed.empty() ? all : listed)
    if (ok(v)) out.push_back(v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct ScheduleChoice {
  Schedule schedule;
  std::int64_t virtual_stages;
};

/// The default cp range: 1, and each power of two that divides `devices` with 2·cp dividing the
/// sequence and at least kMinContextTokens tokens per device.
std::vector<std::int64_t> default_cps(const ModelFacts& model, std::int64_t devices) {
  std::vector<std::int64_t> out{1};
  if (model.seq_len <= 0) return out;
  for (std::int64_t cp = 2; cp <= devices && devices % cp == 0; cp *= 2)
    if (model.seq_len % (2 * cp) == 0 && model.seq_len / cp >= kMinContextTokens) out.push_back(cp);
  return out;
}

}  // namespace

Candidate CandidateGroup::candidate(std::size_t variant) const {
  Candidate c = base;
  c.plan.zero = variants[variant].zero;
  c.plan.recompute = variants[variant].recompute;
  return c;
}

ModelFacts ModelFacts::of(const models::Graph& graph) {
  ModelFacts f;
  if (const auto& t = graph.transformer()) {
    f.transformer = true;
    f.layers = t->layers;
    f.experts = t->experts;
    f.experts_per_token = t->experts_per_token;
    f.seq_len = t->seq_len;
  } else {
    f.layers = static_cast<std::int64_t>(graph.layers().size());
  }
  return f;
}

std::vector<CandidateGroup> enumerate_groups(const SearchSpace& space, const ModelFacts& model, const TrainingSpec& training,
                                             const PlanSpec& base, std::int64_t devices_per_node) {
  std::vector<CandidateGroup> out;
  const std::vector<int> zero_all{0, 1, 2, 3};
  const std::vector<Recompute> recompute_all{Recompute::None, Recompute::Selective, Recompute::Full};
  const std::vector<Schedule> schedule_all{Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved1F1B};
  const auto recomputes = values(space.recompute, recompute_all, [](Recompute) { return true; });
  const auto schedules = values(space.schedule, schedule_all, [](Schedule) { return true; });
  const auto micro_batches = values(space.micro_batch, kDefaultMicroBatches, [](std::int64_t v) { return v >= 1; });

  for (const std::int64_t nodes : values(space.nodes, {}, [](std::int64_t v) { return v >= 1; })) {
    const std::int64_t devices = nodes * devices_per_node;
    // Tensor and context parallelism together: cp splits what tp leaves of each pipeline stage.
    std::vector<std::pair<std::int64_t, std::int64_t>> tp_cps;
    for (const std::int64_t tp : values(space.tp, divisors(devices), [&](std::int64_t v) { return v >= 1 && devices % v == 0; }))
      for (const std::int64_t cp : values(space.cp, default_cps(model, devices / tp),
                                          [&](std::int64_t v) { return v >= 1 && (devices / tp) % v == 0 && (v == 1 || model.seq_len > 0); }))
        tp_cps.emplace_back(tp, cp);
    for (const auto& [tp, cp] : tp_cps) {
      const auto pps = values(space.pp, divisors(devices / (tp * cp)),
                              [&](std::int64_t v) { return v >= 1 && (devices / (tp * cp)) % v == 0 && v <= model.layers; });
      for (const std::int64_t pp : pps) {
        const std::int64_t dp = devices / (tp * cp * pp);
        const auto eps = model.experts > 0 ? values(space.ep, divisors(dp),
                                                    [&](std::int64_t v) { return v >= 1 && dp % v == 0 && model.experts % v == 0; })
                                           : std::vector<std::int64_t>{1};
        for (const std::int64_t ep : eps) {
          for (const std::int64_t mb : micro_batches) {
            if (training.global_batch % (mb * dp) != 0) continue;
            const std::int64_t m = training.global_batch / (mb * dp);
            std::vector<ScheduleChoice> choices;
            for (const Schedule s : schedules) {
              if (s != Schedule::Interleaved1F1B) {
                choices.push_back({s, 1});
                continue;
              }
              if (pp == 1 || m % pp != 0) continue;
              for (std::int64_t v = 2; v <= space.max_virtual_stages; ++v)
                if (pp * v <= model.layers && (!model.transformer || model.layers % (pp * v) == 0)) choices.push_back({s, v});
            }
            const auto sps = values(space.sequence_parallel, {false, true}, [&](bool v) { return !v || (tp > 1 && model.transformer); });
            for (const ScheduleChoice& sc : choices) {
              for (const bool sp : sps) {
                CandidateGroup g;
                g.base.nodes = nodes;
                g.base.devices = devices;
                g.base.training = training;
                g.base.training.micro_batch = mb;
                g.base.plan = base;
                g.base.plan.tp = tp;
                g.base.plan.pp = pp;
                g.base.plan.dp = dp;
                g.base.plan.ep = ep;
                g.base.plan.cp = cp;
                // The scenario's routing imbalance is the busiest expert-parallel rank's; without
                // expert parallelism every device processes all routed tokens, balanced or not.
                // capped at the most one rank can receive, min(ep, e/k) (check_plan's bound), so a
                // stated imbalance never drops a candidate whose ep is smaller.
                g.base.plan.expert_imbalance =
                    ep > 1 ? std::min({base.expert_imbalance, static_cast<double>(ep),
                                       static_cast<double>(model.experts) / static_cast<double>(std::max<std::int64_t>(model.experts_per_token, 1))})
                           : 1.0;
                g.base.plan.schedule = sc.schedule;
                g.base.plan.virtual_stages = sc.virtual_stages;
                g.base.plan.sequence_parallel = sp;
                // The scenario's tensor-parallel overlap holds wherever it can: on candidates with
                // sequence parallelism.
                g.base.plan.tp_comm_overlap = base.tp_comm_overlap && sp;
                g.base.plan.fsdp = false;
                g.base.plan.stage_layers.clear();
                const auto zeros = dp > 1 ? values(space.zero, zero_all, [](int z) { return z >= 0 && z <= 3; }) : std::vector<int>{0};
                for (const int z : zeros)
                  for (const Recompute r : recomputes) g.variants.push_back({z, r});
                if (g.variants.empty()) continue;
                g.base.plan.zero = g.variants.front().zero;
                g.base.plan.recompute = g.variants.front().recompute;
                out.push_back(std::move(g));
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace parasim::strategies::search
