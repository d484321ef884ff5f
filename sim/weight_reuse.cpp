#include "sim/weight_reuse.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "sim/cost_model.hpp"

namespace parasim::sim {

double weight_reuse_seconds(const DeviceProfile& device, double weight_bytes, double distance_bytes) {
  if (device.weight_reuse_bytes_per_s <= 0 || device.weight_reuse_efficiency.points.empty() || weight_bytes <= 0) return 0;
  return weight_bytes / device.weight_reuse_bytes_per_s * (1 / device.weight_reuse_efficiency.at(std::max(distance_bytes, 1.0)) - 1);
}

double memory_reuse_seconds(const DeviceProfile& device, double operand_bytes, double pass_bytes, double distance_bytes, bool written) {
  const EfficiencyCurve& curve = written ? device.memory_reuse_efficiency : device.memory_reuse_read_efficiency;
  if (device.memory_reuse_bytes_per_s <= 0 || curve.points.empty() || operand_bytes <= 0) return 0;
  // The calibration's pass moved its operand's bytes twice over (read and written) with it cold.
  const double cold = 2 * operand_bytes / (device.memory_reuse_bytes_per_s * curve.at(std::max(distance_bytes, 1.0)));
  const double warm = streamed_seconds(device.memory_bandwidth_bytes_per_s, device.memory_efficiency, 2 * operand_bytes, std::max(pass_bytes, 1.0));
  return std::max(0.0, cold - warm);
}

double weight_gradient_reuse_seconds(const DeviceProfile& device, double weight_bytes, double distance_bytes) {
  if (device.weight_reuse_backward_bytes_per_s <= 0 || device.weight_reuse_backward_efficiency.points.empty())
    return weight_reuse_seconds(device, weight_bytes, distance_bytes);
  if (weight_bytes <= 0) return 0;
  const double pair = weight_bytes / device.weight_reuse_backward_bytes_per_s *
                      (1 / device.weight_reuse_backward_efficiency.at(std::max(distance_bytes, 1.0)) - 1);
  return std::max(0.0, pair - weight_reuse_seconds(device, weight_bytes, distance_bytes));
}

void for_each_weight_reuse(const TaskGraph& g, const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                           const std::function<void(TaskId, std::uint32_t, double)>& visit) {
  const auto compute = std::find(g.streams.begin(), g.streams.end(), Stream::Compute);
  if (compute == g.streams.end()) return;
  const auto stream = static_cast<std::size_t>(compute - g.streams.begin());
  // Bundled profiles have no reuse figures: nothing to walk, nothing to allocate.
  const auto priced = [&](std::int64_t d) {
    const DeviceProfile& device = profile.device(cluster.devices[static_cast<std::size_t>(d)].figures());
    return device.weight_reuse_bytes_per_s > 0 || device.memory_reuse_bytes_per_s > 0;
  };
  bool any = false;
  for (std::int64_t d = 0; d < g.devices && !any; ++d) any = priced(d);
  if (!any) return;
  const double optimizer_bytes_per_param = optimizer_bytes_per_parameter(plan.optimizer, plan.precision, plan.grad_dtype);
  // The devices of a node share its last-level cache, and in a step they compute alike: while this
  // device's stream moves a byte, each of the others moves about one too.
  const auto sharing = static_cast<double>(std::max<std::int64_t>(1, cluster.devices_per_node));
  // Per operator: where its weights and its gradient were last touched (bytes moved so far).
  std::vector<double> last(step.op_work.size()), last_gradient(step.op_work.size());
  std::vector<models::OpId> held;  // the weight-holding operators the device's passes touched, by id
  // Per (operator, micro-batch): where its output and its output's gradient were last touched.
  const auto micro_batches = static_cast<std::size_t>(std::max<std::int64_t>(plan.micro_batches, 1));
  std::vector<double> last_out(step.op_work.size() * micro_batches), last_out_gradient(step.op_work.size() * micro_batches);
  for (std::int64_t d = 0; d < g.devices; ++d) {
    if (!priced(d)) continue;
    const DeviceProfile& device = profile.device(cluster.devices[static_cast<std::size_t>(d)].figures());
    const auto queue = g.queue_of(static_cast<std::size_t>(d) * g.stream_count() + stream);
    std::fill(last.begin(), last.end(), -1.0);
    std::fill(last_gradient.begin(), last_gradient.end(), -1.0);
    std::fill(last_out.begin(), last_out.end(), -1.0);
    std::fill(last_out_gradient.begin(), last_out_gradient.end(), -1.0);
    held.clear();
    double moved = 0;  // bytes the device's compute stream moved so far
    for (int walk = 0; walk < 2; ++walk) {
      for (const TaskId t : queue) {
        if (g.kind[t] != TaskKind::Compute || g.work_of(t) == kNoWork) continue;
        const ComputeWork& cw = step.computes[g.work_of(t)];
        if (cw.optimizer_stage >= 0) {
          // The update walks the weights in operator order, each parameter's arrays together.
          const double bytes = optimizer_bytes_per_param * step.stage_updated[static_cast<std::size_t>(cw.optimizer_stage)];
          double total = 0;
          for (const models::OpId op : held) total += step.op_work[op].weight_elements;
          double before = 0;
          for (const models::OpId op : held) {
            before += step.op_work[op].weight_elements;
            last[op] = last_gradient[op] = moved + std::min(1.0, total > 0 ? before / total : 1.0) * bytes;
          }
          moved += bytes;
          continue;
        }
        const auto mb = static_cast<std::size_t>(std::clamp<std::int64_t>(g.micro_batch[t], 0, static_cast<std::int64_t>(micro_batches) - 1));
        for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) {
          const OpPass& p = step.ops[k];
          const OpWork& w = step.op_work[p.op];
          const bool backward = p.pass == Pass::Backward;
          // The bytes the pass moves: its own, a backward's weight gradient, and a convolution's
          // patch matrix where the device writes one (im2col: several times the image's bytes).
          const double weight_bytes = w.weight_elements * static_cast<double>(models::bytes_of(w.dtype));
          const double pass_bytes = (backward ? w.bwd_bytes + weight_bytes : w.bytes) + patch_matrix_bytes(device, w, backward);
          // Activations in buffers of their own (exec/kernels.cpp): a matrix product, a convolution or
          // an element-wise operator reads its producer's output and writes its own (forward), reads
          // its output's gradient and writes its producer's (backward; a matrix product also reads the
          // saved input); each operand pays for the bytes moved since it was last touched.
          const bool gemm = w.cls == models::OpClass::Gemm, elementwise = w.cls == models::OpClass::MemoryBound && !w.exponential;
          const models::OpId from = step.first_producer.empty() ? SIZE_MAX : step.first_producer[p.op];
          if ((gemm || elementwise) && !(backward && !w.has_backward)) {
            const double mk = w.gemm_batch * w.gemm_m * w.gemm_k, mn = w.gemm_batch * w.gemm_m * w.gemm_n;
            const double in = gemm ? (w.convolution ? std::max(mk / std::max(w.conv_window, 1.0), w.gemm_k) : mk) : (backward ? w.bwd_bytes : w.bytes) / 8;
            const double out = gemm ? mn : in;
            const double floats = 4;  // the executor's activations are fp32
            // An element-wise pass has no arithmetic to hide a miss behind: where the profile has
            // figures for it, its operands move at the memory-bound pass's speed at their distance.
            const bool streamed = elementwise && device.memory_reuse_bytes_per_s > 0;
            const double priced_bytes = backward ? w.bwd_bytes : w.bytes;  // what the memory curve priced the pass at
            auto pay = [&](double count, double touched, bool written) {
              if (walk == 1 && touched >= 0) {
                const double distance = sharing * (moved - touched);
                const double s = streamed ? memory_reuse_seconds(device, count * floats, priced_bytes, distance, written)
                                          : weight_reuse_seconds(device, count * floats, distance);
                if (s > 0) visit(t, k, s);
              }
            };
            const std::size_t own = p.op * micro_batches + mb;
            const std::size_t src = from == SIZE_MAX ? SIZE_MAX : from * micro_batches + mb;
            if (!backward) {
              if (src != SIZE_MAX) pay(in, last_out[src], false);
              pay(out, last_out[own], true);
            } else {
              pay(out, last_out_gradient[own], false);
              if (src != SIZE_MAX) {
                if (gemm && !w.convolution) pay(in, last_out[src], false);
                pay(in, last_out_gradient[src], true);
              }
            }
            const double after = moved + pass_bytes;
            if (!backward) {
              if (src != SIZE_MAX) last_out[src] = after;
              last_out[own] = after;
            } else {
              last_out_gradient[own] = after;
              if (src != SIZE_MAX) {
                if (gemm && !w.convolution) last_out[src] = after;
                last_out_gradient[src] = after;
              }
            }
          }
          // A matrix product or a convolution reads its whole weight; a memory-bound pass's bytes
          // (OpWork::bytes) already count what it reads of its weights (an embedding's gather reads
          // the rows of its tokens, a norm its scale and shift), priced with the pass.
          if (gemm && weight_bytes > 0 && last[p.op] >= 0 && walk == 1) {
            // The weights are read as a forward reads them; a backward also writes their gradient,
            // last touched by the backward before (or the optimizer), at its own distance.
            double s = weight_reuse_seconds(device, weight_bytes, sharing * (moved - last[p.op]));
            if (backward) s += weight_gradient_reuse_seconds(device, weight_bytes, sharing * (moved - std::max(last_gradient[p.op], 0.0)));
            if (s > 0) visit(t, k, s);
          }
          moved += pass_bytes;
          if (weight_bytes > 0) {
            if (last[p.op] < 0) held.insert(std::lower_bound(held.begin(), held.end(), p.op), p.op);
            last[p.op] = moved;
            if (backward) last_gradient[p.op] = moved;
          }
        }
      }
    }
  }
}

void price_weight_reuse(TaskGraph& g, const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile) {
  std::vector<std::pair<TaskId, double>> extra;
  for_each_weight_reuse(g, step, plan, cluster, profile, [&](TaskId t, std::uint32_t, double s) {
    if (!extra.empty() && extra.back().first == t) {
      extra.back().second += s;
    } else {
      extra.emplace_back(t, s);
    }
  });
  for (const auto& [t, s] : extra) {
    const double ps = std::round(s * 1e12);
    PARASIM_CHECK(ps < 9.2e18 - static_cast<double>(g.duration_ps[t]), "simulated time overflows (over 106 days) pricing weights out of cache");
    g.duration_ps[t] += static_cast<std::int64_t>(ps);
  }
}

}  // namespace parasim::sim
