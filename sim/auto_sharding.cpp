#include "sim/auto_sharding.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "sim/work/layout.hpp"
#include "sim/work/op_work.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/memory.hpp"
#include "strategies/propagation.hpp"
#include "strategies/stage_weights.hpp"

namespace parasim::sim {
namespace {

using models::Graph;
using models::OpId;
using models::Operator;
using strategies::DimSharding;
using strategies::OpSharding;

/// The ILP's objective is in microseconds, so that CBC's absolute tolerances (1e-6 and up) sit far
/// below any difference between candidates.
constexpr double kObjectiveScale = 1e6;

/// "layers.17.mlp.fc1" → "layers.*.mlp.fc1": the number between dots that names a layer.
std::string group_pattern(const std::string& name) {
  std::string out;
  std::size_t i = 0;
  while (i < name.size()) {
    const bool at_segment = i == 0 || name[i - 1] == '.';
    std::size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    if (at_segment && j > i && (j == name.size() || name[j] == '.')) {
      out += '*';
      i = j;
    } else {
      out += name[i++];
    }
  }
  return out;
}

}  // namespace

bool sharding_alike(const Operator& a, const Operator& b) {
  if (a.kind != b.kind || a.variant != b.variant || a.dims != b.dims || a.extent_dims != b.extent_dims || a.inputs != b.inputs ||
      a.output != b.output || a.weights.size() != b.weights.size() || a.routing != b.routing)
    return false;
  for (std::size_t i = 0; i < a.weights.size(); ++i)
    if (a.weights[i].spec != b.weights[i].spec) return false;
  return true;
}

namespace {

bool padded(const Graph& g, const models::Dim& d) { return strategies::split_may_pad(g, d); }

/// Bounds on the program, so that no mesh or model makes it unboundedly large: the assignments
/// enumerated for one operator ((splittable dims + 1) ^ axes), and the variables in all.
constexpr double kMaxAssignments = 4096;
constexpr double kMaxVariables = 2e6;

/// Every candidate sharding of `o`: each axis on one splittable loop dim or on none.
std::vector<OpSharding> candidates_of(const Graph& g, const Operator& o, const strategies::DeviceMesh& mesh, const std::vector<int>& axes) {
  if (o.kind == models::OpKind::Input) return {OpSharding{}};
  std::vector<int> dims;  // splittable loop dims
  for (std::size_t k = 0; k < o.dims.size(); ++k)
    if (o.dims[k].splittable && o.dims[k].size > 1) dims.push_back(static_cast<int>(k));
  if (std::pow(static_cast<double>(dims.size() + 1), static_cast<double>(axes.size())) > kMaxAssignments)
    throw PlanError("automatic sharding: operator \"" + o.name + "\" has " + std::to_string(dims.size()) + " splittable dims, so " +
                    std::to_string(dims.size() + 1) + "^" + std::to_string(axes.size()) + " candidate shardings on a mesh of " +
                    std::to_string(axes.size()) + " axes, more than " + format_number(kMaxAssignments) + "; use a mesh of fewer axes");
  std::vector<OpSharding> out;
  std::vector<int> choice(axes.size(), -1);  // per axis: index into dims, or -1
  for (;;) {
    OpSharding sh;
    bool valid = true;
    for (int k : dims) {
      std::vector<int> on;
      std::int64_t parts = 1;
      for (std::size_t a = 0; a < axes.size(); ++a)
        if (choice[a] >= 0 && dims[static_cast<std::size_t>(choice[a])] == k) {
          on.push_back(axes[a]);
          parts *= mesh.axes[static_cast<std::size_t>(axes[a])].size;
        }
      if (on.empty()) continue;
      const models::Dim& d = o.dims[static_cast<std::size_t>(k)];
      if (d.size % parts != 0 && !padded(g, d)) valid = false;
      if (d.size < parts) valid = false;
      sh.dims.push_back(DimSharding{d.name, std::move(on)});
    }
    if (valid) out.push_back(std::move(sh));
    // Next assignment (an odometer over axes, each over -1 … dims − 1).
    std::size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++choice[a] < static_cast<int>(dims.size())) break;
      choice[a] = -1;
    }
    if (a == axes.size()) break;
  }
  return out;
}

