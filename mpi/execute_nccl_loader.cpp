// The NCCL transport of `parasim execute --backend cuda` through libparasim_gpu.so
// (exec/gpu_plugin.hpp), loaded on first use; built without it, the command says why and exits 3.
#include "common/error.hpp"
#include "exec/gpu_plugin.hpp"
#include "mpi/session.hpp"

namespace parasim::mpi {

std::unique_ptr<exec::Transport> Session::execute_nccl_transport(int gpu) const {
  std::string why;
  const exec::GpuPlugin* plugin = exec::gpu_plugin(&why);
  if (!plugin) throw PlanError("--backend cuda: " + why);
  if (!plugin->make_nccl_transport)
    throw PlanError("--backend cuda: this build of parasim has no NCCL transport: no MPI was found when it was configured");
  return plugin->make_nccl_transport(execute_transport(), gpu);
}

}  // namespace parasim::mpi
