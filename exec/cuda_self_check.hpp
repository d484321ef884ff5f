#pragma once
/// A check of the GPU executor's own CUDA kernels (exec/cuda_elementwise.cu) against a host reference
/// in double precision, on fresh random inputs with a poisoned output: the memory-bound pass (its
/// 16-byte vector path, its tail and its unaligned path) and the row softmax (rows longer than a
/// block, a partial last row), in fp32 and bf16. Built into libparasim_gpu.so with the CUDA executor;
/// a test runs it where a GPU is (tests/exec/gpu_plugin_test.cpp).
#include <string>

namespace parasim::exec {

/// "" when every kernel matches its reference, else what differed and by how much (or the CUDA
/// error). Precondition: a CUDA device is present (cuda_unavailable() is empty).
[[nodiscard]] std::string check_cuda_kernels();

}  // namespace parasim::exec
