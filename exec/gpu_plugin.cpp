#include "exec/gpu_plugin.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <vector>

namespace parasim::exec {
namespace {

struct Loaded {
  const GpuPlugin* plugin = nullptr;
  std::string why;
};

Loaded load() {
#ifndef PARASIM_GPU_PLUGIN_NAME
  return {nullptr, "this build of parasim has no GPU support: no CUDA toolkit with NCCL was found when it was configured"};
#else
  // Beside the binary (build/parasim), or one folder up (build/tests/parasim_tests), else where the
  // build wrote it.
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / PARASIM_GPU_PLUGIN_NAME);
    candidates.push_back(self.parent_path().parent_path() / PARASIM_GPU_PLUGIN_NAME);
  }
  candidates.push_back(std::filesystem::path(PARASIM_GPU_PLUGIN_DIR) / PARASIM_GPU_PLUGIN_NAME);
  for (const auto& path : candidates) {
    if (!std::filesystem::exists(path, ec)) continue;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return {nullptr, "cannot load " + path.string() + ": " + ::dlerror()};
    using Entry = const GpuPlugin* (*)();
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "parasim_gpu_plugin"));
    if (!entry) return {nullptr, path.string() + " has no parasim_gpu_plugin entry: it is not this build's GPU library"};
    const GpuPlugin* plugin = entry();
    if (!plugin || plugin->version != kGpuPluginVersion) return {nullptr, path.string() + " is another build's GPU library (its table's version differs)"};
    return {plugin, ""};
  }
  return {nullptr, std::string("this build's GPU library, ") + PARASIM_GPU_PLUGIN_NAME + ", is not beside the parasim binary nor in " + PARASIM_GPU_PLUGIN_DIR};
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
