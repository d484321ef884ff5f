#pragma once
/// The GPU executor's kernels (`parasim execute --backend cuda`): a compute task's work on one CUDA
/// device, as the CPU executor runs it on a core (exec/kernels.hpp) — matrix products as cuBLAS
/// GEMMs in the plan's precision (fp32, tf32, fp16, bf16; fp32 accumulation), convolutions through
/// cuDNN (forward, backward data and backward filter, each the fastest algorithm cuDNN times on the
/// device; 16-bit plans channels-last),
/// attention as its strided-batched GEMMs and a row softmax, softmax and cross-entropy as a row
/// softmax, every other operator as a memory-bound kernel moving its bytes, the optimizer's update
/// over its state arrays (exec/cuda_elementwise.cu). Each lane has its own CUDA stream, cuBLAS and
/// cuDNN handles and buffers; each operator pass is timed with CUDA events on the lane's stream.
///
/// Built where CMake found the CUDA toolkit, cuDNN and a CUDA compiler (exec/CMakeLists.txt);
/// built into libparasim_gpu.so and reached through exec/cuda_loader.cpp (exec/gpu_plugin.hpp), which
/// says why where the build has none.
#include <memory>
#include <string>

#include "exec/kernels.hpp"

namespace parasim::exec {

/// Why this process cannot run the CUDA executor — the build has none, or CUDA finds no device (its
/// error string) — or "" when it can.
[[nodiscard]] std::string cuda_unavailable();

/// The kernels on CUDA device `device` (this rank's GPU; taken modulo the devices present).
/// Precondition: cuda_unavailable() is empty.
[[nodiscard]] std::unique_ptr<Kernels> make_cuda_kernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan,
                                                         int device);

}  // namespace parasim::exec
