// The CUDA executor through libparasim_gpu.so (exec/gpu_plugin.hpp), loaded on first use.
#include "common/error.hpp"
#include "exec/cuda_kernels.hpp"
#include "exec/gpu_plugin.hpp"

namespace parasim::exec {

std::string cuda_unavailable() {
  std::string why;
  const GpuPlugin* plugin = gpu_plugin(&why);
  if (!plugin) return why;
  if (!plugin->cuda_unavailable || !plugin->make_cuda_kernels)
    return "this build of parasim has no CUDA executor: no cuDNN or no CUDA compiler was found when it was configured";
  return plugin->cuda_unavailable();
}

std::unique_ptr<Kernels> make_cuda_kernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int device) {
  const GpuPlugin* plugin = gpu_plugin();
  PARASIM_CHECK(plugin && plugin->make_cuda_kernels, "the CUDA executor is loaded (cuda_unavailable() was empty)");
  return plugin->make_cuda_kernels(graph, work, plan, device);
}

}  // namespace parasim::exec
