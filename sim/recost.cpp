#include "sim/recost.hpp"

#include "common/error.hpp"
#include "sim/weight_reuse.hpp"
#include "sim/work/work_cost.hpp"

namespace parasim::sim {

void recost(LoweredStep& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile) {
  TaskGraph& g = step.tasks;
  PARASIM_CHECK(cluster.device_count() == g.devices, "re-costing needs a cluster of as many devices as the step was lowered on");
  const WorkDurations durations = work_durations(step.work, plan, cluster, profile);
  for (TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == TaskKind::Compute && g.work_of(t) != kNoWork) g.duration_ps[t] = durations.of(g.owner[t], g.work_of(t)).count;
  price_weight_reuse(g, step.work, plan, cluster, profile);
}

}  // namespace parasim::sim
