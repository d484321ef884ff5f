#include "exec/executor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "common/error.hpp"
#include "exec/compute_activity.hpp"
#include "exec/kernels.hpp"

namespace parasim::exec {
namespace {

using sim::TaskGraph;
using sim::TaskId;
using sim::TaskKind;

bool is_send(const TaskGraph& g, TaskId t) {
  return g.kind[t] == TaskKind::Collective && g.collectives[g.owner[t]].kind == sim::CollectiveKind::SendRecv;
}

/// A send's receiving device.
std::int64_t receiver_of(const TaskGraph& g, TaskId t) {
  const auto& spec = g.collectives[g.owner[t]];
  const auto members = g.group(spec.group);
  return members[0] == spec.root ? members[1] : members[0];
}

/// This rank's share of the graph: its streams' queues, the sends it receives (per sending peer and
/// stream, in the sender's issue order) and which tasks it waits on.
struct Share {
  std::vector<std::vector<TaskId>> queues;                            // per stream
  std::map<std::pair<std::int64_t, std::uint8_t>, std::vector<TaskId>> receives;  // (peer, stream) → sends
  std::vector<std::uint8_t> local;                                    // per task: 1 if this rank runs or receives it
};

Share share_of(const TaskGraph& g, std::int64_t device) {
  Share s;
  s.local.assign(g.task_count(), 0);
  const std::size_t streams = g.stream_count();
  for (std::size_t st = 0; st < streams; ++st) {
    const auto q = g.queue_of(static_cast<std::size_t>(device) * streams + st);
    s.queues.emplace_back(q.begin(), q.end());
    for (const TaskId t : q) s.local[t] = 1;
  }
  for (std::int64_t peer = 0; peer < g.devices; ++peer) {
    if (peer == device) continue;
    for (std::size_t st = 0; st < streams; ++st)
      for (const TaskId t : g.queue_of(static_cast<std::size_t>(peer) * streams + st))
        if (is_send(g, t) && g.collectives[g.owner[t]].root == peer && receiver_of(g, t) == device) {
          s.receives[{peer, static_cast<std::uint8_t>(st)}].push_back(t);
          s.local[t] = 1;
        }
  }
  return s;
}

std::size_t floats_of(double bytes) { return static_cast<std::size_t>(std::max(1.0, bytes / sizeof(float))); }

}  // namespace

std::string cannot_execute(const sim::LoweredStep& step, int rank, bool has_input) {
  const TaskGraph& g = step.tasks;
  if (step.replica_shortcut) return "the step was lowered with one data-parallel replica standing for all";
  if (rank < 0 || rank >= g.devices) return "rank " + std::to_string(rank) + " has no device in a plan of " + std::to_string(g.devices);
  const Share s = share_of(g, rank);
  for (const auto& q : s.queues)
    for (const TaskId t : q) {
      if ((g.kind[t] == TaskKind::Copy || g.kind[t] == TaskKind::Load) && !has_input)
        return "task \"" + g.labels[g.label[t]] + "\" is a " + (g.kind[t] == TaskKind::Copy ? "copy" : "load") +
               " of the input pipeline, and the rank has no dataset to load from";
      if (g.kind[t] == TaskKind::Compute && g.work_of(t) == sim::kNoWork)
        return "compute task \"" + g.labels[g.label[t]] + "\" carries no work to run";
      if (g.kind[t] == TaskKind::Collective && g.collectives[g.owner[t]].occupies != sim::CollectiveSpec::kWholeGroup)
        return "collective \"" + g.labels[g.label[t]] + "\" stands for a group it does not occupy";
      if (g.kind[t] != TaskKind::Compute) continue;
      for (const TaskId d : g.deps_of(t))
        if (!s.local[d])
          return "compute task \"" + g.labels[g.label[t]] + "\" depends on task \"" + g.labels[g.label[d]] +
                 "\" of another device through no send or collective";
    }
  return "";
}

RankRecord execute_rank(const strategies::Plan& plan, const sim::LoweredStep& step, Transport& transport, Kernels& kernels,
                        const ExecuteOptions& options) {
  const TaskGraph& g = step.tasks;
  const int rank = transport.rank();
  PARASIM_CHECK(cannot_execute(step, rank, options.input != nullptr).empty() && kernels.refuses(plan).empty(), "the step can run on this rank");
  const Share share = share_of(g, rank);
  const std::size_t n = g.task_count();
  auto done = std::make_unique<std::atomic<std::uint8_t>[]>(n);

  // A lane per stream, then one per (peer, stream) receiver. Its buffers live across steps, as a
  // framework's allocator keeps its blocks: the timed steps touch no fresh pages.
  kernels.set_lanes(share.queues.size() + share.receives.size());
  // Every lane's message buffer at its largest before the first step (a GPU allocation while another
  // thread's collective is in flight can stall the device).
  double largest = 0;
  for (const auto& spec : g.collectives) largest = std::max(largest, spec.bytes);
  for (std::size_t lane = 0; lane < share.queues.size() + share.receives.size(); ++lane) (void)kernels.message_buffer(lane, floats_of(largest));
  RankRecord record;
  record.rank = rank;
  for (int iteration = 0; iteration < options.warmup_steps + options.steps; ++iteration) {
    for (std::size_t t = 0; t < n; ++t) done[t].store(0, std::memory_order_relaxed);
    RankStep out;
    std::mutex out_mutex;
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    transport.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    auto ns_since = [&](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
    };
    auto finish = [&](TaskId t) {
      done[t].store(1, std::memory_order_release);
      done[t].notify_all();
    };
    auto fail = [&](std::exception_ptr e) {
      if (transport.size() > 1) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          std::cerr << "parasim: execute: rank " << rank << " failed: " << x.what() << "\n";
        }
        transport.abort_all(1);
      }
      std::lock_guard lock(out_mutex);
      if (!failure) failure = e;
      failed = true;
      for (std::size_t t = 0; t < n; ++t) finish(static_cast<TaskId>(t));  // release every waiter
    };

