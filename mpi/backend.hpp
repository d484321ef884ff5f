#pragma once
// Internal to mpi/: what libparasim_mpi.so — the one part of parasim that links MPI (common/plugin.hpp)
// — provides to mpi::Session (session.hpp, whose methods each forward here). Loaded only under a
// launcher, so that no other command maps Open MPI.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "calibrate/gpu.hpp"
#include "calibrate/nccl_tests.hpp"
#include "exec/transport.hpp"
#include "strategies/search/executor.hpp"

namespace parasim::mpi {

/// MPI for its lifetime: made by MPI_Init (MpiPlugin::start), MPI_Finalize when destroyed. Each
/// method is the Session method of its name (session.hpp says what it does).
class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual std::unique_ptr<strategies::search::Executor> executor(unsigned threads) const = 0;
  [[nodiscard]] virtual std::unique_ptr<exec::Transport> execute_transport(int part) const = 0;
  [[nodiscard]] virtual std::function<void(float*, std::size_t)> all_reduce_among(int part) const = 0;
  virtual void send_to_clients(float* data, std::size_t count) const = 0;
  virtual void gather_from_clients(const float* mine, std::size_t count, float* all) const = 0;
  [[nodiscard]] virtual calibrate::NcclTestsLog collective_sweep(calibrate::NcclTest test, const std::vector<double>& bytes, int warmup, int iterations) const = 0;
  [[nodiscard]] virtual calibrate::InterferenceMeasurement interference(calibrate::NcclTest test, std::int64_t gemm_n, double bytes, int blas_threads) const = 0;
  [[nodiscard]] virtual calibrate::RankSpreadMeasurement rank_spread(int blas_threads) const = 0;
  virtual void barrier() const = 0;
};

/// libparasim_mpi.so's table.
struct MpiPlugin {
  int version = 1;  ///< kMpiPluginVersion of the build that made it
  /// MPI_Init_thread (MPI_THREAD_MULTIPLE when `threads`; a PlanError when the library gives less).
  std::unique_ptr<Backend> (*start)(bool threads) = nullptr;
};

inline constexpr int kMpiPluginVersion = 3;

}  // namespace parasim::mpi
