// The GPU executor's own kernels (exec/cuda_kernels.hpp): the memory-bound pass, the row softmax,
// the attention backward's elementwise step and the optimizers' updates — the same arithmetic as the
// CPU executor's (exec/kernels.cpp), one thread per element (per row for the softmax).
#include <cuda_runtime.h>

#include "exec/cuda_elementwise.hpp"

namespace parasim::exec::cuda {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void stream_kernel(float* y, const float* x, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] + 0.0078125f;
}

__global__ void softmax_kernel(const float* x, float* y, std::size_t rows, std::size_t row) {
  const std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + r * row;
  float* out = y + r * row;
  float m = in[0];
  for (std::size_t j = 1; j < row; ++j) m = fmaxf(m, in[j]);
  float sum = 0;
  for (std::size_t j = 0; j < row; ++j) {
    out[j] = __expf(in[j] - m);
    sum += out[j];
  }
  const float inv = 1.0f / sum;
  for (std::size_t j = 0; j < row; ++j) out[j] *= inv;
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

__global__ void fill_kernel(float* x, float value, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = value;
}

}  // namespace

void stream_pass(float* y, const float* x, std::size_t n, cudaStream_t s) {
  if (n) stream_kernel<<<blocks_for(n), kThreads, 0, s>>>(y, x, n);
}
void softmax_rows(const float* x, float* y, std::size_t n, std::size_t row, cudaStream_t s) {
  if (n && row) softmax_kernel<<<blocks_for(n / row), kThreads, 0, s>>>(x, y, n / row, row);
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
void fill(float* x, float value, std::size_t n, cudaStream_t s) {
  if (n) fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, value, n);
}

}  // namespace parasim::exec::cuda