    std::vector<std::thread> threads;
    for (std::size_t st = 0; st < share.queues.size(); ++st) {
      if (share.queues[st].empty()) continue;
      threads.emplace_back([&, st] {
        try {
          std::vector<double> passes;
          RankStep mine;
          for (const TaskId t : share.queues[st]) {
            for (const TaskId d : g.deps_of(t))
              if (share.local[d])
                while (done[d].load(std::memory_order_acquire) == 0) done[d].wait(0, std::memory_order_acquire);
            if (failed) return;
            const auto start = std::chrono::steady_clock::now();
            if (g.kind[t] == TaskKind::Compute) {
              const Computing busy;  // this rank's communication threads wait yielding meanwhile
              passes.clear();
              const sim::WorkId w = g.work_of(t);
              kernels.at_micro_batch(st, g.micro_batch[t]);
              kernels.run(w, st, passes);
              const auto& cw = step.work.computes[w];
              for (std::size_t k = 0; k < passes.size(); ++k) {
                mine.pass_task.push_back(t);
                mine.pass_op.push_back(cw.optimizer_stage >= 0 ? kOptimizerPass : cw.ops_begin + static_cast<std::uint32_t>(k));
                mine.pass_ns.push_back(static_cast<std::int64_t>(passes[k] * 1e9));
              }
            } else if (g.kind[t] == TaskKind::Load) {
              const Computing busy;
              options.input->load();
            } else if (g.kind[t] == TaskKind::Copy) {
              const Computing busy;
              options.input->copy(kernels.message_buffer(st, options.input->floats()));
            } else if (is_send(g, t)) {
              const auto& spec = g.collectives[g.owner[t]];
              transport.send(static_cast<int>(receiver_of(g, t)), static_cast<std::uint8_t>(st), kernels.message_buffer(st, floats_of(spec.bytes)),
                             floats_of(spec.bytes));
            } else {
              transport.collective(g.owner[t], static_cast<std::uint8_t>(st), kernels.message_buffer(st, floats_of(g.collectives[g.owner[t]].bytes)));
            }
            const auto end = std::chrono::steady_clock::now();
            mine.task.push_back(t);
            mine.start_ns.push_back(ns_since(start));
            mine.end_ns.push_back(ns_since(end));
            finish(t);
          }
          std::lock_guard lock(out_mutex);
          for (std::size_t k = 0; k < mine.task.size(); ++k) {
            out.task.push_back(mine.task[k]);
            out.start_ns.push_back(mine.start_ns[k]);
            out.end_ns.push_back(mine.end_ns[k]);
          }
          out.pass_task.insert(out.pass_task.end(), mine.pass_task.begin(), mine.pass_task.end());
          out.pass_op.insert(out.pass_op.end(), mine.pass_op.begin(), mine.pass_op.end());
          out.pass_ns.insert(out.pass_ns.end(), mine.pass_ns.begin(), mine.pass_ns.end());
        } catch (...) {
          fail(std::current_exception());
        }
      });
    }
    std::size_t lane = share.queues.size();
    for (const auto& [key, sends] : share.receives) {
      threads.emplace_back([&, key = key, &sends = sends, lane = lane++] {
        try {
          for (const TaskId t : sends) {
            const double bytes = g.collectives[g.owner[t]].bytes;
            transport.receive(static_cast<int>(key.first), key.second, kernels.message_buffer(lane, floats_of(bytes)), floats_of(bytes));
            finish(t);
          }
        } catch (...) {
          fail(std::current_exception());
        }
      });
    }
    for (auto& th : threads) th.join();
    if (failure) std::rethrow_exception(failure);
    if (iteration >= options.warmup_steps) record.steps.push_back(std::move(out));
  }
  return record;
}

