#pragma once
/// The work of one operator on one device under its sharding: local FLOPs, bytes moved, and for a
/// matrix product its local m × n × k. Independent of any profile: the cost model
/// (sim/cost_model.hpp) turns it into time for a device, and an executor into a kernel launch.
#include "models/operator.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

struct OpWork {
  models::OpClass cls = models::OpClass::MemoryBound;
  models::DType dtype = models::DType::F16;  ///< the precision it runs in
  bool is_input = false;                     ///< a graph input: no work
  bool has_backward = false;                 ///< a backward kernel runs (GEMMs with gradients, memory-bound ops)
  double fwd_flops = 0;                      ///< local forward FLOPs
  double bwd_flops = 0;                      ///< local backward FLOPs
  /// Bytes the forward kernel(s) read and write: activation inputs, weights (an embedding reads only
  /// the rows it looks up) and the output, in their local sizes (a vocab-parallel cross-entropy: its
  /// passes over the logits, models/ops.hpp).
  double bytes = 0;
  /// Bytes the backward kernel(s) read and write: twice `bytes` (the output gradient and the saved
  /// tensors read, the input gradient written), except a cast, whose gradient is cast back (the
  /// forward's bytes), and a vocab-parallel cross-entropy (its passes, models/ops.hpp).
  double bwd_bytes = 0;
  /// A matrix product's local extents (products of its batch, m, n and k dims; 1 otherwise). For a fused
  /// attention: batch × heads, queries, keys, head dim.
  double gemm_batch = 1, gemm_m = 1, gemm_n = 1, gemm_k = 1;
  /// FLOPs of one GEMM of the kernel, 2·batch·m·n·k: the size its efficiency is read at (0 for
  /// memory-bound operators).
  double gemm_flops = 0;
  bool causal = false;  ///< a fused attention with a causal mask
  /// A convolution (its patch matrix is batch × m × k), and whether it is 3×3 at stride 1 — the shape
  /// a Winograd algorithm computes with fewer multiplications. FLOPs stay the direct form's; how a
  /// device's convolution library runs them is the profile's (DeviceProfile::convolution).
  bool convolution = false, winograd_shape = false;
  /// A convolution's window, kh·kw (1 otherwise): its patch matrix repeats each image element up to
  /// that many times, so the image holds about 1/window of the patch matrix's elements.
  double conv_window = 1;
  bool exponential = false;  ///< a softmax or a cross-entropy: an exponential per element
  /// A fused attention's implementation (a name in the profile's attention curves); empty: the
  /// device's default.
  std::string attention_kernel;
  /// fp8 GEMMs: bytes the casts to fp8 move, per pass (Transformer Engine quantizes a linear layer's
  /// input and, on the first micro-batch, its weight before the forward GEMMs, and the output gradient
  /// before the backward ones); 0 otherwise. They run as memory-bound kernels beside the GEMMs.
  double quantize_fwd_bytes = 0, quantize_bwd_bytes = 0;
  int gemms = 1;        ///< kernels of the forward (fused multi-GEMM operators: one per GEMM)
  int bwd_kernels = 1;  ///< kernels of the backward (a GEMM's: the data and the weight gradient)
  int weights = 0;             ///< weight tensors the operator holds
  double weight_elements = 0;  ///< their local parameters (gradient accumulation passes over them)
  bool operator==(const OpWork&) const = default;
};

/// The dtype `op` computes in when training in `precision`. fp8 training as Transformer Engine does it
/// (Megatron-Core, NeMo) runs the linear layers' GEMMs in fp8 (forward, data and weight gradient) and
/// keeps norms, softmax, attention (its fp8_dpa is off by default), the MoE router and every
/// element-wise operator in bf16 (TE docs, "Introduction to low precision training").
[[nodiscard]] models::DType compute_dtype(const models::Operator& op, models::DType precision);

/// The work of `op` on one device of `mesh` under `sharding`, in `precision`, with `micro_batches`
/// micro-batches per step (an fp8 weight is quantized once per step, on the first). For routed experts
/// (MoEExperts) the work of the busiest expert-parallel rank, which receives `expert_imbalance` times
/// the balanced tokens (strategies::PlanSpec::expert_imbalance): its FLOPs, its GEMMs' m (tokens per
/// expert) and the bytes of its token tensors scale by it; its weights do not.
[[nodiscard]] OpWork op_work(const models::Operator& op, const strategies::DeviceMesh& mesh, const strategies::OpSharding& sharding,
                             models::DType precision, std::int64_t micro_batches = 1, double expert_imbalance = 1.0);

}  // namespace parasim::sim
