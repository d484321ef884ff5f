#include "sim/summarize.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include "common/error.hpp"
#include "sim/cost_model.hpp"
#include "sim/simulate.hpp"
#include "strategies/search/executor.hpp"

namespace parasim::sim {
namespace {

bool is_compute(Category c) {
  return c == Category::Forward || c == Category::Backward || c == Category::Recompute || c == Category::Optimizer;
}

// When several communication streams are in flight while compute idles, the exposed time goes to the
// one the step waits on first: tensor-parallel, then expert, then pipeline, then gradient traffic.
int comm_priority(Category c) {
  switch (c) {
    case Category::TensorComm: return 0;
    case Category::ExpertComm: return 1;
    case Category::PipelineComm: return 2;
    case Category::GradientComm: return 3;
    // The input pipeline counts only where nothing else is in flight: its loaders run ahead all
    // step, and what the compute waits on is the input only when no collective is pending.
    case Category::DataLoad: return 5;
    default: return 4;
  }
}

struct Interval {
  std::int64_t start, finish;
  Category category;
};

using StreamRuns = std::vector<std::vector<Interval>>;  // per stream of one device, in issue (= time) order

/// Gathers the intervals of a few devices' streams (tasks that take no time left out). The devices'
/// tasks interleave in the task arrays (the lowering lays a tensor-parallel block's tasks side by
/// side), so their queues are walked in step, a stretch at a time: a cache line of start times
/// fetched for one device serves its neighbours before it is evicted.
void gather_runs(const TaskGraph& g, const Timeline& tl, std::span<const Picoseconds> coll_ps, std::span<const std::int64_t> finish_ps,
                 std::span<const std::int64_t> devices, std::vector<StreamRuns>& runs) {
  constexpr std::size_t kStretch = 256;
  const std::size_t streams = g.stream_count();
  runs.resize(devices.size());
  for (auto& r : runs) {
    r.resize(streams);
    for (auto& run : r) run.clear();
  }
  for (std::size_t s = 0; s < streams; ++s) {
    std::size_t longest = 0;
    for (std::int64_t d : devices) longest = std::max<std::size_t>(longest, g.queue_of(static_cast<std::size_t>(d) * streams + s).size());
    for (std::size_t k0 = 0; k0 < longest; k0 += kStretch) {
      for (std::size_t w = 0; w < devices.size(); ++w) {
        const auto queue = g.queue_of(static_cast<std::size_t>(devices[w]) * streams + s);
        auto& run = runs[w][s];
        for (std::size_t k = k0; k < std::min(queue.size(), k0 + kStretch); ++k) {
          const TaskId task = queue[k];
          const std::int64_t start = tl.start_ps[task];
          const std::int64_t finish = finish_ps.empty() ? start + task_duration_ps(g, coll_ps, task) : finish_ps[task];
          if (finish > start) run.push_back({start, finish, g.category[task]});
        }
      }
    }
  }
}

/// Splits [0, makespan) of one device into compute (by category), exposed communication (by category)
/// and idle. Each stream is FIFO, so its intervals are sorted and disjoint; they are swept together.
DeviceTimes device_times(const StreamRuns& runs, std::int64_t device, std::int64_t end_time) {
  DeviceTimes out;
  out.device = device;
  std::vector<std::size_t> live;
  for (std::size_t s = 0; s < runs.size(); ++s)
    if (!runs[s].empty()) live.push_back(s);
  std::vector<std::size_t> at(runs.size(), 0);
  std::int64_t t = 0;
  while (t < end_time) {
    std::int64_t next = end_time;
    int compute_cat = -1, comm_cat = -1, best_priority = 99;
    bool communicating = false;
    for (std::size_t s : live) {
      const auto& run = runs[s];
      auto& k = at[s];
      while (k < run.size() && run[k].finish <= t) ++k;
      if (k == run.size()) continue;
      const Interval& iv = run[k];
      if (iv.start > t) {
        next = std::min(next, iv.start);
        continue;
      }
      next = std::min(next, iv.finish);
      if (is_compute(iv.category)) {
        compute_cat = static_cast<int>(iv.category);
        continue;
      }
      communicating = communicating || iv.category != Category::DataLoad;
      if (comm_priority(iv.category) < best_priority) {
        best_priority = comm_priority(iv.category);
        comm_cat = static_cast<int>(iv.category);
      }
    }
    const double span = static_cast<double>(next - t) * 1e-12;
    if (communicating) out.comm_busy_s += span;
    if (compute_cat >= 0) out.breakdown.seconds[static_cast<std::size_t>(compute_cat)] += span;
    else if (comm_cat >= 0) out.breakdown.seconds[static_cast<std::size_t>(comm_cat)] += span;
    else out.breakdown.idle_s += span;
    t = next;
  }
  return out;
}

/// A step of this many tasks or more is summarised on kSummaryThreads threads: below it the
/// summary takes milliseconds, and the plan search already keeps every core busy with whole
/// simulations of such small steps.
constexpr std::size_t kParallelSummaryTasks = std::size_t{1} << 21;
constexpr unsigned kSummaryThreads = 2;

}  // namespace

double TimeBreakdown::compute_s() const {
  double s = 0;
  for (int c = 0; c < kCategoryCount; ++c)
    if (is_compute(static_cast<Category>(c))) s += seconds[static_cast<std::size_t>(c)];
  return s;
}

double TimeBreakdown::exposed_comm_s() const {
  double s = 0;
  for (int c = 0; c < kCategoryCount; ++c)
    if (!is_compute(static_cast<Category>(c)) && static_cast<Category>(c) != Category::DataLoad) s += seconds[static_cast<std::size_t>(c)];
  return s;
}

namespace {

/// The algorithm a collective asks for: its own when lowering fixed one, else the cluster's choice
/// for its kind (the scenario's cluster.algorithms; auto unless fixed there).
CollectiveAlgorithm requested_algorithm(const CollectiveSpec& c, const Cluster& cluster) {
  if (c.algorithm != CollectiveAlgorithm::Auto) return c.algorithm;
  switch (c.kind) {
    case CollectiveKind::AllReduce: return cluster.algorithms.all_reduce;
    case CollectiveKind::ReduceScatter: return cluster.algorithms.reduce_scatter;
    case CollectiveKind::AllGather: return cluster.algorithms.all_gather;
    case CollectiveKind::Broadcast: return cluster.algorithms.broadcast;
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv: return CollectiveAlgorithm::Auto;
  }
  return CollectiveAlgorithm::Auto;
}

}  // namespace

namespace {

/// The cluster a collective runs on: NCCL's protocols price NCCL's collectives; Transformer
/// Engine's userbuffers kernels move their chunks at the links' own α and bandwidth.
class ClusterFor {
 public:
  explicit ClusterFor(const Cluster& cluster) : cluster_(cluster) {}
  const Cluster& operator()(const CollectiveSpec& c) {
    if (c.kernel == CommKernel::Nccl) return cluster_;
    if (!plain_) {
      plain_ = cluster_;
      for (Link* l : {&plain_->intra, &plain_->inter, &plain_->host_bridge, &plain_->wan}) l->protocols.clear();
    }
    return *plain_;
  }

