#pragma once
/// Re-costing: a lowered step's compute tasks timed again under another profile, or on a cluster
/// whose devices differ in kind or speed factor (a straggler), without lowering again. Each compute
/// task keeps its entry in the step's work table (TaskGraph::work), so its new duration is what the
/// lowering would have given it: the same work, timed by the same cost function (sim/work/work_cost.hpp).
/// Collectives are timed by the engine from the cluster it is given, so they need nothing here.
#include "sim/cluster.hpp"
#include "sim/lower.hpp"
#include "sim/profile.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// Sets every compute task's duration for `profile` and `cluster`. Preconditions: `step` was lowered
/// from `plan`, and `cluster` has the same device count as the cluster it was lowered on.
void recost(LoweredStep& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile);

}  // namespace parasim::sim
