#pragma once
/// The compute cost model every backend shares (pure functions of a device profile and a local,
/// sharded operator):
///   kernel time = max(FLOPs / (peak(dtype) · eff_gemm(size)), bytes / (memory bandwidth · eff_mem(bytes)))
///                 + launch overhead,
/// with the efficiencies read from the profile's curves for the kernel's size; a straggler's time is
/// divided by its speed factor.
#include <optional>

#include "common/sim_time.hpp"
#include "models/operator.hpp"
#include "sim/profile.hpp"
#include "sim/work/op_work.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// Peak FLOP/s of `device` for GEMMs in `dtype` (fp16 and bf16 share the tensor-core peak; tf32 falls
/// back to fp32 where the profile lists no tf32), or nothing when the device has no such figure.
[[nodiscard]] std::optional<double> find_gemm_peak_flops(const DeviceProfile& device, models::DType dtype);
/// As find_gemm_peak_flops; throws PlanError when the device has no figure.
[[nodiscard]] double gemm_peak_flops(const DeviceProfile& device, models::DType dtype);

/// Seconds to move `moved` bytes (read + written) at `efficiency`'s fraction of `bandwidth_bytes_per_s`
/// for the `in_play` bytes a kernel keeps in use (the memory curve's, or a measured update's).
[[nodiscard]] double streamed_seconds(double bandwidth_bytes_per_s, const EfficiencyCurve& efficiency, double moved, double in_play);

/// Time of one kernel. `gemm_flops` is the FLOP count of one GEMM of the kernel (the size its
/// efficiency is read at; 0 for memory-bound kernels, whose FLOPs run at the fp32 vector peak);
/// `gemm_min_dim` the smallest of its m, n and k, at which the device's thin-GEMM factor is read
/// (DeviceProfile::gemm_thin_efficiency; 0: none).
[[nodiscard]] double kernel_seconds(const DeviceProfile& device, models::OpClass cls, models::DType dtype, double flops, double bytes,
                                    double gemm_flops, int kernels, double gemm_min_dim = 0);

/// The thin-GEMM factor of an untransposed m × n × k GEMM: the curve of the dim that is its smallest
/// (DeviceProfile::gemm_thin_efficiency_by_dim; m before n before k on a tie) where the profile has
/// them, else the orientations' average at its smallest dim, else 1.
[[nodiscard]] double gemm_thin_factor(const DeviceProfile& device, double m, double n, double k);

/// The thin-GEMM factor of the backward pair of an m × n × k layer (dX = dY·Wᵀ, dW = Xᵀ·dY, each
/// transposing an operand): where m (the forward's rows) is the smallest dim and the profile timed
/// the pair at thin m, the pair's own curve (DeviceProfile::gemm_thin_backward_efficiency); else the
/// orientations' average at the smallest dim, else 1.
[[nodiscard]] double gemm_thin_backward_factor(const DeviceProfile& device, double m, double n, double k);

/// Time of one kernel of untransposed m × n × k GEMMs (a layer's forward), as kernel_seconds with the
/// thin factor of that orientation.
[[nodiscard]] double gemm_kernel_seconds(const DeviceProfile& device, models::DType dtype, double flops, double bytes, double gemm_flops, int kernels,
                                         double m, double n, double k);

/// Fraction of `dtype`'s peak a fused attention kernel reaches on `device` (DeviceProfile's
/// attention_efficiency): the curves of implementation `kernel` (empty: the device's default, its first
/// listed), of that dtype (fp16 and bf16 stand for each other) and mask
/// (either mask when the profile lists only one), read at `seq` keys and interpolated linearly in
/// log2(head dim) between the nearest head dims listed (the nearest one beyond the listed range).
/// Nothing when the profile lists no curve of that implementation for the dtype.
[[nodiscard]] std::optional<double> attention_efficiency(const DeviceProfile& device, const std::string& kernel, models::DType dtype,
                                                         double head_dim, double seq, bool causal, bool backward);

/// Whether attention_efficiency finds curves of implementation `kernel` (empty: the device's default)
/// for `dtype` on `device`; without them a fused attention kernel runs on the GEMM curve.
[[nodiscard]] bool has_attention_curves(const DeviceProfile& device, const std::string& kernel, models::DType dtype);

/// The bytes a convolution's patch matrix moves (read + written) beyond the operator's own bytes where
/// `device` runs convolutions as im2col + GEMM (DeviceProfile::convolution): forward, im2col writes
/// the patch matrix from the image (two passes of its batch·m·k elements); backward, im2col again for
/// the weight gradient and col2im adding the data gradient's patch matrix back into the image (three
/// passes). 0 for any other operator or device.
[[nodiscard]] double patch_matrix_bytes(const DeviceProfile& device, const OpWork& w, bool backward);

/// Forward and backward time of one operator's work (sim/work/op_work.hpp) on `device`.
struct OpCost {
  double fwd_s = 0;
  double bwd_s = 0;
};
[[nodiscard]] OpCost op_cost(const DeviceProfile& device, const OpWork& work);

/// Bytes the optimizer step reads and writes per parameter it updates (fused, memory-bound update):
/// mixed-precision Adam reads the gradient (2, or 4 where gradients are kept in fp32), fp32 master
/// weights, momentum and variance (12) and writes the last three plus the fp16 weights (14) = 28.
[[nodiscard]] double optimizer_bytes_per_parameter(strategies::Optimizer optimizer, models::DType precision, models::DType grad_dtype);

}  // namespace parasim::sim