std::string sharding_text(const strategies::DeviceMesh& mesh, const OpSharding& sh) {
  if (sh.dims.empty()) return "whole";
  std::string out;
  for (const auto& d : sh.dims) {
    out += (out.empty() ? "" : " ") + d.dim + ":";
    for (std::size_t i = 0; i < d.axes.size(); ++i) out += (i ? "×" : "") + mesh.axes[static_cast<std::size_t>(d.axes[i])].name;
  }
  return out;
}

class Builder {
 public:
  Builder(const Graph& g, const strategies::Plan& plan, const Cluster& cluster, const DeviceProfile& device, const AutoShardingOptions& options)
      : g_(g), plan_(plan), cluster_(cluster), device_(device), bpp_(strategies::bytes_per_parameter(plan)), options_(options) {
    for (int a = 0; a < static_cast<int>(plan.mesh.axes.size()); ++a) {
      const auto& axis = plan.mesh.axes[static_cast<std::size_t>(a)];
      if (axis.role != strategies::AxisRole::Pipeline && axis.size > 1) axes_.push_back(a);
    }
    for (int a : {plan.dp_axis, plan.ep_axis, plan.cp_axis})
      if (a >= 0 && plan.mesh.axes[static_cast<std::size_t>(a)].size > 1) data_axes_.push_back(a);
    std::sort(data_axes_.begin(), data_axes_.end());
  }

