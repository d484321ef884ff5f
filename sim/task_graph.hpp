#pragma once
/// The TaskGraph: what one training step does on every device, as compact arrays (structure of
/// arrays, not a heap object per task) so a step of a thousand-GPU plan — millions of tasks — fits
/// in memory and simulates in about a second.
///
/// A task runs on one resource — a stream of one device (compute, a communication stream per mesh
/// axis, pipeline sends, host-to-device copies, the data loader) — or, for a collective, on the same
/// stream of every device in its group at once. Each resource is FIFO: tasks start in the issue order
/// the lowering gave that resource (as CUDA streams and NCCL communicators do), once their
/// dependencies have finished. Compute tasks carry their duration (from the cost model at lowering);
/// collectives carry kind, algorithm, group and bytes, and each backend turns them into time
/// (closed form) or flows (SimGrid). The executor runs the same TaskGraph for real.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "common/sim_time.hpp"
#include "sim/collectives.hpp"

namespace parasim::sim {

using TaskId = std::uint32_t;

/// A device's streams: each is one FIFO resource of the device. Their names appear only in traces.
enum class Stream : std::uint8_t {
  Compute,       ///< kernels
  TensorComm,    ///< tensor/sequence-parallel collectives
  DataComm,      ///< data-parallel gradient reduction and ZeRO gathers
  ExpertComm,    ///< MoE all-to-all
  Pipeline,      ///< stage-to-stage sends
  Loader,        ///< the data loader (reserved)
  HostToDevice,  ///< host-to-device copies (reserved)
  Wan,           ///< traffic between sites (reserved)
};
[[nodiscard]] std::string_view to_string(Stream s);

/// A compute task's work, an index into the work table of the step it was lowered from
/// (sim/work/work.hpp, StepWork::computes); kNoWork for collectives and for tasks built by hand.
/// A task's work is kept with its label (TaskGraph::label_work), which is per program item like the
/// work itself, so the side table costs nothing per task.
using WorkId = std::uint32_t;
inline constexpr WorkId kNoWork = UINT32_MAX;

enum class TaskKind : std::uint8_t { Compute, Collective, Copy, Load };

/// What a task is for: the result's time breakdown and the trace's colours come from this.
enum class Category : std::uint8_t {
  Forward,
  Backward,
  Recompute,
  Optimizer,
  TensorComm,    ///< tensor/sequence-parallel collectives on the critical path
  PipelineComm,  ///< stage-to-stage sends
  GradientComm,  ///< data-parallel gradient reduction (and ZeRO gathers)
  ExpertComm,    ///< MoE all-to-all
  DataLoad,
};
inline constexpr int kCategoryCount = 9;
[[nodiscard]] std::string_view to_string(Category c);

/// One collective instance's description (shared by every task that repeats it).
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto;
  std::uint32_t group = 0;  ///< index into TaskGraph groups
  double bytes = 0;         ///< see the size convention in collectives.hpp
  /// SendRecv: the sending device. A send occupies only the sender's stream (the receiver waits on
  /// it through a dependency), as an asynchronous isend does.
  std::int64_t root = -1;
  /// The group whose streams the collective occupies, when not all of `group` is simulated (the
  /// data-parallel replica shortcut simulates one replica: a gradient all-reduce still costs what
  /// its whole group costs, but only the simulated member waits for it). kWholeGroup: `group`.
  std::uint32_t occupies = kWholeGroup;
  static constexpr std::uint32_t kWholeGroup = UINT32_MAX;
  /// What runs it on the devices (what it takes from the compute beside it, sim/interference.hpp).
  CommKernel kernel = CommKernel::Nccl;
  /// Host time per member of `group` the framework spends before the collective completes (a
  /// list-based API copying each rank's shard; strategies/implementation.hpp): it adds group size ×
  /// this to the collective's time on either backend.
  double host_s_per_rank = 0;
  bool operator==(const CollectiveSpec&) const = default;
};

struct TaskGraph {
  std::int64_t devices = 0;
  std::vector<Stream> streams;  ///< every device's streams; resource id = device · streams + stream index

  // ---- per task ----
  std::vector<TaskKind> kind;
  std::vector<std::uint8_t> stream;
  std::vector<std::uint32_t> owner;  ///< device (compute, copy, load) or collective index
  std::vector<std::int64_t> duration_ps;  ///< compute/copy/load; 0 for collectives
  std::vector<Category> category;
  std::vector<std::int32_t> micro_batch;  ///< -1 when not tied to one
  std::vector<std::uint32_t> label;       ///< index into labels (and label_work)
  std::vector<std::uint32_t> dep_begin{0};  ///< CSR: deps of task t are deps[dep_begin[t] .. dep_begin[t+1])
  std::vector<TaskId> deps;

  // ---- per resource: issue order (CSR over resources) ----
  std::vector<std::uint32_t> queue_begin;
  std::vector<TaskId> queue;

  // ---- tables ----
  std::vector<CollectiveSpec> collectives;
  std::vector<std::uint32_t> group_begin{0};  ///< CSR: members of group g
  std::vector<std::int64_t> group_members;
  std::vector<std::string> labels;
  /// Per label: the work of the compute tasks that carry it (kNoWork for other tasks). With each
  /// task's micro-batch this is the side table of what a compute task covers (which operators,
  /// which pass), so a lowered graph can be re-costed under another profile (sim/recost.hpp) or run
  /// for real. Two labels may share a text when their work differs.
  std::vector<WorkId> label_work;
  /// Whether every resource runs its tasks in increasing id order. Dependencies always point to
  /// lower ids, so then the ids are an order in which every task's predecessors (its dependencies
  /// and the task before it on each of its resources) come first, and the analytical engine
  /// simulates the graph in one pass over the ids (sim/engine/fifo_engine.hpp).
  bool queues_follow_ids = false;

