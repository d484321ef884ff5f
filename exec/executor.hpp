#pragma once
/// `parasim execute`'s engine: one rank runs its device's share of a lowered step — the very task
/// graph the simulation ran — for real. A thread per stream of the device takes that stream's tasks
/// in the graph's issue order, waits for each task's dependencies on this device, and runs it: a
/// compute task's kernels (exec/kernels.hpp), a collective through the transport on that stream's
/// communicator for the group, a pipeline send. A thread per (sending peer, stream) receives that
/// peer's sends in their issue order and marks them done, which releases the tasks that wait on
/// them. So streams overlap on a rank as the simulation lets them, and ranks meet only where the
/// task graph has them meet. A dependency on another device's task is honoured by the collective
/// or send that connects the two (the simulation's semantics); the graph has no other kind.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exec/kernels.hpp"
#include "exec/transport.hpp"
#include "models/graph.hpp"
#include "sim/lower.hpp"
#include "strategies/plan.hpp"

namespace parasim::exec {

/// Where a rank's input comes from when its step has an input pipeline (sim/input_pipeline.hpp):
/// a load task asks for the next micro-batch and waits until it is made; a copy task takes the
/// oldest made one into the device's input buffer. exec/loader_input.hpp runs the real loader.
class InputSource {
 public:
  virtual ~InputSource() = default;
  virtual void load() = 0;
  /// The floats of the device's part of one micro-batch (its copy's size).
  [[nodiscard]] virtual std::size_t floats() const = 0;
  virtual void copy(float* to) = 0;
};

struct ExecuteOptions {
  int warmup_steps = 1;  ///< steps run before the timed ones (allocation, first touch, caches)
  int steps = 3;         ///< timed steps
  /// The rank's input, for a step lowered with an input pipeline (its load and copy tasks).
  InputSource* input = nullptr;
};

/// Marks an operator-pass record of an optimizer step (no entry of StepWork::ops).
inline constexpr std::uint32_t kOptimizerPass = UINT32_MAX;

/// What one rank measured in one step. Times are nanoseconds since the step began (all ranks leave
/// a barrier together, then each starts its clock).
struct RankStep {
  std::vector<sim::TaskId> task;  ///< tasks run on this rank: its compute, its collectives, its sends
  std::vector<std::int64_t> start_ns, end_ns;
  std::vector<sim::TaskId> pass_task;     ///< per operator pass run: its compute task
  std::vector<std::uint32_t> pass_op;     ///< its index in StepWork::ops, or kOptimizerPass
  std::vector<std::int64_t> pass_ns;      ///< its kernels' time
  bool operator==(const RankStep&) const = default;
};

struct RankRecord {
  int rank = 0;
  std::vector<RankStep> steps;  ///< the timed steps
  bool operator==(const RankRecord&) const = default;
};

/// Why rank `rank` cannot run its part of `step` (a task kind or dependency the executor does not
/// run; a load or copy without `has_input`, an input source), or "" when it can. The kernels say what they refuse of the plan (Kernels::refuses).
[[nodiscard]] std::string cannot_execute(const sim::LoweredStep& step, int rank, bool has_input = false);

/// Runs `options.warmup_steps + options.steps` steps of this rank's part (device = transport.rank()).
/// Compute runs on `kernels`, messages in its buffers. Preconditions: cannot_execute(...) and
/// kernels.refuses(plan) are empty; the step was lowered without the replica shortcut for a plan of
/// transport.size() devices; transport.prepare(step.tasks) was called. A failure on a
/// stream thread ends every rank through transport.abort_all after printing why (other ranks may be
/// waiting for this one); on a single rank it is rethrown.
[[nodiscard]] RankRecord execute_rank(const strategies::Plan& plan, const sim::LoweredStep& step, Transport& transport, Kernels& kernels,
                                      const ExecuteOptions& options);

/// A record as bytes (for Transport::gather), and back.
[[nodiscard]] std::vector<std::byte> to_bytes(const RankRecord& r);
[[nodiscard]] RankRecord record_from_bytes(std::span<const std::byte> bytes);

}  // namespace parasim::exec