  AutoSharding solve() {
    const AutoShardingOptions& options = options_;
    make_groups();
    LinearProgram lp;
    // s variables and their one-hot rows.
    std::vector<std::vector<double>> node_cost(groups_.size());
    // Per candidate: the state it holds (weights, gradients, optimizer) and one micro-batch's saved
    // activations; its memory is state + activations × the micro-batches in flight.
    std::vector<std::vector<double>> node_state(groups_.size()), node_activations(groups_.size()), node_memory(groups_.size());
    const double in_flight = ranged() ? static_cast<double>(std::max<std::int64_t>(options.in_flight, 1)) : 1.0;
    // Per graph layer, per s variable: its weight-gradient reductions and its last backward pass.
    const std::size_t layers = g_.layers().size();
    std::vector<std::map<int, double>> layer_reductions(layers), layer_backward(layers);
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& G = groups_[gi];
      G_first_.push_back(static_cast<int>(lp.cost.size()));
      node_cost[gi].assign(G.candidates.size(), 0);
      node_memory[gi].assign(G.candidates.size(), 0);
      node_state[gi].assign(G.candidates.size(), 0);
      node_activations[gi].assign(G.candidates.size(), 0);
      for (std::size_t i = 0; i < G.candidates.size(); ++i) {
        for (OpId op : G.ops) {
          const NodeSeconds n = node_seconds(op, G.candidates[i]);
          node_cost[gi][i] += n.paid;
          const auto layer = static_cast<std::size_t>(g_.op(op).layer);
          const int v = G_first_[gi] + static_cast<int>(i);
          if (n.reductions > 0) layer_reductions[layer][v] += n.reductions;
          if (n.last_backward > 0) layer_backward[layer][v] += n.last_backward;
          const auto [state, activations] = memory_bytes(op, G.candidates[i]);
          node_state[gi][i] += state;
          node_activations[gi][i] += activations;
        }
        node_memory[gi][i] = node_state[gi][i] + in_flight * node_activations[gi][i];
      }
      LinearProgram::Row one{{}, {}, 1, 1};
      for (std::size_t i = 0; i < G.candidates.size(); ++i) {
        one.index.push_back(static_cast<int>(lp.cost.size()));
        one.value.push_back(1);
        lp.cost.push_back(0);  // filled below, once the diagonal edges are in
        lp.binary.push_back(true);
      }
      lp.rows.push_back(std::move(one));
    }
    // The program's size before its costs are computed.
    {
      double variables = static_cast<double>(lp.cost.size());
      std::set<std::pair<std::size_t, std::size_t>> seen;
      for (OpId c = 0; c < g_.op_count(); ++c)
        for (OpId p : g_.producers(c))
          if (in_range(c) && in_range(p) && g_.op(p).kind != models::OpKind::Input && seen.insert({group_of_[p], group_of_[c]}).second)
            variables += static_cast<double>(groups_[group_of_[p]].candidates.size() * groups_[group_of_[c]].candidates.size());
      if (variables > kMaxVariables)
        throw PlanError("automatic sharding: the integer program would have " + format_number(variables) + " variables, more than " +
                        format_number(kMaxVariables) + "; use a mesh of fewer axes");
    }
    // Edges, by pair of groups: the cost matrix of one edge × how many edges the pair has.
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<double>>> pairs;
    for (OpId c = 0; c < g_.op_count(); ++c) {
      const Operator& co = g_.op(c);
      if (co.routing || !in_range(c)) continue;  // token routing moves rows by all-to-all, whatever the layouts
      const auto producers = g_.producers(c);
      for (std::size_t slot = 0; slot < producers.size(); ++slot) {
        const OpId p = producers[slot];
        if (g_.op(p).kind == models::OpKind::Input) continue;  // the lowering reads inputs where they are
        if (!in_range(p)) continue;  // from an earlier stage: its layout there is that stage's choice
        const std::size_t gp = group_of_[p], gc = group_of_[c];
        const auto matrix = edge_seconds(p, c, slot);
        if (gp == gc) {
          for (std::size_t i = 0; i < matrix.size(); ++i) node_cost[gp][i] += matrix[i][i];
          continue;
        }
        auto [it, fresh] = pairs.try_emplace({gp, gc}, matrix);
        if (!fresh)
          for (std::size_t i = 0; i < matrix.size(); ++i)
            for (std::size_t j = 0; j < matrix[i].size(); ++j) it->second[i][j] += matrix[i][j];
      }
    }
    for (const auto& [key, m] : pairs) {
      const auto [gp, gc] = key;
      const std::size_t np = groups_[gp].candidates.size(), nc = groups_[gc].candidates.size();
      // A side with one candidate makes the edge a node cost of the other.
      if (np == 1) {
        for (std::size_t j = 0; j < nc; ++j) node_cost[gc][j] += m[0][j];
        continue;
      }
      if (nc == 1) {
        for (std::size_t i = 0; i < np; ++i) node_cost[gp][i] += m[i][0];
        continue;
      }
      const int first = static_cast<int>(lp.cost.size());
      pair_first_[key] = first;
      std::vector<LinearProgram::Row> row_sum(np), col_sum(nc);
      for (std::size_t i = 0; i < np; ++i) row_sum[i] = {{G_first_[gp] + static_cast<int>(i)}, {-1}, 0, 0};
      for (std::size_t j = 0; j < nc; ++j) col_sum[j] = {{G_first_[gc] + static_cast<int>(j)}, {-1}, 0, 0};
      for (std::size_t i = 0; i < np; ++i)
        for (std::size_t j = 0; j < nc; ++j) {
          const int v = first + static_cast<int>(i * nc + j);
          lp.cost.push_back(m[i][j] * kObjectiveScale);
          lp.binary.push_back(false);
          row_sum[i].index.push_back(v), row_sum[i].value.push_back(1);
          col_sum[j].index.push_back(v), col_sum[j].value.push_back(1);
        }
      for (auto& r : row_sum) lp.rows.push_back(std::move(r));
      for (auto& r : col_sum) lp.rows.push_back(std::move(r));
    }
    // The weight-gradient reductions run in buckets, in order, as the last micro-batch's backward pass
    // completes each layer (the lowering's gradient buckets on one stream), from the last layer to the
    // first: those of layer k and every layer before it start no sooner than layer k's backward ends,
    // and only the backward of the layers before k runs beside them. So the step pays
    //   z = max(0, max_k (Σ_{l ≤ k} reductions_l − Σ_{l < k} backward_l)),
    // linear rows z ≥ … for each layer k holding weights (layers in forward order).
    z_ = static_cast<int>(lp.cost.size());
    lp.cost.push_back(kObjectiveScale);
    lp.binary.push_back(false);
    lp.upper.assign(lp.cost.size(), 1.0);
    lp.upper.back() = 1e30;
    {
      std::map<int, double> reductions, backward;  // Σ_{l ≤ k} reductions_l and Σ_{l < k} backward_l
      for (std::size_t k = 0; k < layers; ++k) {
        for (const auto& [v, r] : layer_reductions[k]) reductions[v] += r;
        if (!layer_reductions[k].empty()) {
          std::map<int, double> coeff;
          for (const auto& [v, r] : reductions) coeff[v] -= r;
          for (const auto& [v, b] : backward) coeff[v] += b;
          LinearProgram::Row row{{z_}, {1.0}, 0, 1e300};
          for (const auto& [v, c] : coeff)
            if (c != 0) row.index.push_back(v), row.value.push_back(c);
          exposed_rows_.push_back(coeff);
          lp.rows.push_back(std::move(row));
        }
        for (const auto& [v, b] : layer_backward[k]) backward[v] += b;
      }
    }
    // The whole graph's memory is an average over its pp stages; one stage's is its own.
    LinearProgram::Row memory{{}, {}, -1e300, device_.usable_memory_bytes() * (ranged() ? 1.0 : static_cast<double>(plan_.pp))};
    for (std::size_t gi = 0; gi < groups_.size(); ++gi)
      for (std::size_t i = 0; i < groups_[gi].candidates.size(); ++i) {
        const int v = G_first_[gi] + static_cast<int>(i);
        lp.cost[static_cast<std::size_t>(v)] = node_cost[gi][i] * kObjectiveScale;
        memory.index.push_back(v);
        memory.value.push_back(node_memory[gi][i]);
      }
    lp.rows.push_back(std::move(memory));
    const double budget = lp.rows.back().upper;

