#pragma once
/// The executed plan is the plan: real data through a plan's shardings, in fp32. One rank runs the
/// forward and backward of a range of a graph's operators for its device of the plan's mesh, with
/// each operator computed on its local shard (the executor's kernels: sgemm for matrix products and
/// attention, the row softmax), and between a producer and a consumer exactly the collectives the
/// simulation lowers for that edge (sim/work/layout.hpp: `reshard` of the producer's output layout
/// into the consumer's input layout, forward, and of the consumer's input-gradient layout into the
/// producer's output layout, backward; weight gradients reduced over `weight_grad_partial_axes`),
/// run for real over the ranks' groups; tensors crossing a pipeline stage are sent to the next
/// stage's rank. Matching a single rank's results then shows that the shardings, reshards and
/// collectives the simulation prices compute the model, not an imitation of its timing.
///
/// Operators: linear (any dims, by its GEMM view; a weight of output dims only is a bias, added once
/// however the output is partial), fused attention (causal or full, scaled by 1/√d), eager
/// attention's batched matmuls and softmax (over the last dim, as the graph has them: no mask and no
/// scale, which the graph folds away), layer norm (over its last dim),
/// activation (relu, gelu in its tanh form), add, dropout (the identity: numerics run with dropout
/// off), loss (softmax cross-entropy over the last dim against given labels, summed over samples),
/// and graph inputs. A mesh dim split over more than one axis, and the other operator kinds, are
/// refused with the reason (`unsupported`).
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "models/graph.hpp"
#include "strategies/plan.hpp"

namespace parasim::exec::numerics {

/// A dense fp32 tensor, row-major over its sizes (positional: a tensor's dims are named by each
/// operator that reads or writes it, possibly differently).
struct Tensor {
  std::vector<std::int64_t> sizes;
  std::vector<float> values;
  [[nodiscard]] std::size_t count() const;
};

/// The communication one rank's numerics need. `group` lists devices ascending; every member calls
/// the same operation in the same order.
class Collectives {
 public:
  virtual ~Collectives() = default;
  [[nodiscard]] virtual std::int64_t device() const = 0;
  /// In place: every member's `count` floats summed.
  virtual void all_reduce(std::span<const std::int64_t> group, float* data, std::size_t count) = 0;
  /// `out` holds every member's `count` floats, in group order.
  virtual void all_gather(std::span<const std::int64_t> group, const float* mine, std::size_t count, float* out) = 0;
  virtual void send(std::int64_t peer, const float* data, std::size_t count) = 0;
  virtual void receive(std::int64_t peer, float* data, std::size_t count) = 0;
};

/// Collectives among threads of one process, one thread per device (tests; one process standing for
/// the ranks of a plan). Construct one World for all, then a ThreadCollectives per thread.
class World {
 public:
  explicit World(std::int64_t devices) : devices_(devices) {}

 private:
  friend class ThreadCollectives;
  struct Round {
    std::vector<std::vector<float>> parts;  // by member index
    std::size_t arrived = 0, left = 0;
  };
  std::int64_t devices_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<std::vector<std::int64_t>, std::uint64_t>, Round> rounds_;
  std::map<std::pair<std::vector<std::int64_t>, std::int64_t>, std::uint64_t> sequence_;  // (group, device) → calls
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::vector<float>>> mail_;  // (from, to) → messages
};

class ThreadCollectives final : public Collectives {
 public:
  ThreadCollectives(World& world, std::int64_t device) : world_(world), device_(device) {}
  std::int64_t device() const override { return device_; }
  void all_reduce(std::span<const std::int64_t> group, float* data, std::size_t count) override;
  void all_gather(std::span<const std::int64_t> group, const float* mine, std::size_t count, float* out) override;
  void send(std::int64_t peer, const float* data, std::size_t count) override;
  void receive(std::int64_t peer, float* data, std::size_t count) override;

 private:
  /// Every member's contribution, in group order, once all have arrived.
  std::vector<std::vector<float>> exchange(std::span<const std::int64_t> group, const float* mine, std::size_t count);
  World& world_;
  std::int64_t device_;
};

/// What the numerics start from: global (unsharded) tensors, the same on every rank.
struct Inputs {
  /// Outputs of operators outside the range that the range reads (graph inputs, earlier layers), by
  /// operator name, in that operator's output dims.
  std::map<std::string, Tensor> activations;
  /// Gradients of the range's outputs read outside it, by operator name (none where the range ends
  /// in a loss).
  std::map<std::string, Tensor> output_grads;
  /// Every weight's values by weight name, in its dims.
  std::map<std::string, Tensor> weights;
  /// Per global sample: the class a loss operator's cross-entropy is taken against.
  std::vector<std::int64_t> labels;
};

/// What one rank computed, gathered to global tensors (so ranks and plans compare directly).
struct Results {
  std::map<std::string, Tensor> outputs;       ///< the range's outputs read outside it, and every loss output
  std::map<std::string, Tensor> input_grads;   ///< gradients of `Inputs::activations` (those on this rank's stages)
  std::map<std::string, Tensor> weight_grads;  ///< gradients of the weights of this rank's stages
  /// Every collective run, as "kind axis-name bytes-per-rank" in order, for reading (a test compares
  /// them with the lowering's).
  std::vector<std::string> collectives;
};

/// Why `ops` cannot run under `plan` here, or "" when they can.
[[nodiscard]] std::string unsupported(const models::Graph& graph, const strategies::Plan& plan, std::span<const models::OpId> ops);

/// Runs the forward and backward of `ops` (in graph order) on `collectives.device()`'s shards, one
/// micro-batch (the graph's batch = micro_batch × dp). Preconditions: unsupported(...) is empty;
/// every rank of the plan runs it with the same inputs.
[[nodiscard]] Results run(const models::Graph& graph, const strategies::Plan& plan, std::span<const models::OpId> ops, const Inputs& inputs,
                          Collectives& collectives);

}  // namespace parasim::exec::numerics
