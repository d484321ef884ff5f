#pragma once
/// Launchers of the GPU executor's own kernels (exec/cuda_elementwise.cu), enqueued on stream `s`.
/// Activations are in the plan's precision (Element); arithmetic is fp32; the optimizer's state is
/// fp32 (master weights and moments, as mixed-precision training keeps them). Built with the CUDA
/// executor only. A launch error is left for cudaGetLastError (the caller checks after each pass).
#include <cuda_runtime.h>

#include <cstddef>

namespace parasim::exec::cuda {

enum class Element { F32, F16, BF16 };
[[nodiscard]] constexpr std::size_t bytes_of(Element e) { return e == Element::F32 ? 4 : 2; }

/// y = x/2 + 1/128 over n elements: 2·n elements' bytes moved, as the CPU executor's memory pass.
void stream_pass(void* y, const void* x, std::size_t n, Element e, cudaStream_t s);
/// A softmax over n elements in rows of `row` (x into y; they may be the same); a last partial row
/// is normalised on its own, as the CPU executor's.
void softmax_rows(const void* x, void* y, std::size_t n, std::size_t row, Element e, cudaStream_t s);
/// n elements set to `value`.
void fill(void* x, float value, std::size_t n, Element e, cudaStream_t s);
/// n elements drawn uniformly from [-value, value] by a hash of their index and `seed`: the same
/// values on every run.
void fill_random(void* x, float value, std::size_t n, unsigned long long seed, Element e, cudaStream_t s);
/// Adam (PyTorch's defaults), SGD with momentum 0.9 and plain SGD over n fp32 parameters.
void adam(float* p, const float* g, float* m, float* v, std::size_t n, cudaStream_t s);
void momentum(float* p, const float* g, float* v, std::size_t n, cudaStream_t s);
void sgd(float* p, const float* g, std::size_t n, cudaStream_t s);

}  // namespace parasim::exec::cuda
