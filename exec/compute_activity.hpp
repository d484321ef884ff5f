#pragma once
/// Whether this process is computing right now: the executor's compute streams (and the interference
/// measurement of `parasim calibrate --backend mpi`, which stands for them) mark each compute task
/// while it runs, and a rank's communication threads read it to choose how to wait
/// (mpi/polling.hpp): testing every 10 µs while the rank has nothing to compute, backing off while it
/// has.
namespace parasim::exec {

/// Compute tasks running in this process at this moment.
[[nodiscard]] bool computing();

/// Marks one compute task running for its lifetime.
class Computing {
 public:
  Computing();
  ~Computing();
  Computing(const Computing&) = delete;
  Computing& operator=(const Computing&) = delete;
};

}  // namespace parasim::exec
