// CUDA microbenchmarks (built where the CUDA toolkit was found): half-precision cuBLAS GEMMs and
// device-to-device copies on one GPU, timed with CUDA events. Host code only: no kernels of ours.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <limits>

#include "calibrate/gpu.hpp"
#include "calibrate/source_text.hpp"

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

/// The shortest time of `op` (enqueued on the default stream), in seconds, over at least two runs
/// and until the runs took `min_total_s`; a negative value when a CUDA call failed.
template <class Op>
double best_gpu_seconds(Events& ev, Op&& op, double min_total_s) {
  double best = std::numeric_limits<double>::infinity(), total = 0;
  for (int k = 0; k < 2 || total < min_total_s; ++k) {
    if (cudaEventRecord(ev.start) != cudaSuccess || !op() || cudaEventRecord(ev.stop) != cudaSuccess || cudaEventSynchronize(ev.stop) != cudaSuccess) return -1;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, ev.start, ev.stop) != cudaSuccess) return -1;
    best = std::min(best, 1e-3 * ms);
    total += 1e-3 * ms;
  }
  return best;
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
    cudaMemset(a.p, 0x3c, bytes);  // fp16 0x3c3c ≈ 1.06: finite operands
    cudaMemset(b.p, 0x3c, bytes);
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
  for (const double length : o.copy_bytes) {
    const auto bytes = static_cast<std::size_t>(length);
    DeviceBuffer src(bytes), dst(bytes);
    if (!src.p || !dst.p) return failed("cudaMalloc of " + std::to_string(2 * bytes) + " bytes");
    const double s = best_gpu_seconds(ev, [&] { return cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess; },
                                      o.min_seconds_per_size);
    if (s <= 0) return failed("cudaMemcpyAsync of " + std::to_string(bytes) + " bytes");
    m.copy.push_back({2 * length, 2 * length / s});  // every byte read once and written once
  }
  {
    DeviceBuffer src(1), dst(1);
    if (!src.p || !dst.p) return failed("cudaMalloc of 2 bytes");
    m.launch_overhead_s = best_gpu_seconds(ev, [&] { return cudaMemcpyAsync(dst.p, src.p, 1, cudaMemcpyDeviceToDevice) == cudaSuccess; }, 0.01);
    if (m.launch_overhead_s <= 0) return failed("cudaMemcpyAsync of 1 byte");
  }
  return m;
}

}  // namespace parasim::calibrate
