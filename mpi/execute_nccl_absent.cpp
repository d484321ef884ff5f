// This build has no NCCL transport for `parasim execute --backend cuda` (CMake found no CUDA toolkit
// with NCCL, or no MPI): the command says so and exits 3.
#include "common/error.hpp"
#include "mpi/session.hpp"

namespace parasim::mpi {

std::unique_ptr<exec::Transport> Session::execute_nccl_transport(int) const {
  throw PlanError("--backend cuda: this build of parasim has no NCCL transport: no CUDA toolkit with NCCL, or no MPI, was found when it was configured");
}

}  // namespace parasim::mpi
