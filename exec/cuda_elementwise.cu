// The GPU executor's own kernels (exec/cuda_kernels.hpp): the memory-bound pass, the row softmax and
// the optimizers' updates — the same arithmetic as the CPU executor's (exec/kernels.cpp), in fp32 on
// elements of the plan's precision; one thread per element (per row for the softmax).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "exec/cuda_elementwise.hpp"

namespace parasim::exec::cuda {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ float load(const float* p, std::size_t i) { return p[i]; }
__device__ float load(const __half* p, std::size_t i) { return __half2float(p[i]); }
__device__ float load(const __nv_bfloat16* p, std::size_t i) { return __bfloat162float(p[i]); }
__device__ void store(float* p, std::size_t i, float v) { p[i] = v; }
__device__ void store(__half* p, std::size_t i, float v) { p[i] = __float2half(v); }
__device__ void store(__nv_bfloat16* p, std::size_t i, float v) { p[i] = __float2bfloat16(v); }

template <class T>
__global__ void stream_kernel(T* y, const T* x, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) store(y, i, 0.5f * load(x, i) + 0.0078125f);
}

template <class T>
__global__ void fill_kernel(T* x, float value, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) store(x, i, value);
}

/// Row r covers elements [r·row, min((r+1)·row, n)).
template <class T>
__global__ void softmax_kernel(const T* x, T* y, std::size_t n, std::size_t row, std::size_t rows) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const std::size_t begin = r * row, end = begin + row < n ? begin + row : n;
  float m = load(x, begin);
  for (std::size_t j = begin + 1; j < end; ++j) m = fmaxf(m, load(x, j));
  float sum = 0;
  for (std::size_t j = begin; j < end; ++j) sum += __expf(load(x, j) - m);
  const float inv = 1.0f / sum;
  for (std::size_t j = begin; j < end; ++j) store(y, j, __expf(load(x, j) - m) * inv);
}

__global__ void adam_kernel(float* p, const float* g, float* m, float* v, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float lr = 1e-6f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  m[i] = beta1 * m[i] + (1 - beta1) * g[i];
  v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
  p[i] -= lr * m[i] / (sqrtf(v[i]) + eps);
}

__global__ void momentum_kernel(float* p, const float* g, float* v, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  v[i] = 0.9f * v[i] + g[i];
  p[i] -= 1e-6f * v[i];
}

__global__ void sgd_kernel(float* p, const float* g, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] -= 1e-6f * g[i];
}

/// Calls f with a null pointer of the element type `e` stands for.
template <class F>
void by_element(Element e, F&& f) {
  switch (e) {
    case Element::F32: f(static_cast<float*>(nullptr)); break;
    case Element::F16: f(static_cast<__half*>(nullptr)); break;
    case Element::BF16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
}

}  // namespace

void stream_pass(void* y, const void* x, std::size_t n, Element e, cudaStream_t s) {
  if (!n) return;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    stream_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(x), n);
  });
}

void softmax_rows(const void* x, void* y, std::size_t n, std::size_t row, Element e, cudaStream_t s) {
  if (!n || !row) return;
  const std::size_t rows = (n + row - 1) / row;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    softmax_kernel<T><<<blocks_for(rows), kThreads, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n, row, rows);
  });
}

void fill(void* x, float value, std::size_t n, Element e, cudaStream_t s) {
  if (!n) return;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(x), value, n);
  });
}

void adam(float* p, const float* g, float* m, float* v, std::size_t n, cudaStream_t s) {
  if (n) adam_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, g, m, v, n);
}
void momentum(float* p, const float* g, float* v, std::size_t n, cudaStream_t s) {
  if (n) momentum_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, g, v, n);
}
void sgd(float* p, const float* g, std::size_t n, cudaStream_t s) {
  if (n) sgd_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, g, n);
}

}  // namespace parasim::exec::cuda
