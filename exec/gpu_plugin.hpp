#pragma once
/// The GPU parts of parasim — the CUDA executor's kernels (cuBLAS, cuDNN, our own CUDA kernels), the
/// NCCL transport of `parasim execute --backend cuda`, and the CUDA and NCCL calibration — live in
/// one shared library, libparasim_gpu.so, built beside the `parasim` binary where CMake found the
/// CUDA toolkit. The command loads it, and with it the CUDA libraries, only when a command needs a
/// GPU part (`execute --backend cuda`, `calibrate --backend cuda|nccl`): every other command runs
/// without mapping cuBLAS, cuDNN or NCCL. The library finds the rest of parasim in the process that
/// loads it (the binary exports its symbols), and hands back this table.
#include <memory>
#include <string>
#include <variant>

#include "calibrate/gpu.hpp"
#include "exec/kernels.hpp"
#include "exec/transport.hpp"

namespace parasim::exec {

/// What libparasim_gpu.so provides. A part the library was built without is null.
struct GpuPlugin {
  int version = 2;  ///< kGpuPluginVersion of the build that made it
  std::string (*cuda_unavailable)() = nullptr;
  std::unique_ptr<Kernels> (*make_cuda_kernels)(const models::Graph&, const sim::StepWork&, const strategies::Plan&, int device) = nullptr;
  std::string (*check_cuda_kernels)() = nullptr;  ///< exec/cuda_self_check.hpp
  std::unique_ptr<Transport> (*make_nccl_transport)(std::unique_ptr<Transport> host, int gpu) = nullptr;
  std::variant<calibrate::CudaMeasurement, calibrate::Unavailable> (*measure_cuda)(const calibrate::CudaOptions&) = nullptr;
  std::variant<calibrate::NcclTestsLog, calibrate::Unavailable> (*measure_nccl)(const calibrate::NcclOptions&) = nullptr;
  std::variant<calibrate::InterferenceMeasurement, calibrate::Unavailable> (*measure_interference)(const calibrate::InterferenceOptions&) = nullptr;
};

inline constexpr int kGpuPluginVersion = 2;

/// The loaded library's table, loading it on the first call (thread-safe); null when it cannot be
/// loaded, `why` then saying why (this build has none, the file is missing, or the loader's error,
/// e.g. a CUDA library it needs is not installed).
[[nodiscard]] const GpuPlugin* gpu_plugin(std::string* why = nullptr);

}  // namespace parasim::exec