    // A choice (a candidate per group) as a full solution vector: its s, and its edges' e at the
    // pairs it picks.
    auto solution_of = [&](const std::vector<std::size_t>& choice) {
      std::vector<double> x(lp.cost.size(), 0);
      for (std::size_t gi = 0; gi < groups_.size(); ++gi) x[static_cast<std::size_t>(G_first_[gi]) + choice[gi]] = 1;
      for (const auto& [key, first] : pair_first_)
        x[static_cast<std::size_t>(first) + choice[key.first] * groups_[key.second].candidates.size() + choice[key.second]] = 1;
      double exposed = 0;
      for (const auto& coeff : exposed_rows_) {
        double v = 0;
        for (const auto& [var, c] : coeff) v -= c * x[static_cast<std::size_t>(var)];
        exposed = std::max(exposed, v);
      }
      x[static_cast<std::size_t>(z_)] = exposed;
      return x;
    };
    auto choice_of = [&](const std::vector<double>& x) {
      std::vector<std::size_t> choice(groups_.size(), 0);
      for (std::size_t gi = 0; gi < groups_.size(); ++gi)
        for (std::size_t i = 0; i < groups_[gi].candidates.size(); ++i)
          if (x[static_cast<std::size_t>(G_first_[gi]) + i] > 0.5) choice[gi] = i;
      return choice;
    };
    auto memory_of = [&](const std::vector<std::size_t>& choice) {
      double m = 0;
      for (std::size_t gi = 0; gi < groups_.size(); ++gi) m += node_memory[gi][choice[gi]];
      return m;
    };
    auto objective_of = [&](const std::vector<std::size_t>& choice) {
      const std::vector<double> x = solution_of(choice);
      double v = 0;
      for (std::size_t i = 0; i < x.size(); ++i) v += lp.cost[i] * x[i];
      return v;
    };

