#pragma once
/// Weights read again after other work pushed them out of cache. The calibration times each kernel
/// over and over on the same operands (calibrate/sweep.cpp), so the cost model's curves price a pass
/// as if its weights were still in cache. On a CPU they are not when enough other memory passed in
/// between: a thin sgemm streaming a 9.4 MB weight ran 1.0 ms warm and 2.4 ms after 256 MiB had been
/// touched between calls on this project's 2-core host, and ResNet-18's pipeline stage ran its
/// forward 7.2–10.6 ms after a backward against 5.9–6.9 ms after another forward
/// (docs/validation.md, "GPipe against 1F1B"). What a pass pays thus depends on the schedule: the
/// passes its device ran since it last touched the same weights.
///
/// The reuse distance of a pass is the bytes its device's compute stream moved since the last pass
/// that touched the operator's weights (Mattson et al., "Evaluation techniques for storage
/// hierarchies", IBM Systems Journal 9(2), 1970: a reference hits a cache of C bytes when fewer than
/// C distinct bytes came between). The bytes moved stand for the distinct bytes: each pass's
/// OpWork::bytes (forward) or bwd_bytes plus its weight gradient (backward), a convolution's patch
/// matrix passes where the device writes one (patch_matrix_bytes, sim/cost_model.hpp: a 3×3
/// convolution's patch matrix holds 9 times its image), and the optimizer step's
/// bytes (sim/cost_model.hpp, optimizer_bytes_per_parameter), which walks the weights in operator
/// order. The device's profile gives the price by distance (DeviceProfile::weight_reuse_efficiency)
/// for a matrix product's or a convolution's operands, whose arithmetic hides part of each miss, and
/// for an element-wise pass's, which has none to hide behind, the executor's memory-bound pass
/// timed with one operand cold (memory_reuse_*, where the profile has them).
#include <cstdint>
#include <functional>

#include "sim/cluster.hpp"
#include "sim/profile.hpp"
#include "sim/task_graph.hpp"
#include "sim/work/work.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// The seconds a pass reading `weight_bytes` of weights last touched `distance_bytes` ago costs
/// beyond its warm price on `device`: weight_bytes / weight_reuse_bytes_per_s · (1 /
/// weight_reuse_efficiency(distance) − 1); 0 where the profile has no weight reuse figures.
[[nodiscard]] double weight_reuse_seconds(const DeviceProfile& device, double weight_bytes, double distance_bytes);
/// The seconds an element-wise pass's operand of B = `operand_bytes`, `written` (or read)
/// `distance_bytes` after it was last touched, costs beyond the pass's warm price (the memory curve
/// at the pass's `pass_bytes`): the calibrated pass over 2B bytes with that operand cold, less the
/// same bytes warm: max(0, 2B / (memory_reuse_bytes_per_s · efficiency(distance)) − 2B /
/// (memory_bandwidth_bytes_per_s · memory_efficiency(pass_bytes))), efficiency the profile's
/// memory_reuse_efficiency (written) or memory_reuse_read_efficiency (read). A pass whose memory
/// curve price is already as slow pays nothing more. 0 where the profile has no memory reuse figures.
[[nodiscard]] double memory_reuse_seconds(const DeviceProfile& device, double operand_bytes, double pass_bytes, double distance_bytes, bool written);
/// What a backward's writing the weights' gradient, last touched `distance_bytes` ago, costs beyond
/// its warm price: the backward pair's price at that distance (weight_reuse_backward_*) less the
/// weights' read (weight_reuse_seconds), at least 0; without backward figures, as much as the read.
[[nodiscard]] double weight_gradient_reuse_seconds(const DeviceProfile& device, double weight_bytes, double distance_bytes);

/// Walks every device's compute stream of `g` (lowered from `step`) in issue order twice, the first
/// walk standing for the step before (steady state), and calls `visit(task, pass, seconds)` for each
/// operator pass of the second walk that reads weights out of cache, with `pass` its index in
/// StepWork::ops and `seconds` what that costs beyond the warm price (a backward reads the weights
/// and writes their gradient: weight_gradient_reuse_seconds at the gradient's own distance). Devices whose profile has neither weight nor memory reuse
/// figures are skipped. Reads the issue order only, not the durations.
void for_each_weight_reuse(const TaskGraph& g, const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                           const std::function<void(TaskId, std::uint32_t, double)>& visit);

/// Adds to each compute task of `g` what its weights cost out of cache (for_each_weight_reuse).
/// The same graph gets the same durations.
void price_weight_reuse(TaskGraph& g, const StepWork& step, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile);

}  // namespace parasim::sim
