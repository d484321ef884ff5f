// The GPU executor's own kernels (exec/cuda_kernels.hpp): the memory-bound pass, the row softmax and
// the optimizers' updates — the same arithmetic as the CPU executor's (exec/kernels.cpp), in fp32 on
// elements of the plan's precision; one thread per element (per row for the softmax).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "exec/cuda_elementwise.hpp"

namespace parasim::exec::cuda {
namespace {

constexpr unsigned kThreads = 256;
/// The most blocks one launch of a block-a-row kernel takes (a grid's x extent is below 2³¹).
constexpr std::size_t kMaxBlocks = std::size_t(1) << 30;

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

/// 16 bytes of elements as one load and one store (as PyTorch's vectorised elementwise kernels move
/// them): the same arithmetic as stream_kernel over `vectors` groups of 16 bytes, grid-strided.
template <class T>
__global__ void stream_vector_kernel(T* y, const T* x, std::size_t vectors) {
  constexpr int kPer = 16 / sizeof(T);
  union Pack {
    uint4 bits;
    T e[kPer];
  };
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vectors; i += stride) {
    Pack p;
    p.bits = reinterpret_cast<const uint4*>(x)[i];
#pragma unroll
    for (int j = 0; j < kPer; ++j) store(p.e, j, 0.5f * load(p.e, j) + 0.0078125f);
    reinterpret_cast<uint4*>(y)[i] = p.bits;
  }
}

template <class T>
__global__ void fill_kernel(T* x, float value, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) store(x, i, value);
}

/// x[i] uniform in [-value, value], from a hash of i and the seed (SplitMix64's finaliser, Steele,
/// Lea and Flood, OOPSLA 2014): operands that vary as real ones do, since tensor cores draw less
/// power, and run faster, on constant or zero data than on real values.
template <class T>
__global__ void fill_random_kernel(T* x, float value, std::size_t n, unsigned long long seed) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  unsigned long long z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1) from 24 bits
  store(x, i, value * (2 * u - 1));
}

/// `v` combined by `op` over the block's threads (every thread gets the result), through warp
/// shuffles and `shared` (a float per warp); `identity` is op's neutral value. blockDim.x is a
/// multiple of 32.
template <class Op>
__device__ float block_reduce(float v, float* shared, float identity, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // `shared` may still be read by an earlier reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// A block a row (as PyTorch's and Apex's softmax kernels for rows beyond a warp's registers): row r
/// covers elements [r·row, min((r+1)·row, n)); its threads stride the row together, so every read is
/// coalesced — the maximum, the sum of exponentials, then the normalised values written.
template <class T>
__global__ void softmax_kernel(const T* x, T* y, std::size_t n, std::size_t row) {
  __shared__ float shared[32];
  const std::size_t begin = blockIdx.x * row, end = begin + row < n ? begin + row : n;
  float m = -INFINITY;
  for (std::size_t j = begin + threadIdx.x; j < end; j += blockDim.x) m = fmaxf(m, load(x, j));
  m = block_reduce(m, shared, -INFINITY, [](float a, float b) { return fmaxf(a, b); });
  float sum = 0;
  for (std::size_t j = begin + threadIdx.x; j < end; j += blockDim.x) sum += __expf(load(x, j) - m);
  sum = block_reduce(sum, shared, 0.0f, [](float a, float b) { return a + b; });
  const float inv = 1.0f / sum;
  for (std::size_t j = begin + threadIdx.x; j < end; j += blockDim.x) store(y, j, __expf(load(x, j) - m) * inv);
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
    constexpr std::size_t per = 16 / sizeof(T);
    std::size_t done = 0;
    if ((reinterpret_cast<std::uintptr_t>(x) | reinterpret_cast<std::uintptr_t>(y)) % 16 == 0) {
      const std::size_t vectors = n / per;
      // Enough blocks to fill any current GPU several times over; the kernel strides the rest.
      const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((vectors + kThreads - 1) / kThreads, 1u << 16));
      if (vectors) stream_vector_kernel<T><<<blocks, kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(x), vectors);
      done = vectors * per;
    }
    if (done < n) stream_kernel<T><<<blocks_for(n - done), kThreads, 0, s>>>(static_cast<T*>(y) + done, static_cast<const T*>(x) + done, n - done);
  });
}

void softmax_rows(const void* x, void* y, std::size_t n, std::size_t row, Element e, cudaStream_t s) {
  if (!n || !row) return;
  const std::size_t rows = (n + row - 1) / row;
  // A block a row: 128 threads for short rows, 512 for long ones (each thread then reads 4 to 64
  // elements of a 2K- to 32K-element row).
  const unsigned threads = row <= 1024 ? 128 : 512;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    for (std::size_t first = 0; first < rows; first += kMaxBlocks) {
      const std::size_t count = std::min<std::size_t>(kMaxBlocks, rows - first);
      const std::size_t offset = first * row;
      softmax_kernel<T><<<static_cast<unsigned>(count), threads, 0, s>>>(static_cast<const T*>(x) + offset, static_cast<T*>(y) + offset, n - offset, row);
    }
  });
}

void fill(void* x, float value, std::size_t n, Element e, cudaStream_t s) {
  if (!n) return;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(x), value, n);
  });
}

void fill_random(void* x, float value, std::size_t n, unsigned long long seed, Element e, cudaStream_t s) {
  if (!n) return;
  by_element(e, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_random_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(static_cast<T*>(x), value, n, seed);
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
