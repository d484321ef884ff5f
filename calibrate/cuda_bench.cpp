// CUDA microbenchmarks (built where the CUDA toolkit was found): half-precision cuBLAS GEMMs and
// device-to-device copies on one GPU, timed with CUDA events. Host code only: no kernels of ours.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "calibrate/gpu.hpp"
#include "calibrate/source_text.hpp"
#ifdef PARASIM_GPU_EXECUTOR
#include "exec/cuda_elementwise.hpp"
#endif

namespace parasim::calibrate {
namespace {

/// Device memory freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct CublasHandle {
  cublasHandle_t h = nullptr;
  ~CublasHandle() {
    if (h) cublasDestroy(h);
  }
};

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

/// The shortest time of one `op` (enqueued on the default stream), in seconds: `op` is enqueued
/// back to back enough times to fill about 2 ms between two events (as a training step's kernels
/// follow one another, so the host's launch latency is not in each), at least twice and until the
/// runs took `min_total_s`; a negative value when a CUDA call failed.
template <class Op>
double best_gpu_seconds(Events& ev, Op&& op, double min_total_s) {
  auto timed = [&](int repeats) {
    if (cudaEventRecord(ev.start) != cudaSuccess) return -1.0;
    for (int r = 0; r < repeats; ++r)
      if (!op()) return -1.0;
    if (cudaEventRecord(ev.stop) != cudaSuccess || cudaEventSynchronize(ev.stop) != cudaSuccess) return -1.0;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, ev.start, ev.stop) != cudaSuccess) return -1.0;
    return 1e-3 * ms / repeats;
  };
  const double first = timed(1);  // also the warm-up: cuBLAS picks and loads its kernel here
  if (first <= 0) return -1;
  const int repeats = static_cast<int>(std::clamp(std::ceil(2e-3 / first), 1.0, 1000.0));
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int k = 0; k < 2 || total < min_total_s; ++k) {
    const double s = timed(repeats);
    if (s <= 0) return -1;
    best = std::min(best, s);
    total += s * repeats;
  }
  return best;
}

/// `count` fp16 values uniform in [-1, 1) from a seeded generator, copied to `device`.
bool random_fp16(void* device, std::int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<std::uint16_t> host(static_cast<std::size_t>(count));
  for (auto& h : host) {
    // IEEE binary32 to binary16 by truncation; |x| < 1 needs no overflow or rounding care beyond
    // flushing values under 2^-14 (the smallest normal half) to zero.
    const float x = u(gen);
    std::uint32_t f;
    std::memcpy(&f, &x, sizeof f);
    const std::uint32_t sign = (f >> 16) & 0x8000u;
    const int exponent = static_cast<int>((f >> 23) & 0xffu) - 127 + 15;
    h = static_cast<std::uint16_t>(exponent <= 0 ? sign : sign | (static_cast<std::uint32_t>(exponent) << 10) | ((f >> 13) & 0x3ffu));
  }
  return cudaMemcpy(device, host.data(), host.size() * sizeof(std::uint16_t), cudaMemcpyHostToDevice) == cudaSuccess;
}

Unavailable failed(const std::string& what) {
  const cudaError_t e = cudaGetLastError();
  return Unavailable{what + " failed" + (e != cudaSuccess ? std::string(": ") + cudaGetErrorString(e) : std::string())};
}

}  // namespace

