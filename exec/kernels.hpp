#pragma once
/// The CPU kernels of `parasim execute`: what a compute task of a lowered step does, run for real in
/// fp32 on buffers of the real local sizes, from the work the task carries (sim/work/work.hpp):
///  - a matrix product (linear, matmul, MoE experts) as cblas_sgemm of its local batch × m × n × k,
///    forward one GEMM per kernel the operator counts, backward the data and the weight gradient;
///  - a convolution as im2col (the m × k patch matrix written from the input) and that GEMM;
///  - a fused attention as its batched GEMMs Q·Kᵀ and P·V with a row softmax between (backward: the
///    four gradient GEMMs and the softmax's gradient) — materialised, as a CPU runs it;
///  - a softmax or a loss as exp over its elements; every other operator (norms, activations, adds,
///    dropout, casts, pooling, embeddings) as a memory-bound loop moving its bytes (read and written
///    in equal parts);
///  - an optimizer step as the optimizer's update over the stage's local parameters, with its state
///    arrays (Adam: p, g, m, v; SGD with momentum: p, g, m; SGD: p, g): first over the weights the
///    rank's matrix products and convolutions read and write their gradients into (each operator's
///    own buffers), then over the rest.
/// The cost model predicts exactly these kernels' work (sim/cost_model.hpp), so what is measured is
/// what was predicted, kernel by kernel.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/host_memory.hpp"
#include "models/graph.hpp"
#include "sim/work/work.hpp"
#include "strategies/plan.hpp"

namespace parasim::exec {

/// Kernel classes the comparison reports (exec/compare.hpp).
enum class KernelClass : std::uint8_t { Gemm, Convolution, Attention, Softmax, Elementwise, Optimizer };
inline constexpr int kKernelClassCount = 6;
[[nodiscard]] std::string_view to_string(KernelClass c);

/// The class of an operator's kernels.
[[nodiscard]] KernelClass kernel_class(const models::Operator& op, const sim::OpWork& work);

/// Buffers a stream's kernels reuse, grown to the largest size asked for. Not shared between threads.
/// Slots 0 and 1 hold operands (filled with 1/64; the memory-bound kernels write slot 1 only with
/// values that keep it there: y = x/2 + 1/128, a softmax's probabilities); slot 2 the GEMMs' and
/// attention scores' outputs; slot 3 a convolution's image; slot 4 attention's outputs. No kernel
/// reads back what a GEMM wrote, except attention its own scores, so values stay small and finite
/// however many steps run (a kernel fed its own growing outputs would soon compute on infinities,
/// at other speeds).
class Scratch {
 public:
  static constexpr int kSlots = 5;
  /// A buffer of at least `count` floats in `slot`.
  float* get(int slot, std::size_t count);

 private:
  HostVector<float> slots_[kSlots];  ///< on huge pages where the host gives them (exec/host_memory.hpp)
};

/// What runs a rank's compute tasks and holds its message buffers: the CPU's (below) or a GPU's
/// (exec/cuda_kernels.hpp). Work runs in lanes — one per thread of the executor (a stream's, a
/// receiver's) — each with its own buffers (and on a GPU its own CUDA stream), so lanes run at once.
class Kernels {
 public:
  virtual ~Kernels() = default;
  /// Why these kernels cannot run `plan` (its precision), or "".
  [[nodiscard]] virtual std::string refuses(const strategies::Plan& plan) const = 0;
  /// The executor, in words, for the report ("OpenBLAS sgemm on 1 thread a rank, ...").
  [[nodiscard]] virtual std::string describe() const = 0;
  /// Prepares `lanes` lanes; called once before any run.
  virtual void set_lanes(std::size_t lanes) = 0;
  /// Runs compute work `w` on `lane` and returns when it is done; appends each operator pass's
  /// measured seconds to `pass_seconds` (one per entry of its ops, in order; an optimizer step: one).
  virtual void run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) = 0;
  /// The micro-batch the lane's next run belongs to (−1: none, an optimizer step); kernels that keep
  /// a micro-batch's activations in buffers of their own read it.
  virtual void at_micro_batch(std::size_t /*lane*/, std::int32_t /*micro_batch*/) {}
  /// A buffer of at least `count` floats in the device's memory, the lane's own: a collective's or a
  /// pipeline message's data (the transport reads and writes it).
  [[nodiscard]] virtual float* message_buffer(std::size_t lane, std::size_t count) = 0;
};

