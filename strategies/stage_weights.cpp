#include "strategies/stage_weights.hpp"

#include <map>
#include <set>
#include <string>

#include "strategies/local_shape.hpp"

namespace parasim::strategies {

double zero_replicas(const Plan& plan, const OpSharding& sh, const models::Weight& w) {
  // Replicas that reduce a weight's gradient, over which ZeRO shards it: data (and expert) and
  // context parallel ranks (Megatron-Core's distributed optimizer shards over dp × cp).
  double replicas = 1;
  for (int axis : {plan.dp_axis, plan.ep_axis, plan.cp_axis}) {
    if (axis < 0) continue;
    bool splits_weight = false;
    for (const auto& d : w.spec.dims)
      for (int a : sh.axes_of(d)) splits_weight |= (a == axis);
    if (!splits_weight) replicas *= static_cast<double>(plan.mesh.axes[static_cast<std::size_t>(axis)].size);
  }
  return replicas;
}

std::vector<StageWeight> stage_weights(const models::Graph& g, const Plan& plan) {
  std::vector<StageWeight> out;
  std::set<std::pair<std::int64_t, std::string>> seen;
  std::map<std::string, std::set<std::int64_t>> stages_of;
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    const std::int32_t chunk = plan.chunk_of_layer[static_cast<std::size_t>(o.layer)];
    const std::int64_t stage = plan.stage_of_chunk(chunk);
    const auto& sh = plan.sharding[id];
    for (const auto& w : o.weights) {
      stages_of[w.name].insert(stage);
      if (!seen.insert({stage, w.name}).second) continue;
      StageWeight sw;
      sw.stage = stage;
      sw.chunk = chunk;
      sw.op = id;
      sw.weight = &w;
      sw.local_elements = local_elements(plan.mesh, sh, o, w.spec);
      sw.zero_replicas = zero_replicas(plan, sh, w);
      out.push_back(sw);
    }
  }
  for (auto& sw : out) sw.shared_across_stages = stages_of[sw.weight->name].size() > 1;
  return out;
}

}  // namespace parasim::strategies
