#include "exec/compare.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "exec/kernels.hpp"
#include "sim/weight_reuse.hpp"
#include "sim/work/work_cost.hpp"

namespace parasim::exec {
namespace {

using sim::TaskId;
using sim::TaskKind;

double step_seconds(std::span<const RankRecord> records, std::size_t step) {
  std::int64_t end = 0;
  for (const auto& r : records)
    for (const std::int64_t e : r.steps[step].end_ns) end = std::max(end, e);
  return static_cast<double>(end) * 1e-9;
}

std::string comm_class(const sim::TaskGraph& g, TaskId t) {
  const auto kind = g.collectives[g.owner[t]].kind;
  return kind == sim::CollectiveKind::SendRecv ? std::string("pipeline send") : std::string(sim::to_string(kind));
}

}  // namespace

Comparison compare(const sim::Simulation& simulation, const models::Graph& graph, const strategies::Plan& plan, const sim::Profile& profile,
                   const sim::Cluster& cluster, std::span<const RankRecord> records) {
  const sim::TaskGraph& g = simulation.step.tasks;
  const sim::StepWork& work = simulation.step.work;
  PARASIM_CHECK(!records.empty() && static_cast<std::int64_t>(records.size()) == g.devices, "a record per rank");
  const std::size_t steps = records.front().steps.size();
  PARASIM_CHECK(steps >= 1, "at least one timed step");
  for (const auto& r : records) PARASIM_CHECK(r.steps.size() == steps, "every rank timed the same steps");

  Comparison c;
  c.ranks = static_cast<int>(records.size());
  for (std::size_t s = 0; s < steps; ++s) c.measured_step_s.push_back(step_seconds(records, s));
  std::vector<std::size_t> order(steps);
  for (std::size_t s = 0; s < steps; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.measured_step_s[a] < c.measured_step_s[b]; });
  c.median_step = order[(steps - 1) / 2];
  c.measured_median_s = c.measured_step_s[c.median_step];
  c.measured_min_s = c.measured_step_s[order.front()];
  c.measured_max_s = c.measured_step_s[order.back()];
  c.predicted_s = simulation.result.step_time_s;

  std::map<std::string, ClassFigure> by_name;
  std::vector<std::string> names;  // in order: kernel classes, communication as first met, idle
  auto figure = [&](const std::string& name) -> ClassFigure& {
    auto [it, fresh] = by_name.try_emplace(name);
    if (fresh) {
      it->second.name = name;
      names.push_back(name);
    }
    return it->second;
  };
  for (int k = 0; k < kKernelClassCount; ++k) figure(std::string(to_string(static_cast<KernelClass>(k))));
  const std::string optimizer(to_string(KernelClass::Optimizer));
  auto pass_class = [&](std::uint32_t k) {
    return k == kOptimizerPass ? optimizer : std::string(to_string(kernel_class(graph.op(work.ops[k].op), work.op_work[work.ops[k].op])));
  };

  // Predicted: each compute task's operator passes, timed by the cost model for its device; each
  // communication task's simulated duration on each device it occupies.
  std::map<std::int64_t, sim::OpSeconds> seconds_of;
  auto seconds_for = [&](std::int64_t device) -> const sim::OpSeconds& {
    auto [it, fresh] = seconds_of.try_emplace(device);
    if (fresh) {
      const auto& d = cluster.devices[static_cast<std::size_t>(device)];
      it->second = sim::op_seconds(work, plan, profile.device(d.figures()), d.speed_factor);
    }
    return it->second;
  };
  // Per operator pass, in order of first appearance: (op or kOptimizerPass, pass) → entry of c.ops.
  std::map<std::pair<std::uint32_t, int>, std::size_t> op_index;
  auto op_figure = [&](std::uint32_t k) -> OpFigure& {
    const bool update = k == kOptimizerPass;
    const std::uint32_t op = update ? kOptimizerPass : work.ops[k].op;
    const int pass = update ? 3 : static_cast<int>(work.ops[k].pass);
    auto [it, fresh] = op_index.try_emplace({op, pass}, c.ops.size());
    if (fresh) {
      OpFigure f;
      f.op = update ? "optimizer step" : graph.op(op).name;
      static const char* passes[] = {"forward", "recompute", "backward", "update"};
      f.pass = passes[pass];
      f.kernel_class = pass_class(k);
      c.ops.push_back(std::move(f));
    }
    return c.ops[it->second];
  };

