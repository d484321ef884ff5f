#include "sim/work/work_cost.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/cost_model.hpp"

namespace parasim::sim {

OpSeconds op_seconds(const StepWork& step, const strategies::Plan& plan, const DeviceProfile& device, double speed_factor) {
  const double m_batches = static_cast<double>(plan.micro_batches);
  double accumulate_passes = 0, accumulate_bytes_per_param = 0;  // passes per micro-batch, bytes per pass
  switch (plan.grad_accumulation) {
    case strategies::GradAccumulation::Fused: break;
    case strategies::GradAccumulation::Autograd:
      accumulate_passes = (m_batches - 1) / m_batches;
      // .grad += new: read both, write one, in the gradients' dtype (6 B at 16 bits, 12 B in fp32).
      accumulate_bytes_per_param = 3.0 * static_cast<double>(models::bytes_of(plan.grad_dtype));
      break;
    case strategies::GradAccumulation::Fp32Buffer:
      accumulate_passes = 1;
      accumulate_bytes_per_param = 10;
      break;
  }
  OpSeconds s;
  s.forward.resize(step.op_work.size());
  s.backward.resize(step.op_work.size());
  for (std::size_t op = 0; op < step.op_work.size(); ++op) {
    const OpWork& w = step.op_work[op];
    const OpCost c = op_cost(device, w);
    s.forward[op] = c.fwd_s / speed_factor;
    s.backward[op] = c.bwd_s / speed_factor;
    if (accumulate_passes > 0 && w.weights > 0) {
      const double params = w.weight_elements;
      // One addition per parameter per pass.
      s.backward[op] += kernel_seconds(device, models::OpClass::MemoryBound, plan.precision, params * accumulate_passes,
                                       params * accumulate_bytes_per_param * accumulate_passes, 0, 1) /
                        speed_factor;
    }
  }
  return s;
}

Picoseconds work_duration(const StepWork& step, WorkId work, const OpSeconds& seconds, const strategies::Plan& plan,
                          const DeviceProfile& device, double speed_factor) {
  const ComputeWork& cw = step.computes[work];
  if (cw.optimizer_stage >= 0) {
    // A fused, memory-bound update: about 12 FLOPs per parameter (Adam), the optimizer's bytes per
    // parameter moved (sim/cost_model.hpp).
    const double updated = step.stage_updated[static_cast<std::size_t>(cw.optimizer_stage)];
    const double bytes_per_param = optimizer_bytes_per_parameter(plan.optimizer, plan.precision, plan.grad_dtype);
    // Where the device's in-place update was measured: its rate at the bytes the update keeps in
    // play, the gradient read once and every other array read and written back in place (Adam in
    // fp32: 4 + 24/2 = 16 bytes a parameter; SGD with momentum: 4 + 16/2 = 12). Elsewhere the memory
    // curve's.
    const double in_play = (bytes_per_param + static_cast<double>(models::bytes_of(plan.grad_dtype))) / 2 * updated;
    double s = device.optimizer_bytes_per_s > 0
                   ? streamed_seconds(device.optimizer_bytes_per_s, device.optimizer_memory_efficiency, bytes_per_param * updated, in_play) +
                         device.kernel_launch_overhead_s
                   : kernel_seconds(device, models::OpClass::MemoryBound, plan.precision, 12 * updated, bytes_per_param * updated, 0, 1);
    // Where the device's Adam arithmetic was measured (a CPU's square roots and divisions), it may
    // bound an Adam step instead; SGD's multiply-adds stay memory-bound.
    const bool adam = plan.optimizer == strategies::Optimizer::Adam || plan.optimizer == strategies::Optimizer::AdamW;
    if (adam && device.optimizer_flops_per_s > 0) s = std::max(s, 12 * updated / device.optimizer_flops_per_s + device.kernel_launch_overhead_s);
    return Picoseconds::from_seconds(s / speed_factor);
  }
  double s = 0;
  for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) {
    const OpPass& p = step.ops[k];
    s += p.pass == Pass::Backward ? seconds.backward[p.op] : seconds.forward[p.op];
  }
  return Picoseconds::from_seconds(s);
}

WorkDurations work_durations(const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile) {
  WorkDurations out;
  out.class_of.resize(cluster.devices.size());
  std::vector<std::pair<std::string, double>> classes;
  for (const auto& d : cluster.devices) {
    const auto key = std::make_pair(d.figures(), d.speed_factor);
    auto it = std::find(classes.begin(), classes.end(), key);
    if (it == classes.end()) {
      classes.push_back(key);
      it = classes.end() - 1;
    }
    out.class_of[static_cast<std::size_t>(d.id)] = static_cast<std::size_t>(it - classes.begin());
  }
  for (const auto& [kind, speed] : classes) {
    const DeviceProfile& dev = profile.device(kind);
    out.launch_s.push_back(dev.kernel_launch_overhead_s);
    const OpSeconds seconds = op_seconds(step, plan, dev, speed);
    auto& durations = out.of_class.emplace_back();
    durations.reserve(step.computes.size());
    for (WorkId w = 0; w < step.computes.size(); ++w) durations.push_back(work_duration(step, w, seconds, plan, dev, speed));
  }
  return out;
}

}  // namespace parasim::sim
