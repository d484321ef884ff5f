#pragma once
/// The time of compute work on one kind of device: what the lowering gives each compute task, and
/// what re-costing (sim/recost.hpp) gives it again under another profile or speed.
#include <vector>

#include "common/sim_time.hpp"
#include "sim/cluster.hpp"
#include "sim/profile.hpp"
#include "sim/work/work.hpp"

namespace parasim::sim {

/// Seconds of every operator's passes on one device kind at one speed factor.
struct OpSeconds {
  std::vector<double> forward;   ///< per graph operator (a recomputation costs its forward)
  std::vector<double> backward;  ///< per graph operator, gradient accumulation included
};

/// Per-operator seconds of `step` on `device`, divided by `speed_factor` (a straggler's is < 1).
/// Gradient accumulation over micro-batches is a memory-bound pass over each weight's gradient
/// (strategies::GradAccumulation): the program is the same for every micro-batch, so autograd's
/// cost, paid from the second micro-batch on, is spread as (m − 1)/m of a pass.
[[nodiscard]] OpSeconds op_seconds(const StepWork& step, const strategies::Plan& plan, const DeviceProfile& device, double speed_factor);

/// The duration of compute work `work` of `step`: its operator passes' seconds summed in order, or
/// its stage's optimizer step.
[[nodiscard]] Picoseconds work_duration(const StepWork& step, WorkId work, const OpSeconds& seconds, const strategies::Plan& plan,
                                        const DeviceProfile& device, double speed_factor);

/// Task durations of a step's compute work for each class of device of a cluster (devices of the
/// same kind and speed factor share them).
struct WorkDurations {
  std::vector<std::size_t> class_of;               ///< per device
  std::vector<std::vector<Picoseconds>> of_class;  ///< [class][WorkId]
  std::vector<double> launch_s;                    ///< per class: the device's kernel launch overhead, seconds
  [[nodiscard]] double launch_of(std::int64_t device) const { return launch_s[class_of[static_cast<std::size_t>(device)]]; }
  [[nodiscard]] Picoseconds of(std::int64_t device, WorkId work) const {
    return of_class[class_of[static_cast<std::size_t>(device)]][work];
  }
};
[[nodiscard]] WorkDurations work_durations(const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile);

}  // namespace parasim::sim
