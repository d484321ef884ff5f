// simulate_simgrid: runs the simulation (simgrid_run.cpp) in a child process, because SimGrid's
// engine is process-global and its clock carries over between runs. The child writes the timeline
// straight into memory shared with the parent (an anonymous shared mapping made before the fork),
// so nothing is copied through a pipe; a pipe carries only the child's console output, kept for the
// error message should the child fail.
#include "sim/engine/simgrid_engine.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>

#include "common/error.hpp"
#include "common/plugin.hpp"
#include "sim/engine/simgrid_run.hpp"

namespace parasim::sim {

namespace simgrid_detail {

const SimgridPlugin& simgrid_plugin() {
  return plugin_table<SimgridPlugin>("libparasim_simgrid.so", "parasim_simgrid_plugin", kSimgridPluginVersion, false, "--backend simgrid: SimGrid");
}

}  // namespace simgrid_detail

namespace {

struct Header {
  int status = 0;  ///< 0 not finished, 1 done, 2 failed, 3 the plan cannot run (PlanError)
  std::atomic<std::uint64_t> finished{0};  ///< tasks finished so far, for the parent's progress
  std::int64_t makespan_ps = 0;
  std::int64_t activities = 0;
  std::int64_t communications = 0;
  std::int64_t synchronisations = 0;
  double run_cpu_s = 0;
  double run_wall_s = 0;
  char message[4096] = {};
};

/// An anonymous shared mapping, unmapped when it goes out of scope.
class SharedMemory {
 public:
  explicit SharedMemory(std::size_t bytes) : bytes_(bytes) {
    data_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED) throw InternalError("cannot map " + std::to_string(bytes_) + " bytes for the SimGrid run: " + std::strerror(errno));
  }
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory() { munmap(data_, bytes_); }
  [[nodiscard]] void* data() const { return data_; }

 private:
  std::size_t bytes_;
  void* data_;
};

/// The last `keep` characters the child printed (SimGrid's own diagnostics when it aborts), read
/// until the child closes its end; `tick` is called whenever 0.2 s pass with nothing to read.
std::string drain(int fd, std::size_t keep, const std::function<void()>& tick) {
  std::string tail;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      tick();
      continue;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    tail.append(buf, static_cast<std::size_t>(n));
    if (tail.size() > 2 * keep) tail.erase(0, tail.size() - keep);
  }
  if (tail.size() > keep) tail.erase(0, tail.size() - keep);
  return tail;
}

}  // namespace

SimGridRun simulate_simgrid(const TaskGraph& graph, const Cluster& cluster, std::span<const CollectiveFlows> flows,
                            std::span<const double> device_speed_flops, const Interference& interference, ProgressSink* progress) {
  // Loaded here, before the fork: the child must not take the dynamic loader's locks, which another
  // thread of this process may have held when it forked.
  const simgrid_detail::SimgridPlugin& simgrid = simgrid_detail::simgrid_plugin();
  const std::size_t tasks = graph.task_count();
  SharedMemory memory(sizeof(Header) + 2 * tasks * sizeof(std::int64_t) + 1);
  auto* header = new (memory.data()) Header{};
  auto* times = reinterpret_cast<std::int64_t*>(static_cast<char*>(memory.data()) + sizeof(Header));

  int console[2];
  if (pipe(console) != 0) throw InternalError(std::string("cannot make a pipe for the SimGrid run: ") + std::strerror(errno));
  // Whatever this process buffered must not be printed twice, by it and by the child.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    close(console[0]);
    close(console[1]);
    throw InternalError(std::string("cannot start the SimGrid process: ") + std::strerror(errno));
  }
  if (child == 0) {
    close(console[0]);
    dup2(console[1], STDOUT_FILENO);
    dup2(console[1], STDERR_FILENO);
    close(console[1]);
    try {
      simgrid_detail::Output out{{times, tasks}, {times + tasks, tasks}, 0, 0, 0, 0, 0, 0, &header->finished};
      simgrid.run(graph, cluster, flows, device_speed_flops, interference, out);
      header->makespan_ps = out.makespan_ps;
      header->activities = out.activities;
      header->communications = out.communications;
      header->synchronisations = out.synchronisations;
      header->run_cpu_s = out.run_cpu_s;
      header->run_wall_s = out.run_wall_s;
      header->status = 1;
    } catch (const PlanError& e) {
      std::snprintf(header->message, sizeof header->message, "%s", e.what());
      header->status = 3;
    } catch (const std::exception& e) {
      std::snprintf(header->message, sizeof header->message, "%s", e.what());
      header->status = 2;
    }
    std::fflush(nullptr);
    // _exit: the child must not run the parent's exit handlers or flush its copies of the parent's
    // streams.
    _exit(0);
  }
  close(console[1]);
  const std::string output = drain(console[0], 2000, [&] {
    if (progress) progress->update(static_cast<std::size_t>(header->finished.load(std::memory_order_relaxed)));
  });
  close(console[0]);
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0)
    if (errno != EINTR) throw InternalError(std::string("lost the SimGrid process: ") + std::strerror(errno));

  if (header->status == 3) throw PlanError(header->message);
  if (header->status == 2) throw InternalError(std::string("the SimGrid simulation failed: ") + header->message);
  if (header->status != 1) {
    std::string how = WIFSIGNALED(wstatus) ? "was killed by signal " + std::to_string(WTERMSIG(wstatus))
                                           : "exited with status " + std::to_string(WEXITSTATUS(wstatus));
    throw InternalError("the SimGrid simulation " + how + " before it finished" + (output.empty() ? std::string() : "; it said:\n" + output));
  }
  SimGridRun run;
  run.timeline.start_ps.assign(times, times + tasks);
  run.finish_ps.assign(times + tasks, times + 2 * tasks);
  run.timeline.makespan = Picoseconds(header->makespan_ps);
  run.activities = header->activities;
  run.communications = header->communications;
  run.synchronisations = header->synchronisations;
  run.run_cpu_s = header->run_cpu_s;
  run.run_wall_s = header->run_wall_s;
  return run;
}

}  // namespace parasim::sim