namespace {

struct Writer {
  std::vector<std::byte> bytes;
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put<std::uint64_t>(v.size());
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
};

struct Reader {
  std::span<const std::byte> bytes;
  std::size_t at = 0;
  template <class T>
  T get() {
    PARASIM_CHECK(at + sizeof(T) <= bytes.size(), "a rank record is complete");
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto count = get<std::uint64_t>();
    PARASIM_CHECK(count <= (bytes.size() - at) / sizeof(T), "a rank record is complete");
    std::vector<T> v(count);
    if (count > 0) std::memcpy(v.data(), bytes.data() + at, count * sizeof(T));  // an empty vector's data() may be null
    at += count * sizeof(T);
    return v;
  }
};

}  // namespace

std::vector<std::byte> to_bytes(const RankRecord& r) {
  Writer w;
  w.put<std::int32_t>(r.rank);
  w.put<std::uint64_t>(r.steps.size());
  for (const auto& s : r.steps) {
    w.put_vector(s.task);
    w.put_vector(s.start_ns);
    w.put_vector(s.end_ns);
    w.put_vector(s.pass_task);
    w.put_vector(s.pass_op);
    w.put_vector(s.pass_ns);
  }
  return w.bytes;
}

RankRecord record_from_bytes(std::span<const std::byte> bytes) {
  Reader r{bytes};
  RankRecord out;
  out.rank = r.get<std::int32_t>();
  const auto steps = r.get<std::uint64_t>();
  PARASIM_CHECK(steps <= bytes.size(), "a rank record is complete");
  for (std::uint64_t k = 0; k < steps; ++k) {
    RankStep s;
    s.task = r.get_vector<TaskId>();
    s.start_ns = r.get_vector<std::int64_t>();
    s.end_ns = r.get_vector<std::int64_t>();
    s.pass_task = r.get_vector<TaskId>();
    s.pass_op = r.get_vector<std::uint32_t>();
    s.pass_ns = r.get_vector<std::int64_t>();
    out.steps.push_back(std::move(s));
  }
  return out;
}

}  // namespace parasim::exec