/// Runs compute tasks' work on the calling thread, in fp32.
class CpuKernels final : public Kernels {
 public:
  CpuKernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int blas_threads);

  std::string refuses(const strategies::Plan& plan) const override;
  std::string describe() const override;
  void set_lanes(std::size_t lanes) override {
    lanes_.resize(lanes);
    lane_micro_batch_.resize(lanes, 0);
  }
  void at_micro_batch(std::size_t lane, std::int32_t micro_batch) override { lane_micro_batch_.at(lane) = std::max(micro_batch, 0); }
  void run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) override;
  float* message_buffer(std::size_t lane, std::size_t count) override { return lanes_[lane].get(0, count); }

 private:
  void run_pass(const sim::OpPass& p, Scratch& scratch, std::int32_t micro_batch);
  /// Operator `op`'s output (or its gradient) for `micro_batch`: at least `count` floats.
  float* activation(bool gradient, models::OpId op, std::int32_t micro_batch, std::size_t count);
  void run_optimizer(std::int64_t stage);

  const models::Graph& graph_;
  const sim::StepWork& work_;
  const strategies::Plan& plan_;
  int blas_threads_;
  std::vector<Scratch> lanes_;
  /// Per graph operator holding weights that a matrix product or convolution reads: its local weights
  /// (k × n floats), their gradient and the optimizer's state for them (one array per moment), each
  /// its own buffer as a framework's parameters are, allocated on the operator's first pass. A
  /// weight's place in the cache then depends on what ran since its last pass, as in training.
  struct Parameter {
    HostVector<float> weights, gradient, state;
  };
  std::vector<Parameter> parameters_;
  /// Per operator, per micro-batch: its output and its output's gradient, as a framework keeps a
  /// micro-batch's activations until its backward; and per operator its first input's producer.
  std::vector<std::vector<HostVector<float>>> outputs_, output_gradients_;
  std::vector<models::OpId> producer_;
  std::vector<std::int32_t> lane_micro_batch_;
  std::vector<HostVector<float>> optimizer_state_;  ///< per stage: the state arrays of parameters no kernel reads, interleaved
};

/// An operator with no producer among the graph's operators (its input is the graph's input).
inline constexpr models::OpId kNoProducer = static_cast<models::OpId>(-1);

/// y = x/2 + 1/128 over `n` floats: the memory-bound kernel on given buffers.
void stream_pass(const float* x, float* y, std::size_t n);

/// The memory-bound kernel: moves `bytes` on the calling thread, half read and half written
/// (y = a·x + b over bytes / 8 floats). `parasim calibrate --backend cpu` times this very loop.
void stream_pass(double bytes, Scratch& s);

/// A softmax over bytes / 8 elements in rows of `row`: the row's maximum, exp of each element less it,
/// and the division by their sum (read one float, write one, per element).
void softmax_pass(double bytes, double row, Scratch& s);
/// The same over `n` elements of `x` into `y` (which may be `x`).
void softmax_rows(const float* x, float* y, std::size_t n, std::size_t row);

/// Adam's update of `n` parameters p from gradients g with moments m and v (PyTorch's defaults:
/// β 0.9, 0.999, ε 1e-8): what an optimizer step of Adam or AdamW runs per parameter.
void adam_update(float* p, const float* g, float* m, float* v, std::size_t n);
/// SGD with momentum's update of `n` parameters p from gradients g with the momentum buffer v (μ 0.9):
/// v ← μv + g, p ← p − lr·v, in place.
void momentum_update(float* p, const float* g, float* v, std::size_t n);

/// Single-precision GEMM C[m×n] = A[m×k]·B[k×n] (row-major, leading dimensions their widths), through
/// OpenBLAS (libparasim_blas.so, loaded on the first call: exec/blas_plugin.hpp; a PlanError when it
/// cannot be); `ta`/`tb` transpose the operands as stored.
void sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c);

/// OpenBLAS's threads for the calling process (the ranks on one host share its cores).
void set_blas_threads(int threads);

/// OpenBLAS's own account of its build ("OpenBLAS 0.3.21 DYNAMIC_ARCH …"), for a profile's provenance.
[[nodiscard]] std::string blas_config();

}  // namespace parasim::exec
