// The CUDA and NCCL measurements through libparasim_gpu.so (exec/gpu_plugin.hpp), loaded on first use.
#include "calibrate/gpu.hpp"
#include "exec/gpu_plugin.hpp"

namespace parasim::calibrate {

std::variant<CudaMeasurement, Unavailable> measure_cuda(const CudaOptions& options) {
  std::string why;
  const exec::GpuPlugin* plugin = exec::gpu_plugin(&why);
  if (!plugin || !plugin->measure_cuda) return Unavailable{plugin ? "this build's GPU library has no CUDA calibration" : why};
  return plugin->measure_cuda(options);
}

std::variant<NcclTestsLog, Unavailable> measure_nccl(const NcclOptions& options) {
  std::string why;
  const exec::GpuPlugin* plugin = exec::gpu_plugin(&why);
  if (!plugin || !plugin->measure_nccl) return Unavailable{plugin ? "this build's GPU library has no NCCL calibration" : why};
  return plugin->measure_nccl(options);
}

std::variant<InterferenceMeasurement, Unavailable> measure_interference(const InterferenceOptions& options) {
  std::string why;
  const exec::GpuPlugin* plugin = exec::gpu_plugin(&why);
  if (!plugin || !plugin->measure_interference) return Unavailable{plugin ? "this build's GPU library has no NCCL calibration" : why};
  return plugin->measure_interference(options);
}

}  // namespace parasim::calibrate
