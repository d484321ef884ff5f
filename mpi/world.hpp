#pragma once
// Internal to libparasim_mpi.so (mpi/backend.hpp): MPI itself, for mpi::Session.
#include <mpi.h>

#include "mpi/backend.hpp"

namespace parasim::mpi {

class World final : public Backend {
 public:
  /// MPI_Init_thread unless MPI was initialised already (MPI_THREAD_MULTIPLE when `threads`).
  explicit World(bool threads);
  /// MPI_Finalize unless it was called already.
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::unique_ptr<strategies::search::Executor> executor(unsigned threads) const override;
  [[nodiscard]] std::unique_ptr<exec::Transport> execute_transport(int part) const override;  // execute_transport.cpp
  [[nodiscard]] std::function<void(float*, std::size_t)> all_reduce_among(int part) const override;  // execute_transport.cpp
  void send_to_clients(float* data, std::size_t count) const override;  // execute_transport.cpp
  void gather_from_clients(const float* mine, std::size_t count, float* all) const override;  // execute_transport.cpp
  [[nodiscard]] calibrate::NcclTestsLog collective_sweep(calibrate::NcclTest test, const std::vector<double>& bytes, int warmup, int iterations) const override;
  [[nodiscard]] calibrate::InterferenceMeasurement interference(calibrate::NcclTest test, std::int64_t gemm_n, double bytes, int blas_threads) const override;
  [[nodiscard]] calibrate::RankSpreadMeasurement rank_spread(int blas_threads) const override;
  void barrier() const override;

 private:
  int rank_ = 0;
  int size_ = 1;
  /// The ranks on this rank's host, and the window that holds their doorbells (mpi/polling.hpp);
  /// null handles when this rank is alone on its host.
  MPI_Comm host_ = MPI_COMM_NULL;
  MPI_Win doorbells_ = MPI_WIN_NULL;
};

}  // namespace parasim::mpi