 private:
  const Cluster& cluster_;
  std::optional<Cluster> plain_;
};

}  // namespace

std::vector<CollectiveEstimate> estimate_collectives(const TaskGraph& tasks, const Cluster& cluster) {
  std::vector<CollectiveEstimate> out;
  out.reserve(tasks.collectives.size());
  ClusterFor on(cluster);
  for (const auto& c : tasks.collectives) {
    out.push_back(collective_time(on(c), c.kind, tasks.group(c.group), c.bytes, requested_algorithm(c, cluster)));
    // The framework's host time around it (a list-based API's per-rank copies) adds to its time.
    if (c.host_s_per_rank > 0)
      out.back().time += Picoseconds::from_seconds(c.host_s_per_rank * static_cast<double>(tasks.group(c.group).size()));
  }
  return out;
}

Result summarize(const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                 const LoweredStep& step, const Timeline& timeline, const std::vector<CollectiveEstimate>& collectives, Backend backend,
                 std::span<const std::int64_t> finish_ps) {
  PARASIM_CHECK(finish_ps.empty() || finish_ps.size() == step.tasks.task_count(), "finish times belong to the task graph");
  Result r;
  r.model = graph.name();
  r.plan = plan.description;
  r.backend = std::string(to_string(backend));
  r.profile = profile.name;
  r.profile_origin = profile.origin;
  r.implementation = std::string(strategies::to_string(plan.implementation.framework));
  r.implementation_detail = strategies::describe(plan.implementation);
  r.device_kind = cluster.devices.front().kind;
  // The implementation whose curves timed the attention, by the cost model's own lookup (a dtype
  // without curves, fp32 say, runs on the GEMM curve whatever the run names).
  for (models::OpId op = 0; op < graph.op_count(); ++op) {
    if (graph.op(op).kind != models::OpKind::Attention) continue;
    const DeviceProfile& device = profile.device(cluster.devices.front().figures());
    const models::DType dtype = compute_dtype(graph.op(op), plan.precision);
    const bool curves = has_attention_curves(device, plan.attention_kernel, dtype);
    r.attention_kernel = !curves ? "gemm curve" : !plan.attention_kernel.empty() ? plan.attention_kernel : device.attention_kernels().front();
    break;
  }
  r.devices = cluster.device_count();
  r.tasks = static_cast<std::int64_t>(step.tasks.task_count());
  r.replica_shortcut = step.replica_shortcut;
  r.simulated_devices = static_cast<std::int64_t>(step.simulated_devices.size());
  r.step_time_s = timeline.makespan.seconds();
  PARASIM_CHECK(r.step_time_s > 0, "a simulated step takes time");
  r.samples_per_s = static_cast<double>(step.samples) / r.step_time_s;
  r.tokens_per_s = static_cast<double>(step.tokens) / r.step_time_s;
  r.model_flops_per_step = step.model_flops;
  r.hardware_flops_per_step = step.hardware_flops;
  double peak_sum = 0;
  for (const auto& d : cluster.devices) peak_sum += gemm_peak_flops(profile.device(d.figures()), plan.precision) * d.speed_factor;
  r.mfu = step.model_flops / (r.step_time_s * peak_sum);
  r.hfu = step.hardware_flops / (r.step_time_s * peak_sum);
  r.model_tflops_per_device = step.model_flops / r.step_time_s / static_cast<double>(r.devices) / 1e12;

  std::vector<Picoseconds> coll_ps;
  coll_ps.reserve(collectives.size());
  for (const auto& c : collectives) coll_ps.push_back(c.time);
  // Devices a few at a time, neighbours together (see gather_runs). Each device's figures depend on
  // its own tasks alone, so a large step's devices are split over threads; they are summed below in
  // device order, so the result is the same whatever the thread count.
  constexpr std::size_t kTogether = 8;
  const std::span<const std::int64_t> simulated(step.simulated_devices);
  r.per_device.resize(simulated.size());
  auto summarize_devices = [&](std::size_t begin, std::size_t end) {
    std::vector<StreamRuns> runs;
    for (std::size_t first = begin; first < end; first += kTogether) {
      const auto devices = simulated.subspan(first, std::min(kTogether, end - first));
      gather_runs(step.tasks, timeline, coll_ps, finish_ps, devices, runs);
      for (std::size_t w = 0; w < devices.size(); ++w) {
        const std::int64_t d = devices[w];
        DeviceTimes& dt = r.per_device[first + w];
        dt = device_times(runs[w], d, timeline.makespan.count);
        dt.stage = plan.pp_axis >= 0 ? plan.mesh.coords_of(d)[static_cast<std::size_t>(plan.pp_axis)] : 0;
      }
    }
  };
  // One contiguous range of devices per thread (each reuses its interval buffers); every range
  // writes its own devices' entries, so the executor's records are not needed.
  const unsigned threads = step.tasks.task_count() >= kParallelSummaryTasks ? std::max(1u, std::min(kSummaryThreads, std::thread::hardware_concurrency())) : 1;
  const std::size_t groups = (simulated.size() + kTogether - 1) / kTogether;
  auto bound = [&](std::size_t k) { return std::min(simulated.size(), groups * k / threads * kTogether); };
  (void)strategies::search::ThreadExecutor(threads).map(
      threads, 0, [&](std::size_t k, std::byte*) { summarize_devices(bound(k), bound(k + 1)); }, {});
  for (const DeviceTimes& dt : r.per_device) {
    for (int c = 0; c < kCategoryCount; ++c) r.breakdown.seconds[static_cast<std::size_t>(c)] += dt.breakdown.seconds[static_cast<std::size_t>(c)];
    r.breakdown.idle_s += dt.breakdown.idle_s;
  }
  const double n = static_cast<double>(r.per_device.size());
  for (auto& s : r.breakdown.seconds) s /= n;
  r.breakdown.idle_s /= n;
  r.bubble_fraction = r.breakdown.idle_s / r.step_time_s;

  // Memory against the smallest usable capacity of any device.
  r.memory = strategies::memory_per_stage(graph, plan);
  double capacity = std::numeric_limits<double>::infinity();
  for (const auto& d : cluster.devices) {
    const auto& dev = profile.device(d.figures());
    capacity = std::min(capacity, dev.memory_capacity_bytes - dev.memory_reserved_bytes);
  }
  r.memory_capacity_bytes = capacity;
  double peak = -1;
  for (const auto& sm : r.memory) {
    if (sm.memory.total_bytes() > peak) {
      peak = sm.memory.total_bytes();
      r.peak_memory_stage = sm.stage;
    }
  }
  r.fits = peak <= capacity;

  // Communication volume per step by link class: each collective's bytes per device × its members ×
  // how many times the step runs it.
  const auto& g = step.tasks;
  std::vector<std::int64_t> runs_of(g.collectives.size(), 0);
  for (TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == TaskKind::Collective) ++runs_of[g.owner[t]];
  // Under the replica shortcut a collective inside the simulated replica stands for one per replica:
  // it counts dp / (data-parallel coordinates its group spans) times.
  const double dp_replicas =
      step.replica_shortcut ? static_cast<double>(plan.mesh.axes[static_cast<std::size_t>(plan.dp_axis)].size) : 1.0;
  for (std::size_t c = 0; c < g.collectives.size(); ++c) {
    const auto& spec = g.collectives[c];
    const auto members = static_cast<double>(spec.kind == CollectiveKind::SendRecv ? 1 : g.group(spec.group).size());
    double replicas = 1;
    if (step.replica_shortcut) {
      std::set<std::int64_t> dp_coords;
      for (std::int64_t d : g.group(spec.group)) dp_coords.insert(plan.mesh.coords_of(d)[static_cast<std::size_t>(plan.dp_axis)]);
      replicas = dp_replicas / static_cast<double>(dp_coords.size());
    }
    const auto times = static_cast<double>(runs_of[c]) * replicas;
    r.intra_node_bytes += collectives[c].intra_bytes_per_device * members * times;
    r.inter_node_bytes += collectives[c].inter_bytes_per_device * members * times;
  }
  if (step.loader) r.input = input_figures(*step.loader);
  return r;
}

InputFigures input_figures(const LoaderCosts& lc) {
  InputFigures f;
  f.placement = std::string(data::to_string(lc.load.placement));
  f.threads_per_host = lc.threads;
  f.prefetch = lc.prefetch;
  for (std::size_t h = 0; h < lc.load.samples_read_per_host.size(); ++h) {
    const std::int64_t samples = lc.load.samples_read_per_host[h];
    if (samples == 0) continue;
    ++f.hosts_loading;
    f.samples_read += samples;
    if (lc.host_step_s[h] > f.loader_step_s) {
      f.loader_step_s = lc.host_step_s[h];
      f.storage_bound = lc.host_storage_bound[h];
    }
  }
  f.read_bytes = lc.load.read_bytes;
  f.host_to_device_bytes = lc.load.host_to_device_bytes;
  f.device_to_device_bytes = lc.load.device_to_device_bytes;
  f.network_bytes = lc.load.network_bytes;
  return f;
}

std::vector<CollectiveFlows> collective_flows_of(const TaskGraph& tasks, const Cluster& cluster, const std::vector<CollectiveEstimate>& collectives) {
  PARASIM_CHECK(collectives.size() == tasks.collectives.size(), "one estimate per collective of the task graph");
  std::vector<CollectiveFlows> out;
  out.reserve(collectives.size());
  ClusterFor on(cluster);
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const CollectiveSpec& c = tasks.collectives[i];
    out.push_back(collective_flows(on(c), c.kind, tasks.group(c.group), c.bytes, collectives[i].algorithm, c.root));
  }
  return out;
}

}  // namespace parasim::sim
