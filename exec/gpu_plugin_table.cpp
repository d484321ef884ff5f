// libparasim_gpu.so's table (exec/gpu_plugin.hpp): its own definitions of the GPU functions, which the
// static libraries' loaders call through it. Compiled into the plugin only (cli/CMakeLists.txt).
#include "exec/cuda_kernels.hpp"
#include "exec/cuda_self_check.hpp"
#include "exec/gpu_plugin.hpp"

namespace parasim::mpi {
std::unique_ptr<exec::Transport> make_nccl_transport(std::unique_ptr<exec::Transport> host, int gpu);  // execute_nccl_transport.cpp
}

extern "C" __attribute__((visibility("default"))) const parasim::exec::GpuPlugin* parasim_gpu_plugin() {
  static const parasim::exec::GpuPlugin table = [] {
    parasim::exec::GpuPlugin t;
    t.version = parasim::exec::kGpuPluginVersion;
#ifdef PARASIM_GPU_EXECUTOR
    t.cuda_unavailable = &parasim::exec::cuda_unavailable;
    t.make_cuda_kernels = &parasim::exec::make_cuda_kernels;
    t.check_cuda_kernels = &parasim::exec::check_cuda_kernels;
#endif
#ifdef PARASIM_GPU_NCCL_TRANSPORT
    t.make_nccl_transport = &parasim::mpi::make_nccl_transport;
#endif
    t.measure_cuda = &parasim::calibrate::measure_cuda;
    t.measure_nccl = &parasim::calibrate::measure_nccl;
    t.measure_interference = &parasim::calibrate::measure_interference;
    return t;
  }();
  return &table;
}
