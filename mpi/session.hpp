#pragma once
/// MPI for `mpirun -np N parasim search …` (Open MPI, loaded only then: libparasim_mpi.so,
/// mpi/backend.hpp): the search's candidates are spread over the
/// ranks and every rank gathers every figure, so all ranks rank alike and rank 0 alone prints and
/// writes. MPI starts only when a launcher started this process (it set OMPI_COMM_WORLD_SIZE or
/// PMIX_RANK): a plain `parasim search` needs no launcher and runs as one process. A build without
/// MPI (CMake found none) always runs as one process and says so under a launcher.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/gpu.hpp"
#include "calibrate/nccl_tests.hpp"
#include "exec/transport.hpp"
#include "strategies/search/executor.hpp"

namespace parasim::mpi {

class Backend;  // mpi/backend.hpp: MPI itself, in libparasim_mpi.so

/// Whether this build has MPI.
[[nodiscard]] bool available();
/// Whether a launcher (mpirun, srun with PMIx) started this process.
[[nodiscard]] bool launched_by_mpirun();
/// This host's cores over the ranks Open MPI started on it (every core without a launcher), at least 1:
/// the threads each rank computes on by default.
[[nodiscard]] int cores_per_rank();
/// This rank's index among the ranks on its host (0 without a launcher): its GPU on a GPU host.
[[nodiscard]] int local_rank();

/// MPI for the lifetime of the object (MPI_Init … MPI_Finalize) when launched by mpirun and the
/// build has MPI; one process otherwise. At most one at a time per process (MPI initialises once).
class Session {
 public:
  /// `threads`: several threads of the process call MPI at once (MPI_THREAD_MULTIPLE, as `parasim
  /// execute`'s stream threads do); a library that cannot is a PlanError naming the level it gave.
  explicit Session(bool threads = false);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  [[nodiscard]] bool active() const { return active_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  /// Why MPI is not used under a launcher ("this build has no MPI"), or "".
  [[nodiscard]] const std::string& note() const { return note_; }

  /// An executor spreading tasks over the ranks, round-robin by index, each rank running its share on
  /// `threads` threads, and gathering every record on every rank (MPI_Allgatherv). When a task fails
  /// on any rank every rank throws: the failing rank its own error, the others a PlanError naming it.
  /// Without MPI: a ThreadExecutor.
  [[nodiscard]] std::unique_ptr<strategies::search::Executor> executor(unsigned threads) const;

  /// `parasim execute`'s transport over the world's ranks, one device per rank (rank = device id):
  /// communicators per (group, stream), non-blocking MPI collectives and sends polled to completion
  /// (mpi/execute_transport.cpp). Precondition: active() and the session was made with threads.
  /// `part` >= 0: the transport of the ranks that passed the same `part` (each rank calls it), ranks
  /// numbered in world order: one replica's ranks of a local-update plan.
  [[nodiscard]] std::unique_ptr<exec::Transport> execute_transport(int part = -1) const;
  /// An all-reduce (sum of floats, polled as the executor polls) over the ranks that passed the same
  /// `part` (each rank calls this once): a local update's replicas' corresponding ranks. The
  /// function must be dropped before the session ends.
  [[nodiscard]] std::function<void(float*, std::size_t)> all_reduce_among(int part) const;
  /// A federated round's transfers between a server (rank 0) and its clients (every other rank),
  /// each a point-to-point message polled as the executor polls, all in flight at once, as a server
  /// sends and receives over its one link: send_to_clients gives every client rank 0's `count`
  /// floats of `data`; gather_from_clients gives rank 0 each client's `count` floats in `all`
  /// (client i's at (i − 1)·count; `all` holds (size − 1)·count on rank 0, is unused elsewhere).
  /// Every rank calls each. Precondition: active().
  void send_to_clients(float* data, std::size_t count) const;
  void gather_from_clients(const float* mine, std::size_t count, float* all) const;
  /// The same for `parasim execute --backend cuda`: NCCL communicators per (group, stream) and per
  /// (sending rank, receiving rank, stream), bootstrapped over MPI, on CUDA device `gpu`; barriers,
  /// gathers and aborts over MPI (mpi/execute_nccl_transport.cpp). Where the build has no NCCL, a
  /// PlanError saying so. Precondition: active() and the session was made with threads.
  [[nodiscard]] std::unique_ptr<exec::Transport> execute_nccl_transport(int gpu) const;

  /// `parasim calibrate --backend mpi`: a sweep of one collective over every rank at each of `bytes`
  /// (nccl-tests' size convention: all_reduce and reduce_scatter the bytes each rank puts in,
  /// all_gather the bytes each gets out, sendrecv the bytes each sends to the next rank while
  /// receiving from the previous), floats summed, run as `parasim execute` runs it — MPI's
  /// non-blocking call polled to completion with backing-off sleeps (mpi/polling.hpp) — and timed as
  /// nccl-tests times it: `warmup` calls, then the mean of rounds of `iterations` calls (the slowest
  /// rank's each round) until the rounds took 50 ms. Returned
  /// on every rank as an nccl-tests log of that collective, bus bandwidths by nccl-tests' factors
  /// (ranks: the world's size; hosts: distinct MPI_Get_processor_name). Precondition: active().
  [[nodiscard]] calibrate::NcclTestsLog collective_sweep(calibrate::NcclTest test, const std::vector<double>& bytes, int warmup, int iterations) const;

  /// `parasim calibrate --backend mpi`: what compute and a collective of `test` cost each other on
  /// every rank, as `parasim execute` runs them — an sgemm of gemm_n³ on `blas_threads` OpenBLAS
  /// threads, and the collective of `bytes` over every rank (collective_sweep's sizes) polled by
  /// another thread (mpi/polling.hpp) — each timed alone and then beside the other: the GEMM beside
  /// calls back to back, each call beside the GEMMs after 5 ms of them alone, as a step meets its
  /// collectives (mean times of 41 runs up to 16 MiB; each side the slowest rank's, the same on
  /// every rank). Precondition: active().
  [[nodiscard]] calibrate::InterferenceMeasurement interference(calibrate::NcclTest test, std::int64_t gemm_n, double bytes, int blas_threads) const;

  /// `parasim calibrate --backend mpi`: how far apart the ranks run the same work at once — every
  /// rank times the same block of the executor's kernels (sgemms of 512³ on `blas_threads` threads and
  /// memory-bound passes over 64 MiB), all started together, round after round; the same on every
  /// rank. Precondition: active().
  [[nodiscard]] calibrate::RankSpreadMeasurement rank_spread(int blas_threads) const;

  /// Returns once every rank has called it (MPI_Barrier over every rank): `parasim calibrate
  /// --backend mpi` keeps its ranks' kernel sweeps in step with it (calibrate::CpuOptions::in_step).
  /// Precondition: active().
  void barrier() const;

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::string note_;
  std::unique_ptr<Backend> backend_;  ///< under a launcher, with MPI: MPI until the session ends
};

}  // namespace parasim::mpi