    AutoSharding out;
    const auto start = std::chrono::steady_clock::now();
    auto left = [&] {
      return std::max(0.01, options.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    // Each group's candidate of least memory: if that does not fit, nothing does.
    std::vector<std::size_t> least(groups_.size(), 0);
    for (std::size_t gi = 0; gi < groups_.size(); ++gi)
      for (std::size_t i = 1; i < groups_[gi].candidates.size(); ++i)
        if (node_memory[gi][i] < node_memory[gi][least[gi]]) least[gi] = i;
    {
      double state = 0, activations = 0;
      for (std::size_t gi = 0; gi < groups_.size(); ++gi) state += node_state[gi][least[gi]], activations += node_activations[gi][least[gi]];
      out.least_state_bytes = state;
      out.least_activation_bytes = activations;
    }
    if (options.bound_memory && memory_of(least) > budget)
      throw PlanError("automatic sharding: no sharding of the model on the mesh fits the devices' " +
                      format_number(device_.usable_memory_bytes() / (1 << 30)) + " GiB: the least memory any takes is " +
                      format_number(memory_of(least) / static_cast<double>(plan_.pp) / (1 << 30)) + " GiB a device");
    // 1. The program without its memory row: where its optimum fits, it is the optimum.
    LinearProgram free = lp;
    free.rows.pop_back();
    free.start = solution_of(least);
    LinearSolution sol = solve_linear_program(free, left());
    std::vector<std::size_t> best = least;
    bool done = false;
    if (sol.status == LinearSolution::Status::Optimal && (!options.bound_memory || memory_of(choice_of(sol.x)) <= budget)) {
      done = true;
    } else if (!options.bound_memory) {
      if (sol.x.empty()) {  // nothing within the limit: the least-memory start stands
        sol.x = solution_of(least);
        sol.objective = objective_of(least);
        sol.status = LinearSolution::Status::Feasible;
      }
    } else {
      // 2. Memory priced instead of bounded (a Lagrangian relaxation): minimise time + λ·memory; the
      // fitting optimum of least time over a bisection on λ starts the bounded program.
      if (!sol.x.empty() && memory_of(choice_of(sol.x)) <= budget) best = choice_of(sol.x);
      const double base = std::max(std::abs(sol.objective), 1.0);
      auto penalised = [&](double lambda) -> std::optional<std::vector<std::size_t>> {
        LinearProgram priced = free;
        for (std::size_t gi = 0; gi < groups_.size(); ++gi)
          for (std::size_t i = 0; i < groups_[gi].candidates.size(); ++i)
            priced.cost[static_cast<std::size_t>(G_first_[gi]) + i] += lambda * node_memory[gi][i];
        priced.start = solution_of(best);
        const LinearSolution p = solve_linear_program(priced, left());
        if (p.x.empty()) return std::nullopt;
        return choice_of(p.x);
      };
      auto consider = [&](const std::vector<std::size_t>& c) {
        if (memory_of(c) <= budget && objective_of(c) < objective_of(best)) best = c;
        return memory_of(c) <= budget;
      };
      double lo = 0, hi = base / budget;
      for (int i = 0; i < 24 && left() > 0.05; ++i, hi *= 4) {
        const auto c = penalised(hi);
        if (c && consider(*c)) break;
        lo = hi;
      }
      for (int i = 0; i < 8 && left() > 0.05; ++i) {
        const double mid = (lo + hi) / 2;
        const auto c = penalised(mid);
        if (c && consider(*c)) hi = mid;
        else lo = mid;
      }
      // 3. The bounded program, from that start, with the time left.
      lp.start = solution_of(best);
      sol = solve_linear_program(lp, left());
      if (sol.x.empty()) {
        // Nothing better within the limit: the start stands, its gap unknown below the LP bound.
        sol.x = lp.start;
        sol.objective = objective_of(best);
        sol.status = LinearSolution::Status::Feasible;
      }
    }
    out.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.status = sol.status;
    if (done) out.status = LinearSolution::Status::Optimal;
    if (sol.status == LinearSolution::Status::Infeasible)
      throw PlanError("automatic sharding: no sharding of the model on the mesh fits the devices' " +
                      format_number(device_.usable_memory_bytes() / (1 << 30)) + " GiB (the integer program is infeasible)");
    out.objective_s = sol.objective / kObjectiveScale;
    out.bound_s = sol.bound / kObjectiveScale;
    out.gap = sol.gap();
    out.exposed_reductions_s = sol.x[static_cast<std::size_t>(z_)];
    out.groups = groups_.size();
    out.variables = lp.cost.size();
    out.constraints = lp.rows.size();
    out.sharding.resize(g_.op_count());
    for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
      const Group& G = groups_[gi];
      out.candidates += G.candidates.size();
      std::size_t chosen = 0;
      for (std::size_t i = 0; i < G.candidates.size(); ++i)
        if (sol.x[static_cast<std::size_t>(G_first_[gi]) + i] > 0.5) chosen = i;
      for (OpId op : G.ops) out.sharding[op] = G.candidates[chosen];
      out.state_bytes += node_state[gi][chosen];
      out.activation_bytes += node_activations[gi][chosen];
      // A group of one is named by its operator; a larger one by its pattern and its kind.
      const Operator& first = g_.op(G.ops.front());
      const std::string name = G.ops.size() == 1 ? first.name : G.pattern + " (" + std::string(models::to_string(first.kind)) + ")";
      out.choices.push_back({name, G.ops.size(), G.candidates.size(), sharding_text(plan_.mesh, G.candidates[chosen])});
    }
    for (OpId op = 0; op < g_.op_count(); ++op) {
      const Operator& o = g_.op(op);
      if (o.kind == models::OpKind::Input || !in_range(op)) continue;
      strategies::ShardingAnnotation a;
      a.target = strategies::AnnotationTarget::Operator;
      a.pattern = o.name;
      a.pointer = "/plan/auto_sharding";
      for (const auto& d : o.dims) {
        std::vector<std::string> names;
        for (int ax : out.sharding[op].axes_of(d.name)) names.push_back(plan_.mesh.axes[static_cast<std::size_t>(ax)].name);
        a.dims.emplace_back(d.name, std::move(names));
      }
      out.annotations.push_back(std::move(a));
    }
    return out;
  }