  bool operator==(const TaskGraph&) const = default;

  [[nodiscard]] std::size_t task_count() const { return kind.size(); }
  /// The work of compute task `t` (kNoWork for others).
  [[nodiscard]] WorkId work_of(TaskId t) const { return label_work[label[t]]; }
  [[nodiscard]] std::size_t stream_count() const { return streams.size(); }
  [[nodiscard]] std::size_t resource_count() const { return static_cast<std::size_t>(devices) * streams.size(); }
  /// The name of stream index `s` of every device.
  [[nodiscard]] std::string_view stream_name(std::uint8_t s) const { return to_string(streams[s]); }
  [[nodiscard]] std::span<const TaskId> deps_of(TaskId t) const {
    return {deps.data() + dep_begin[t], deps.data() + dep_begin[t + 1]};
  }
  [[nodiscard]] std::span<const std::int64_t> group(std::uint32_t g) const {
    return {group_members.data() + group_begin[g], group_members.data() + group_begin[g + 1]};
  }
  [[nodiscard]] std::span<const TaskId> queue_of(std::size_t resource) const {
    return {queue.data() + queue_begin[resource], queue.data() + queue_begin[resource + 1]};
  }
  /// Devices a task occupies: its owner device, its collective's group (or `occupies`), a send's sender.
  [[nodiscard]] std::span<const std::int64_t> devices_of(TaskId t, std::int64_t& scratch) const;
  /// Approximate heap bytes held (for budgets and the benchmark).
  [[nodiscard]] std::size_t memory_bytes() const;
};

/// Builds a TaskGraph. Tasks must be added after their dependencies (ids grow, deps point down);
/// the issue order of each resource is the order `enqueue` is called for it, which need not follow ids.
class TaskGraphBuilder {
 public:
  TaskGraphBuilder(std::int64_t devices, std::vector<Stream> streams);

  /// Interns a group (ascending distinct device ids); equal groups share one index.
  std::uint32_t group(std::span<const std::int64_t> members);
  std::uint32_t collective(const CollectiveSpec& spec);
  /// Interns a label; `work`: the work of the compute tasks that will carry it (kNoWork: none).
  std::uint32_t label(const std::string& text, WorkId work = kNoWork);

  /// A compute/copy/load task on (device, stream); not yet enqueued. (Defined here, inline: the
  /// lowering calls it for every one of millions of tasks.)
  /// `stream` indexes the builder's streams.
  TaskId add(TaskKind kind, std::int64_t device, std::uint8_t stream, Picoseconds duration, Category category,
             std::int32_t micro_batch, std::uint32_t label, std::span<const TaskId> deps) {
    PARASIM_CHECK(kind != TaskKind::Collective, "use add_collective for collectives");
    PARASIM_CHECK(device >= 0 && device < g_.devices && stream < g_.streams.size(), "task resource out of range");
    PARASIM_CHECK(duration.count >= 0, "negative task duration");
    return push(kind, stream, static_cast<std::uint32_t>(device), duration.count, category, micro_batch, label, deps);
  }
  /// A collective on `stream` of every member of its group; not yet enqueued.
  TaskId add_collective(std::uint32_t collective, std::uint8_t stream, Category category, std::int32_t micro_batch,
                        std::uint32_t label, std::span<const TaskId> deps) {
    PARASIM_CHECK(collective < g_.collectives.size() && stream < g_.streams.size(), "collective out of range");
    return push(TaskKind::Collective, stream, collective, 0, category, micro_batch, label, deps);
  }
  /// Appends `t` to the issue order of each resource it occupies (its device, or every group member).
  void enqueue(TaskId t);
  /// Appends `t` to the issue order of one resource only (for builders that enqueue per device).
  void enqueue_on(TaskId t, std::int64_t device);

  [[nodiscard]] std::size_t task_count() const { return g_.kind.size(); }
  /// Reserves room for about `tasks` tasks (an upper estimate avoids regrowing the arrays).
  void reserve(std::size_t tasks);
  /// Finishes: lays out the per-resource queues. Checks every task was enqueued on each of its
  /// resources exactly once.
  [[nodiscard]] TaskGraph finish() &&;
  /// Finishes a graph whose every resource runs its tasks in id order (no task enqueued): each
  /// queue is its resource's tasks by increasing id. The builder of such a graph creates tasks in
  /// an order that every resource's issue order follows (the lowering: sim/lower/unit_order.hpp).
  [[nodiscard]] TaskGraph finish_in_id_order() &&;

 private:
  /// Appends one task's fields (out of line, with every append inlined into it: GCC leaves
  /// vector::push_back as a call at each of the lowering's many call sites).
  TaskId push(TaskKind kind, std::uint8_t stream, std::uint32_t owner, std::int64_t duration, Category category, std::int32_t micro_batch,
              std::uint32_t label, std::span<const TaskId> deps);

  TaskGraph g_;
  std::vector<std::vector<TaskId>> queues_;
  std::map<std::vector<std::int64_t>, std::uint32_t> group_index_;
  std::map<std::tuple<int, int, std::uint32_t, double, std::int64_t, std::uint32_t, int, double>, std::uint32_t> collective_index_;
  std::map<std::pair<std::string, WorkId>, std::uint32_t> label_index_;
};

}  // namespace parasim::sim