std::variant<CudaMeasurement, Unavailable> measure_cuda(const CudaOptions& o) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return Unavailable{std::string("no CUDA device found (cudaGetDeviceCount: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")"};
  if (o.device < 0 || o.device >= count) return Unavailable{"no CUDA device " + std::to_string(o.device) + ": found " + std::to_string(count)};
  if (cudaSetDevice(o.device) != cudaSuccess) return failed("cudaSetDevice");
  CudaMeasurement m;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, o.device) != cudaSuccess) return failed("cudaGetDeviceProperties");
  m.device_name = source_text(prop.name);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return failed("cudaMemGetInfo");
  m.memory_capacity_bytes = static_cast<double>(total_bytes);
  CublasHandle cublas;
  if (cublasCreate(&cublas.h) != CUBLAS_STATUS_SUCCESS) return Unavailable{"cublasCreate failed"};
  Events ev;

  for (const std::int64_t n : o.gemm_sizes) {
    const auto bytes = static_cast<std::size_t>(n * n * 2);
    DeviceBuffer a(bytes), b(bytes), c(bytes);
    if (!a.p || !b.p || !c.p) return failed("cudaMalloc of " + std::to_string(3 * bytes) + " bytes");
    // Operands drawn uniformly from [-1, 1) (seeded): tensor cores run faster on constant or zero
    // data than on real values, so a constant fill would overstate the rate.
    if (!random_fp16(a.p, n * n, 1) || !random_fp16(b.p, n * n, 2)) return failed("cudaMemcpy of the GEMM's operands");
    const float alpha = 1, beta = 0;
    const int ni = static_cast<int>(n);
    const double s = best_gpu_seconds(
        ev,
        [&] {
          return cublasGemmEx(cublas.h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, a.p, CUDA_R_16F, ni, b.p, CUDA_R_16F, ni, &beta, c.p, CUDA_R_16F,
                              ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
        },
        o.min_seconds_per_size);
    if (s <= 0) return failed("cublasGemmEx of " + std::to_string(n) + "^3");
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    m.gemm.push_back({flops, flops / s});
  }
  // Thin GEMMs, the thin dim as m, as n and as k; the buffers sized for the largest operand.
  if (!o.thin_dims.empty()) {
    m.thin_other = o.thin_other;
    const std::int64_t big = o.thin_other, widest = std::max(big, *std::max_element(o.thin_dims.begin(), o.thin_dims.end()));
    const auto bytes = static_cast<std::size_t>(big * widest * 2);
    DeviceBuffer a(bytes), b(bytes), c(bytes);
    if (!a.p || !b.p || !c.p) return failed("cudaMalloc of " + std::to_string(3 * bytes) + " bytes");
    if (!random_fp16(a.p, big * widest, 3) || !random_fp16(b.p, big * widest, 4)) return failed("cudaMemcpy of the GEMM's operands");
    const float alpha = 1, beta = 0;
    for (const std::int64_t d : o.thin_dims) {
      ThinGemm t{d, {}};
      const std::array<std::array<std::int64_t, 3>, 3> shapes{{{d, big, big}, {big, d, big}, {big, big, d}}};
      for (std::size_t i = 0; i < 3; ++i) {
        const int mm = static_cast<int>(shapes[i][0]), nn = static_cast<int>(shapes[i][1]), kk = static_cast<int>(shapes[i][2]);
        t.seconds[i] = best_gpu_seconds(
            ev,
            [&] {
              return cublasGemmEx(cublas.h, CUBLAS_OP_N, CUBLAS_OP_N, mm, nn, kk, &alpha, a.p, CUDA_R_16F, mm, b.p, CUDA_R_16F, kk, &beta, c.p, CUDA_R_16F, mm,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
            },
            o.min_seconds_per_size);
        if (t.seconds[i] <= 0) return failed("cublasGemmEx of " + std::to_string(mm) + "x" + std::to_string(nn) + "x" + std::to_string(kk));
      }
      m.thin.push_back(t);
    }
  }
  // Memory-bound passes rotate over buffers spanning kRotateBytes, so that a pass repeated back to
  // back reads device memory rather than the previous pass's lines in L2 (50 MB on an H100).
  constexpr std::size_t kRotateBytes = std::size_t(256) << 20;
  auto copies_of = [&](std::size_t bytes) { return std::max<std::size_t>(1, kRotateBytes / std::max<std::size_t>(bytes, 1)); };
  for (const double length : o.copy_bytes) {
    const auto bytes = static_cast<std::size_t>(length);
    const std::size_t sets = copies_of(bytes);
    DeviceBuffer src(bytes * sets), dst(bytes * sets);
    if (!src.p || !dst.p) return failed("cudaMalloc of " + std::to_string(2 * bytes * sets) + " bytes");
    std::size_t next = 0;
    const double s = best_gpu_seconds(
        ev,
        [&] {
          const std::size_t at = (next++ % sets) * bytes;
          return cudaMemcpyAsync(static_cast<char*>(dst.p) + at, static_cast<const char*>(src.p) + at, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess;
        },
        o.min_seconds_per_size);
    if (s <= 0) return failed("cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
    m.copy.push_back({2 * length, 2 * length / s});  // every byte read once and written once
  }
#ifdef PARASIM_GPU_EXECUTOR
  // The executor's own memory-bound pass and softmax (exec/cuda_elementwise.hpp), in bf16, as
  // `parasim execute --backend cuda` runs them: the curves its predictions are then made with.
  // The executor's pass repeated over the same buffers, as its passes in a step read what the pass
  // before wrote: a pass that fits in L2 (50 MB on an H100) is served from there, as in a step.
  for (const double moved : o.memory_bytes) {
    const auto elements = static_cast<std::size_t>(moved / 4);  // 2 bytes read and 2 written an element
    DeviceBuffer src(2 * elements), dst(2 * elements);
    if (!src.p || !dst.p) return failed("cudaMalloc of " + std::to_string(4 * elements) + " bytes");
    exec::cuda::fill_random(src.p, 1.0f, elements, 1, exec::cuda::Element::BF16, nullptr);
    const double s = best_gpu_seconds(
        ev, [&] { exec::cuda::stream_pass(dst.p, src.p, elements, exec::cuda::Element::BF16, nullptr); return cudaGetLastError() == cudaSuccess; },
        o.min_seconds_per_size);
    if (s <= 0) return failed("the executor's memory-bound pass over " + std::to_string(elements) + " elements");
    m.memory.push_back({4.0 * static_cast<double>(elements), 4.0 * static_cast<double>(elements) / s});
  }
  {
    const auto elements = static_cast<std::size_t>(o.softmax_elements);
    DeviceBuffer x(2 * elements), y(2 * elements);
    if (!x.p || !y.p) return failed("cudaMalloc of " + std::to_string(4 * elements) + " bytes");
    exec::cuda::fill_random(x.p, 4.0f, elements, 2, exec::cuda::Element::BF16, nullptr);
    const auto row = static_cast<std::size_t>(o.softmax_row);
    const double s = best_gpu_seconds(
        ev, [&] { exec::cuda::softmax_rows(x.p, y.p, elements, row, exec::cuda::Element::BF16, nullptr); return cudaGetLastError() == cudaSuccess; },
        o.min_seconds_per_size);
    if (s <= 0) return failed("the executor's softmax over " + std::to_string(elements) + " elements");
    m.softmax_flops_per_s = o.softmax_flops_per_element * o.softmax_elements / s;
  }
#endif
  {
    // The fixed cost of a kernel among others: the fastest of a 1-element memory-bound pass of the
    // executor (else a 1-byte copy), launched back to back.
    DeviceBuffer src(16), dst(16);
    if (!src.p || !dst.p) return failed("cudaMalloc of 32 bytes");
#ifdef PARASIM_GPU_EXECUTOR
    m.launch_overhead_s = best_gpu_seconds(
        ev, [&] { exec::cuda::stream_pass(dst.p, src.p, 1, exec::cuda::Element::BF16, nullptr); return cudaGetLastError() == cudaSuccess; }, 0.01);
#else
    m.launch_overhead_s = best_gpu_seconds(ev, [&] { return cudaMemcpyAsync(dst.p, src.p, 1, cudaMemcpyDeviceToDevice) == cudaSuccess; }, 0.01);
#endif
    if (m.launch_overhead_s <= 0) return failed("an empty kernel");
  }
  return m;
}

}  // namespace parasim::calibrate
