#include "exec/gpu_plugin.hpp"

#include "common/plugin.hpp"

namespace parasim::exec {

const GpuPlugin* gpu_plugin(std::string* why) {
#ifndef PARASIM_GPU_PLUGIN
  if (why) *why = "this build of parasim has no GPU support: no CUDA toolkit with NCCL was found when it was configured";
  return nullptr;
#else
  return find_plugin_table<GpuPlugin>("libparasim_gpu.so", "parasim_gpu_plugin", kGpuPluginVersion, false, why);
#endif
}

}  // namespace parasim::exec
