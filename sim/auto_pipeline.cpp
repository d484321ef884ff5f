#include "sim/auto_pipeline.hpp"

#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "common/format.hpp"
#include "sim/collectives.hpp"
#include "strategies/local_shape.hpp"
#include "strategies/schedule.hpp"

namespace parasim::sim {
namespace {

using models::Graph;
using models::OpId;

/// Whether two layers' programs are the same: their operators pairwise of one name pattern and
/// alike (sharding_alike), their inputs from the same positions within the layer, or both from
/// outside it.
bool layers_alike(const Graph& g, const std::vector<OpId>& a, const std::vector<OpId>& b) {
  if (a.size() != b.size()) return false;
  auto position = [](const std::vector<OpId>& ops, OpId p) {
    return static_cast<std::size_t>(std::find(ops.begin(), ops.end(), p) - ops.begin());  // ops.size(): outside
  };
  for (std::size_t i = 0; i < a.size(); ++i) {
    const models::Operator& oa = g.op(a[i]);
    const models::Operator& ob = g.op(b[i]);
    if (sharding_group_pattern(oa.name) != sharding_group_pattern(ob.name) || !sharding_alike(oa, ob)) return false;
    const auto pa = g.producers(a[i]), pb = g.producers(b[i]);
    for (std::size_t k = 0; k < pa.size(); ++k)
      if (position(a, pa[k]) != position(b, pb[k])) return false;
  }
  return true;
}

}  // namespace

std::string AutoPipeline::outcome() const {
  double gap = 0;
  bool optimal = true;
  for (const auto& st : stages) {
    if (st.status != LinearSolution::Status::Optimal) optimal = false;
    gap = std::max(gap, st.gap);
  }
  if (optimal) return "optimal";
  return "feasible, gap " + format_number(gap * 100) + "%";
}

AutoPipeline auto_pipeline(const Graph& g, const strategies::Plan& plan, const Cluster& cluster, const DeviceProfile& device,
                           const AutoShardingOptions& options, const std::vector<std::int64_t>& stage_layers) {
  PARASIM_CHECK(plan.pp > 1 && plan.virtual_stages == 1 && plan.pp_axis >= 0, "auto_pipeline: a pipeline of one chunk a stage");
  const std::size_t L = g.layers().size();
  const auto stages = static_cast<std::size_t>(plan.pp);
  std::vector<std::vector<OpId>> layer_ops(L);
  for (OpId op : g.topological_order()) layer_ops[static_cast<std::size_t>(g.op(op).layer)].push_back(op);

  AutoPipeline out;
  std::vector<std::int64_t> in_flight(stages);
  for (std::size_t s = 0; s < stages; ++s)
    in_flight[s] = strategies::peak_in_flight(strategies::pipeline_order(plan.schedule, plan.pp, 1, plan.micro_batches, static_cast<std::int64_t>(s)));

  std::vector<std::int64_t> cut = stage_layers;
  if (cut.empty()) {
    // 1. Each layer alone, alike layers once.
    std::vector<std::size_t> solved;  // the layers whose programs were solved
    std::vector<AutoSharding> layer(L);
    std::vector<std::size_t> source(L);  // the layer whose program stands for layer l
    out.layer_seconds.assign(L, 0);
    std::vector<double> least_state(L, 0), least_activations(L, 0);
    const double m = static_cast<double>(std::max<std::int64_t>(plan.micro_batches, 1));
    for (std::size_t l = 0; l < L; ++l) {
      const auto it = std::find_if(solved.begin(), solved.end(), [&](std::size_t k) { return layers_alike(g, layer_ops[k], layer_ops[l]); });
      source[l] = it == solved.end() ? l : *it;
      if (it == solved.end()) {
        solved.push_back(l);
        AutoShardingOptions o = options;
        o.first_layer = static_cast<std::int32_t>(l);
        o.end_layer = static_cast<std::int32_t>(l + 1);
        o.bound_memory = false;
        o.in_flight = 1;
        layer[l] = auto_shard(g, plan, cluster, device, o);
        ++out.layer_programs;
      }
      const AutoSharding& a = layer[source[l]];
      out.layer_seconds[l] = std::max(0.0, a.objective_s - a.exposed_reductions_s) / m;
      least_state[l] = a.least_state_bytes;
      least_activations[l] = a.least_activation_bytes;
    }
    // 2. The boundaries: each tensor made in a layer ≤ l and used after l, once, at its layer's layout.
    const std::vector<std::int64_t> pipe = plan.mesh.group_of(0, std::vector<int>{plan.pp_axis});
    const std::vector<std::int64_t> pair{pipe[0], pipe[1]};
    std::vector<std::set<OpId>> crossing(L);
    for (OpId c = 0; c < g.op_count(); ++c)
      for (OpId p : g.producers(c)) {
        if (p >= g.op_count() || g.op(p).kind == models::OpKind::Input) continue;  // each stage reads the inputs it needs
        for (auto l = static_cast<std::size_t>(g.op(p).layer); l < static_cast<std::size_t>(g.op(c).layer); ++l) crossing[l].insert(p);
      }
    out.boundary_s.assign(L, 0);
    for (std::size_t l = 0; l + 1 < L; ++l) {
      double bytes = 0;
      for (OpId p : crossing[l]) {
        const auto pl = static_cast<std::size_t>(g.op(p).layer);
        // The producer's sharding in its layer's program (a layer alike to another: the operator at
        // the same position there).
        const auto& own = layer_ops[pl];
        const auto pos = static_cast<std::size_t>(std::find(own.begin(), own.end(), p) - own.begin());
        const OpId stand_in = layer_ops[source[pl]][pos];
        const models::Operator& o = g.op(p);
        bytes += strategies::local_elements(plan.mesh, layer[source[pl]].sharding[stand_in], o, o.output) *
                 static_cast<double>(models::bytes_of(o.output.dtype));
      }
      // The activation forward, its gradient back.
      out.boundary_s[l] = 2 * collective_time(cluster, CollectiveKind::SendRecv, pair, bytes).time.seconds();
    }
    // 3. The cut.
    strategies::LayerCostTable table;
    table.seconds.push_back(out.layer_seconds);
    table.boundary_s = out.boundary_s;
    const double usable = device.usable_memory_bytes();
    std::vector<double> state_prefix(L + 1, 0), activation_prefix(L + 1, 0);
    for (std::size_t l = 0; l < L; ++l) {
      state_prefix[l + 1] = state_prefix[l] + least_state[l];
      activation_prefix[l + 1] = activation_prefix[l] + least_activations[l];
    }
    const auto fits = [&](std::size_t s, std::size_t i, std::size_t j) {
      return state_prefix[j] - state_prefix[i] + static_cast<double>(in_flight[s]) * (activation_prefix[j] - activation_prefix[i]) <= usable;
    };
    const auto chosen = strategies::cut_pipeline(table, plan.pp, plan.micro_batches, fits);
    if (!chosen)
      throw PlanError("automatic sharding: no cut of the " + std::to_string(L) + " layers into " + std::to_string(plan.pp) +
                      " pipeline stages fits the devices' " + format_number(usable / (1 << 30)) + " GiB, however each stage is sharded");
    out.cut = *chosen;
    out.cut_chosen = true;
    cut = out.cut.stage_layers;
  } else {
    out.cut.stage_layers = cut;
    out.cut.stage_option.assign(cut.size(), 0);
  }
  PARASIM_CHECK(cut.size() == stages, "auto_pipeline: one layer count a stage");

  // 4. Each stage's program on its layers.
  std::int32_t first = 0;
  for (std::size_t s = 0; s < stages; ++s) {
    AutoShardingOptions o = options;
    o.first_layer = first;
    o.end_layer = first + static_cast<std::int32_t>(cut[s]);
    o.in_flight = in_flight[s];
    o.bound_memory = true;
    try {
      out.stages.push_back(auto_shard(g, plan, cluster, device, o));
    } catch (const PlanError& e) {
      throw PlanError("pipeline stage " + std::to_string(s) + " (layers " + std::to_string(first) + " to " + std::to_string(o.end_layer - 1) +
                      "): " + e.what());
    }
    for (auto& a : out.stages.back().annotations) out.annotations.push_back(a);
    first = o.end_layer;
  }
  return out;
}

}  // namespace parasim::sim
