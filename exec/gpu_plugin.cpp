#include "exec/gpu_plugin.hpp"

#include <mutex>

#include "common/plugin.hpp"

namespace parasim::exec {
namespace {

struct Loaded {
  const GpuPlugin* plugin = nullptr;
  std::string why;
};

Loaded load() {
#ifndef PARASIM_GPU_PLUGIN
  return {nullptr, "this build of parasim has no GPU support: no CUDA toolkit with NCCL was found when it was configured"};
#else
  Loaded loaded;
  loaded.plugin = static_cast<const GpuPlugin*>(load_plugin("libparasim_gpu.so", "parasim_gpu_plugin", kGpuPluginVersion, false, loaded.why));
  return loaded;
#endif
}

}  // namespace

const GpuPlugin* gpu_plugin(std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (why) *why = loaded.why;
  return loaded.plugin;
}

}  // namespace parasim::exec