 private:
  struct Group {
    std::string pattern;
    std::vector<OpId> ops;
    std::vector<OpSharding> candidates;
  };

  [[nodiscard]] bool ranged() const { return options_.end_layer >= 0; }
  [[nodiscard]] bool in_range(OpId op) const {
    const std::int32_t l = g_.op(op).layer;
    return !ranged() || (l >= options_.first_layer && l < options_.end_layer);
  }

  void make_groups() {
    group_of_.assign(g_.op_count(), 0);
    std::map<std::string, std::vector<std::size_t>> by_pattern;  // pattern → groups with it
    for (OpId op : g_.topological_order()) {
      const Operator& o = g_.op(op);
      if (!in_range(op)) continue;
      const std::string pattern = group_pattern(o.name);
      std::size_t found = groups_.size();
      for (std::size_t gi : by_pattern[pattern])
        if (sharding_alike(g_.op(groups_[gi].ops.front()), o)) found = gi;
      if (found == groups_.size()) {
        groups_.push_back(Group{pattern, {}, candidates_of(g_, o, plan_.mesh, axes_)});
        by_pattern[pattern].push_back(found);
      }
      groups_[found].ops.push_back(op);
      group_of_[op] = found;
    }
    // The first operator to hold each weight is the one whose memory and reduction count it.
    std::set<std::string> seen;
    const double weight_bytes = static_cast<double>(models::bytes_of(models::weight_dtype(plan_.precision)));
    for (OpId op : g_.topological_order())
      if (in_range(op))
        for (const auto& w : g_.op(op).weights)
          if (seen.insert(w.name).second) {
            weight_holder_.insert({op, w.name});
            gathered_bytes_ += g_.op(op).elements(w.spec) * weight_bytes;
          }
  }

  double collective_seconds(CollectiveKind kind, const std::vector<int>& axes, double bytes) {
    if (bytes <= 0 || axes.empty()) return 0;
    const auto key = std::make_tuple(kind, axes, bytes);
    if (auto it = collective_cache_.find(key); it != collective_cache_.end()) return it->second;
    const std::vector<std::int64_t> group = plan_.mesh.group_of(0, axes);
    const double s = collective_time(cluster_, kind, group, bytes).time.seconds();
    collective_cache_.emplace(key, s);
    return s;
  }

