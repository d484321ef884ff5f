#pragma once
/// Launchers of the GPU executor's own kernels (exec/cuda_elementwise.cu), enqueued on stream `s`.
/// Built with the CUDA executor only.
#include <cuda_runtime.h>

#include <cstddef>

namespace parasim::exec::cuda {

/// y = x/2 + 1/128 over n floats: 8·n bytes moved, as the CPU executor's memory-bound pass.
void stream_pass(float* y, const float* x, std::size_t n, cudaStream_t s);
/// A softmax over n floats in rows of `row` (x into y; they may be the same).
void softmax_rows(const float* x, float* y, std::size_t n, std::size_t row, cudaStream_t s);
/// Adam (PyTorch's defaults), SGD with momentum 0.9 and plain SGD over n parameters.
void adam(float* p, const float* g, float* m, float* v, std::size_t n, cudaStream_t s);
void momentum(float* p, const float* g, float* v, std::size_t n, cudaStream_t s);
void sgd(float* p, const float* g, std::size_t n, cudaStream_t s);
/// n floats set to `value`.
void fill(float* x, float value, std::size_t n, cudaStream_t s);

}  // namespace parasim::exec::cuda