  // Predicted: each compute task's operator passes, timed by the cost model for its device (per
  // class and per operator pass); each communication task's simulated duration on each device it
  // occupies.
  std::vector<Picoseconds> collective_ps;
  for (const auto& e : simulation.collectives) collective_ps.push_back(e.time);
  std::vector<double> predicted_busy(static_cast<std::size_t>(g.devices), 0.0);
  // What the cost model adds to the passes that read weights out of cache (sim/weight_reuse.hpp),
  // per task and pass, in task order.
  std::vector<std::tuple<TaskId, std::uint32_t, double>> reuse;
  sim::for_each_weight_reuse(g, work, plan, cluster, profile, [&](TaskId t, std::uint32_t k, double s) { reuse.emplace_back(t, k, s); });
  std::stable_sort(reuse.begin(), reuse.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::size_t next_reuse = 0;
  for (TaskId t = 0; t < g.task_count(); ++t) {
    if (g.kind[t] == TaskKind::Compute) {
      const std::int64_t device = g.owner[t];
      const sim::OpSeconds& seconds = seconds_for(device);
      const sim::ComputeWork& cw = work.computes[g.work_of(t)];
      // The task's span in the simulated timeline (end − start, as the measured side counts a
      // task), shared among its operator passes by their cost-model times: a task slowed beside a
      // collective or beside its host's other compute, or paying for operands out of cache, puts
      // that time in the classes of its passes.
      const double span = static_cast<double>(sim::task_finish_ps(simulation, collective_ps, t) - simulation.timeline.start_ps[t]) * 1e-12;
      std::vector<std::pair<std::uint32_t, double>> passes;
      if (cw.optimizer_stage >= 0) {
        const auto& d = cluster.devices[static_cast<std::size_t>(device)];
        passes.emplace_back(kOptimizerPass, sim::work_duration(work, g.work_of(t), seconds, plan, profile.device(d.figures()), d.speed_factor).seconds());
      } else {
        for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) {
          const sim::OpPass& p = work.ops[k];
          passes.emplace_back(k, p.pass == sim::Pass::Backward ? seconds.backward[p.op] : seconds.forward[p.op]);
        }
      }
      for (; next_reuse < reuse.size() && std::get<0>(reuse[next_reuse]) == t; ++next_reuse)
        for (auto& [k, s] : passes)
          if (k == std::get<1>(reuse[next_reuse])) s += std::get<2>(reuse[next_reuse]);
      double priced = 0;
      for (const auto& [k, s] : passes) priced += s;
      for (const auto& [k, s] : passes) {
        const double share = priced > 0 ? s / priced * span : 0;
        figure(pass_class(k)).predicted_s += share;
        op_figure(k).predicted_s += share;
      }
      predicted_busy[static_cast<std::size_t>(device)] += span;
    } else if (g.kind[t] == TaskKind::Load || g.kind[t] == TaskKind::Copy) {
      figure(g.kind[t] == TaskKind::Load ? "input load" : "input copy").predicted_s += static_cast<double>(g.duration_ps[t]) * 1e-12;
    } else if (g.kind[t] == TaskKind::Collective) {
      const double s = static_cast<double>(sim::task_finish_ps(simulation, collective_ps, t) - simulation.timeline.start_ps[t]) * 1e-12;
      std::int64_t scratch = 0;
      figure(comm_class(g, t)).predicted_s += s * static_cast<double>(g.devices_of(t, scratch).size());
    }
  }

  // Measured, in the median step: per class and per operator pass.
  for (const auto& r : records) {
    const RankStep& s = r.steps[c.median_step];
    for (std::size_t k = 0; k < s.pass_op.size(); ++k) {
      const double seconds = static_cast<double>(s.pass_ns[k]) * 1e-9;
      auto& f = figure(pass_class(s.pass_op[k]));
      f.measured_s += seconds;
      ++f.count;
      auto& o = op_figure(s.pass_op[k]);
      o.measured_s += seconds;
      ++o.count;
    }
    double busy = 0;
    for (std::size_t k = 0; k < s.task.size(); ++k) {
      const TaskId t = s.task[k];
      const double seconds = static_cast<double>(s.end_ns[k] - s.start_ns[k]) * 1e-9;
      if (g.kind[t] == TaskKind::Compute) {
        busy += seconds;
      } else if (g.kind[t] == TaskKind::Load || g.kind[t] == TaskKind::Copy) {
        auto& f = figure(g.kind[t] == TaskKind::Load ? "input load" : "input copy");
        f.measured_s += seconds;
        ++f.count;
      } else if (g.kind[t] == TaskKind::Collective) {
        auto& f = figure(comm_class(g, t));
        f.measured_s += seconds;
        ++f.count;
      }
    }
    figure("idle compute").measured_s += c.measured_median_s - busy;
    c.rank_compute_measured_s.push_back(busy);
  }
  c.rank_compute_predicted_s = predicted_busy;
  auto& idle = figure("idle compute");
  for (const double busy : predicted_busy) idle.predicted_s += c.predicted_s - busy;
  for (const auto& name : names) {
    const ClassFigure& f = by_name.at(name);
    if (f.measured_s > 0 || f.predicted_s > 0) c.classes.push_back(f);
  }
  return c;
}

sim::Simulation measured_simulation(const sim::Simulation& simulation, std::span<const RankRecord> records, std::size_t step) {
  sim::Simulation m = simulation;
  const std::size_t n = m.step.tasks.task_count();
  std::vector<std::int64_t> start(n, -1), finish(n, 0);
  for (const auto& r : records) {
    const RankStep& s = r.steps[step];
    for (std::size_t k = 0; k < s.task.size(); ++k) {
      const TaskId t = s.task[k];
      start[t] = std::max(start[t], s.start_ns[k] * 1000);
      finish[t] = std::max(finish[t], s.end_ns[k] * 1000);
    }
  }
  std::int64_t makespan = 0;
  for (std::size_t t = 0; t < n; ++t) {
    PARASIM_CHECK(start[t] >= 0, "every task ran on some rank");
    makespan = std::max(makespan, finish[t]);
  }
  m.timeline.start_ps = std::move(start);
  m.timeline.makespan = Picoseconds{makespan};
  m.finish_ps = std::move(finish);
  m.result.step_time_s = static_cast<double>(makespan) * 1e-12;
  return m;
}

}  // namespace parasim::exec
