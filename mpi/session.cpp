// mpi::Session without MPI linked: under a launcher it loads libparasim_mpi.so (mpi/backend.hpp) and
// forwards to it; otherwise it is one process and loads nothing.
#include "mpi/session.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "common/error.hpp"
#include "common/plugin.hpp"
#include "mpi/backend.hpp"

namespace parasim::mpi {
namespace {

/// libparasim_mpi.so's table, loaded on the first call. Open MPI's own components are shared
/// libraries it opens itself that find its symbols in the process's global scope (Debian's
/// mca_pml_ob1.so calls 18 ompi_* functions of libmpi without linking it): RTLD_GLOBAL.
const MpiPlugin& mpi_plugin() { return plugin_table<MpiPlugin>("libparasim_mpi.so", "parasim_mpi_plugin", kMpiPluginVersion, true, "MPI"); }

}  // namespace

bool available() {
#ifdef PARASIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int cores_per_rank() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = local ? std::atoi(local) : 1;
  return std::max(1, cores / std::max(1, ranks));
}

int local_rank() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return local ? std::max(0, std::atoi(local)) : 0;
}

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr; }

Session::Session(bool threads) {
  if (!launched_by_mpirun()) return;
  if (!available()) {
    note_ = "this build has no MPI (CMake found none): every rank runs the whole search alone";
    return;
  }
  backend_ = mpi_plugin().start(threads);
  rank_ = backend_->rank();
  size_ = backend_->size();
  active_ = true;
}

Session::~Session() = default;

std::unique_ptr<strategies::search::Executor> Session::executor(unsigned threads) const {
  if (active_) return backend_->executor(threads);
  return std::make_unique<strategies::search::ThreadExecutor>(threads);
}

std::unique_ptr<exec::Transport> Session::execute_transport(int part) const {
  PARASIM_CHECK(active_, "an MPI transport runs under mpirun");
  return backend_->execute_transport(part);
}

std::function<void(float*, std::size_t)> Session::all_reduce_among(int part) const {
  PARASIM_CHECK(active_, "an all-reduce runs under mpirun");
  return backend_->all_reduce_among(part);
}

void Session::send_to_clients(float* data, std::size_t count) const {
  PARASIM_CHECK(active_, "a federated round runs under mpirun");
  backend_->send_to_clients(data, count);
}

void Session::gather_from_clients(const float* mine, std::size_t count, float* all) const {
  PARASIM_CHECK(active_, "a federated round runs under mpirun");
  backend_->gather_from_clients(mine, count, all);
}

calibrate::NcclTestsLog Session::collective_sweep(calibrate::NcclTest test, const std::vector<double>& bytes, int warmup, int iterations) const {
  PARASIM_CHECK(active_ && iterations >= 1 && warmup >= 0, "a collective sweep runs under MPI");
  return backend_->collective_sweep(test, bytes, warmup, iterations);
}

calibrate::InterferenceMeasurement Session::interference(calibrate::NcclTest test, std::int64_t gemm_n, double bytes, int blas_threads) const {
  PARASIM_CHECK(active_ && gemm_n >= 1 && bytes >= sizeof(float), "an interference measurement runs under MPI");
  return backend_->interference(test, gemm_n, bytes, blas_threads);
}

void Session::barrier() const {
  PARASIM_CHECK(active_, "a barrier runs under MPI");
  backend_->barrier();
}

calibrate::RankSpreadMeasurement Session::rank_spread(int blas_threads) const {
  PARASIM_CHECK(active_ && blas_threads >= 1, "a rank spread measurement runs under MPI");
  return backend_->rank_spread(blas_threads);
}

}  // namespace parasim::mpi
