#include "strategies/search/rank.hpp"

#include <algorithm>
#include <numeric>

namespace parasim::strategies::search {
namespace {

constexpr std::pair<Objective, const char*> kObjectives[] = {
    {Objective::Time, "time"}, {Objective::Throughput, "throughput"}, {Objective::Cost, "cost"}, {Objective::Memory, "memory"}};

}  // namespace

std::string_view to_string(Objective o) {
  for (const auto& [v, name] : kObjectives)
    if (v == o) return name;
  return "time";
}

const std::vector<std::string>& objective_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : kObjectives) out.emplace_back(entry.second);
    return out;
  }();
  return names;
}

std::optional<Objective> objective_from_string(std::string_view s) {
  for (const auto& [v, name] : kObjectives)
    if (s == name) return v;
  return std::nullopt;
}

std::string_view to_string(Fidelity f) {
  switch (f) {
    case Fidelity::Estimate: return "estimate";
    case Fidelity::Simulated: return "analytical";
    case Fidelity::Refined: return "refined";
  }
  return "estimate";
}

Fidelity RankedPlan::ranked_by() const { return simulated ? Fidelity::Simulated : Fidelity::Estimate; }

const Evaluation& RankedPlan::best() const { return simulated ? *simulated : estimate; }

double RankedPlan::cost_per_step(double price_per_device_hour) const {
  return best().step_time_s * static_cast<double>(candidate.devices) * price_per_device_hour / 3600.0;
}

bool better(const RankedPlan& a, const Evaluation& ea, const RankedPlan& b, const Evaluation& eb, Objective objective,
            double price_per_device_hour) {
  switch (objective) {
    case Objective::Time:
      if (ea.step_time_s != eb.step_time_s) return ea.step_time_s < eb.step_time_s;
      break;
    case Objective::Throughput:
      if (ea.tokens_per_s != eb.tokens_per_s) return ea.tokens_per_s > eb.tokens_per_s;
      break;
    case Objective::Cost: {
      // Money per step, from the figures given (not best()): the estimate phase ranks by estimates.
      const double ca = ea.step_time_s * static_cast<double>(a.candidate.devices) * price_per_device_hour;
      const double cb = eb.step_time_s * static_cast<double>(b.candidate.devices) * price_per_device_hour;
      if (ca != cb) return ca < cb;
      if (ea.step_time_s != eb.step_time_s) return ea.step_time_s < eb.step_time_s;
      break;
    }
    case Objective::Memory:
      if (a.headroom_bytes() != b.headroom_bytes()) return a.headroom_bytes() > b.headroom_bytes();
      if (ea.step_time_s != eb.step_time_s) return ea.step_time_s < eb.step_time_s;
      break;
  }
  return key_less(a.candidate, b.candidate);
}

void rank_plans(std::vector<RankedPlan>& plans, Objective objective, double price_per_device_hour) {
  std::sort(plans.begin(), plans.end(), [&](const RankedPlan& a, const RankedPlan& b) {
    const bool sa = a.simulated.has_value(), sb = b.simulated.has_value();
    if (sa != sb) return sa;
    return better(a, a.best(), b, b.best(), objective, price_per_device_hour);
  });
}

std::vector<std::size_t> mark_pareto_front(std::vector<RankedPlan>& plans, bool simulated_only) {
  // Sorted by time, then memory, then devices: a plan can only be dominated by one before it.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    plans[i].pareto = false;
    if (!simulated_only || plans[i].simulated) order.push_back(i);
  }
  const auto figures = [&](std::size_t i) {
    return std::make_tuple(plans[i].best().step_time_s, plans[i].memory.total_bytes(), plans[i].candidate.devices);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (figures(a) != figures(b)) return figures(a) < figures(b);
    return key_less(plans[a].candidate, plans[b].candidate);
  });
  std::vector<std::size_t> front;  // indices, in the sorted order
  for (const std::size_t i : order) {
    const auto [t, m, d] = figures(i);
    bool dominated = false;
    for (const std::size_t j : front) {
      const auto [tj, mj, dj] = figures(j);
      // j comes first, so tj ≤ t; it dominates when no worse on the other two (equal figures: the
      // first of two identical points stands for both).
      if (mj <= m && dj <= d) {
        dominated = true;
        break;
      }
    }
    plans[i].pareto = !dominated;
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace parasim::strategies::search