  /// One operator's seconds under a candidate: what the step always pays (its kernels for every
  /// micro-batch, its optimizer pass), its weight gradients' reductions, and the backward kernel time
  /// of the last micro-batch, under which the reductions run.
  struct NodeSeconds {
    double paid = 0, reductions = 0, last_backward = 0;
  };
  NodeSeconds node_seconds(OpId op, const OpSharding& sh) {
    const Operator& o = g_.op(op);
    if (o.kind == models::OpKind::Input) return {};
    const OpWork work = op_work(o, plan_.mesh, sh, plan_.precision, plan_.micro_batches, plan_.expert_imbalance);
    const OpCost c = op_cost(device_, work);
    NodeSeconds n;
    n.paid = (c.fwd_s + c.bwd_s) * static_cast<double>(plan_.micro_batches);
    n.last_backward = c.bwd_s;
    const double grad_bytes = static_cast<double>(models::bytes_of(plan_.grad_dtype));
    const double optimizer_bytes = optimizer_bytes_per_parameter(plan_.optimizer, plan_.precision, plan_.grad_dtype);
    for (const auto& w : o.weights) {
      if (!weight_holder_.count({op, w.name})) continue;
      const double elements = strategies::local_elements(plan_.mesh, sh, o, w.spec);
      const AxisSet axes = weight_grad_partial_axes(o, sh, w);
      // Reduced in the implementation's buckets, as the lowering does (sim/work/chunk_program.cpp,
      // gradient_bucket_kind): at a bucket's rate, without a latency a weight (a bucket amortises it
      // over its tensors); all-reduced, or with ZeRO 1–2 reduce-scattered.
      const double bucket = std::max(plan_.grad_bucket_bytes, 1.0);
      const bool zero = plan_.zero >= 1 && plan_.zero < 3;
      n.reductions += elements * grad_bytes *
                      collective_seconds(zero ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, axes, bucket) / bucket;
      // ZeRO shards a weight's update over its data-parallel replicas (strategies/stage_weights.hpp,
      // the lowering's own rule); ZeRO 1–2 then gathers the replicated weights after the optimizer
      // step (sim/lower/step_end.cpp): nothing runs beside it, unless overlap_param_gather moves it
      // under the next step's forward.
      const double replicas = plan_.zero >= 1 ? strategies::zero_replicas(plan_, sh, w) : 1.0;
      if (zero && replicas > 1 && !plan_.overlap_param_gather) {
        const double weight_bytes = static_cast<double>(models::bytes_of(models::weight_dtype(plan_.precision)));
        // One gather of all of them: at the rate of the program's weights gathered whole.
        const double all = std::max(gathered_bytes_, 1.0);
        n.paid += elements * weight_bytes * collective_seconds(CollectiveKind::AllGather, data_axes_, all) / all;
      }
      if (device_.memory_bandwidth_bytes_per_s > 0) n.paid += elements / replicas * optimizer_bytes / device_.memory_bandwidth_bytes_per_s;
    }
    return n;
  }

  /// (state, activations) in bytes: the weights it holds first with their gradients and optimizer
  /// state; one micro-batch's saved activations.
  std::pair<double, double> memory_bytes(OpId op, const OpSharding& sh) const {
    const Operator& o = g_.op(op);
    double state = 0;
    for (const auto& w : o.weights)
      if (weight_holder_.count({op, w.name}))
        state += strategies::local_elements(plan_.mesh, sh, o, w.spec) * (bpp_.weights + bpp_.gradients + bpp_.optimizer);
    double bytes = 0;
    // One micro-batch's saved activations (the lowering's pipeline keeps more in flight on the first
    // stages; the simulation's memory verdict counts them).
    for (int slot : o.saved_inputs)
      bytes += strategies::local_elements(plan_.mesh, sh, o, o.inputs[static_cast<std::size_t>(slot)]) *
               static_cast<double>(models::bytes_of(o.inputs[static_cast<std::size_t>(slot)].dtype));
    const double out = strategies::local_elements(plan_.mesh, sh, o, o.output);
    if (o.saved_output) bytes += out * static_cast<double>(models::bytes_of(o.output.dtype));
    bytes += out * o.saved_mask_bytes_per_element;
    return {state, bytes};
  }

  /// [producer candidate][consumer candidate] seconds of the edge's reshards, forward and backward.
  std::vector<std::vector<double>> edge_seconds(OpId p, OpId c, std::size_t slot) {
    const Operator& po = g_.op(p);
    const Operator& co = g_.op(c);
    std::size_t consumers = 0;
    for (auto [q, s] : g_.consumers(p)) {
      (void)s;
      consumers += g_.op(q).routing ? 0 : 1;
    }
    const double share = static_cast<double>(plan_.micro_batches) / static_cast<double>(std::max<std::size_t>(consumers, 1));
    const auto& cp = groups_[group_of_[p]].candidates;
    const auto& cc = groups_[group_of_[c]].candidates;
    const double out_bytes_per = static_cast<double>(models::bytes_of(po.output.dtype));
    const double in_bytes_per = static_cast<double>(models::bytes_of(co.inputs[slot].dtype));
    std::vector<std::vector<double>> m(cp.size(), std::vector<double>(cc.size(), 0));
    for (std::size_t i = 0; i < cp.size(); ++i) {
      const Layout out = output_layout(po, cp[i]);
      const Layout whole = without_partial(out);
      const double out_bytes = strategies::local_elements(plan_.mesh, cp[i], po, po.output) * out_bytes_per;
      for (std::size_t j = 0; j < cc.size(); ++j) {
        const double in_bytes = strategies::local_elements(plan_.mesh, cc[j], co, co.inputs[slot]) * in_bytes_per;
        double s = 0;
        for (const Reshard& r : reshard(out, input_layout(co, cc[j], slot), out_bytes, in_bytes, plan_.mesh))
          s += collective_seconds(r.kind, {r.axis}, r.bytes);
        for (const Reshard& r : reshard(input_grad_layout(co, cc[j], slot), whole, in_bytes, out_bytes, plan_.mesh))
          s += collective_seconds(r.kind, {r.axis}, r.bytes);
        m[i][j] = s * share;
      }
    }
    return m;
  }

  const Graph& g_;
  const strategies::Plan& plan_;
  const Cluster& cluster_;
  const DeviceProfile& device_;
  const strategies::BytesPerParameter bpp_;
  const AutoShardingOptions options_;
  std::vector<int> axes_;
  std::vector<Group> groups_;
  std::vector<std::size_t> group_of_;
  std::vector<int> G_first_;
  std::map<std::pair<std::size_t, std::size_t>, int> pair_first_;  ///< each coupled pair's first e variable
  std::vector<std::map<int, double>> exposed_rows_;  ///< the rows z ≥ −Σ coeff·x (seconds), by variable
  int z_ = -1;  ///< the variable of the reductions' exposed time
  std::vector<int> data_axes_;  ///< the axes ZeRO shards over and gathers along, outermost first
  double gathered_bytes_ = 0;  ///< the program's weights, whole: the size ZeRO's parameter gather is priced at
  std::set<std::pair<OpId, std::string>> weight_holder_;
  std::map<std::tuple<CollectiveKind, std::vector<int>, double>, double> collective_cache_;
};

}  // namespace

std::string sharding_group_pattern(const std::string& name) { return group_pattern(name); }

std::string AutoSharding::outcome() const {
  std::ostringstream o;
  o << to_string(status);
  if (status == LinearSolution::Status::Feasible) o << ", gap " << format_number(gap * 100) << "%";
  o << " (ILP: " << groups << " operator groups, " << candidates << " candidates, " << variables << " variables)";
  return o.str();
}

AutoSharding auto_shard(const Graph& g, const strategies::Plan& plan, const Cluster& cluster, const DeviceProfile& device,
                        const AutoShardingOptions& options) {
  return Builder(g, plan, cluster, device, options).solve();
}

}  // namespace parasim::sim
