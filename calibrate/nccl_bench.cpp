// NCCL all-reduce sweep over every GPU of this node in one process (ncclCommInitAll), timed as
// nccl-tests times it: warm-up, then the mean of `iterations` back-to-back launches; and the
// interference of an all-reduce with the GEMMs beside it (measure_interference).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <memory>

#include "calibrate/gpu.hpp"
#include "calibrate/source_text.hpp"

namespace parasim::calibrate {

std::variant<NcclTestsLog, Unavailable> measure_nccl(const NcclOptions& o) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return Unavailable{std::string("no CUDA device found (cudaGetDeviceCount: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")"};
  if (count < 2) return Unavailable{"an NCCL all-reduce needs at least two GPUs on this node; found " + std::to_string(count)};
  std::vector<double> sizes = o.bytes;
  if (sizes.empty())
    for (double b = 8; b <= double(1 << 30); b *= 4) sizes.push_back(b);
  double largest = 0;
  for (double b : sizes) largest = std::max(largest, b);

  std::vector<int> devices(static_cast<std::size_t>(count));
  for (int d = 0; d < count; ++d) devices[static_cast<std::size_t>(d)] = d;
  std::vector<ncclComm_t> comms(devices.size());
  if (const ncclResult_t r = ncclCommInitAll(comms.data(), count, devices.data()); r != ncclSuccess)
    return Unavailable{std::string("ncclCommInitAll failed: ") + ncclGetErrorString(r)};
  struct Resources {
    std::vector<ncclComm_t>& comms;
    std::vector<cudaStream_t> streams;
    std::vector<void*> buffers;
    ~Resources() {
      for (std::size_t d = 0; d < comms.size(); ++d) {
        cudaSetDevice(static_cast<int>(d));
        if (d < buffers.size() && buffers[d]) cudaFree(buffers[d]);
        if (d < streams.size() && streams[d]) cudaStreamDestroy(streams[d]);
        ncclCommDestroy(comms[d]);
      }
    }
  } res{comms, std::vector<cudaStream_t>(devices.size(), nullptr), std::vector<void*>(devices.size(), nullptr)};
  for (int d = 0; d < count; ++d) {
    cudaSetDevice(d);
    if (cudaStreamCreate(&res.streams[static_cast<std::size_t>(d)]) != cudaSuccess ||
        cudaMalloc(&res.buffers[static_cast<std::size_t>(d)], static_cast<std::size_t>(largest)) != cudaSuccess)
      return Unavailable{"cudaStreamCreate or cudaMalloc failed on device " + std::to_string(d) + ": " + cudaGetErrorString(cudaGetLastError())};
  }
  auto launch = [&](std::size_t elements) {
    if (ncclGroupStart() != ncclSuccess) return false;
    for (std::size_t d = 0; d < comms.size(); ++d)
      if (ncclAllReduce(res.buffers[d], res.buffers[d], elements, ncclFloat, ncclSum, comms[d], res.streams[d]) != ncclSuccess) return false;
    return ncclGroupEnd() == ncclSuccess;
  };
  auto sync = [&] {
    for (std::size_t d = 0; d < comms.size(); ++d) {
      cudaSetDevice(static_cast<int>(d));
      if (cudaStreamSynchronize(res.streams[d]) != cudaSuccess) return false;
    }
    return true;
  };

  NcclTestsLog log;
  log.test = NcclTest::AllReduce;
  log.ranks = count;
  log.hosts = 1;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) log.device = source_text(prop.name);
  const double n = static_cast<double>(count);
  for (const double bytes : sizes) {
    const auto elements = static_cast<std::size_t>(bytes / sizeof(float));
    if (elements == 0) continue;
    for (int k = 0; k < o.warmup; ++k)
      if (!launch(elements)) return Unavailable{"ncclAllReduce failed"};
    if (!sync()) return Unavailable{"cudaStreamSynchronize failed"};
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < o.iterations; ++k)
      if (!launch(elements)) return Unavailable{"ncclAllReduce failed"};
    if (!sync()) return Unavailable{"cudaStreamSynchronize failed"};
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / o.iterations;
    const double size = static_cast<double>(elements * sizeof(float));
    log.rows.push_back({size, t, 2 * (n - 1) / n * size / t, 0});
  }
  return log;
}

namespace {

/// Per device: a compute stream with a cuBLAS handle and GEMM buffers, a communication stream with
/// the all-reduce buffer, and an event pair on each stream; released in the destructor.
struct Node {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> compute, comm;
  std::vector<cublasHandle_t> cublas;
  std::vector<void*> a, b, c, buffer;
  std::vector<cudaEvent_t> events;  // per device: compute start, compute stop, comm start, comm stop
  ~Node() {
    for (std::size_t d = 0; d < comms.size(); ++d) {
      cudaSetDevice(static_cast<int>(d));
      for (void* p : {a[d], b[d], c[d], buffer[d]})
        if (p) cudaFree(p);
      if (cublas[d]) cublasDestroy(cublas[d]);
      if (compute[d]) cudaStreamDestroy(compute[d]);
      if (comm[d]) cudaStreamDestroy(comm[d]);
      for (std::size_t k = 0; k < 4; ++k)
        if (events[4 * d + k]) cudaEventDestroy(events[4 * d + k]);
      if (comms[d]) ncclCommDestroy(comms[d]);
    }
  }
};

}  // namespace

std::variant<InterferenceMeasurement, Unavailable> measure_interference(const InterferenceOptions& o) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return Unavailable{std::string("no CUDA device found (cudaGetDeviceCount: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")"};
  if (count < 2) return Unavailable{"an all-reduce beside a GEMM needs at least two GPUs on this node; found " + std::to_string(count)};
  const auto devices = static_cast<std::size_t>(count);
  Node node;
  node.comms.assign(devices, nullptr);
  node.compute.assign(devices, nullptr);
  node.comm.assign(devices, nullptr);
  node.cublas.assign(devices, nullptr);
  for (auto* v : {&node.a, &node.b, &node.c, &node.buffer}) v->assign(devices, nullptr);
  node.events.assign(4 * devices, nullptr);
  std::vector<int> ids(devices);
  for (int d = 0; d < count; ++d) ids[static_cast<std::size_t>(d)] = d;
  if (const ncclResult_t r = ncclCommInitAll(node.comms.data(), count, ids.data()); r != ncclSuccess)
    return Unavailable{std::string("ncclCommInitAll failed: ") + ncclGetErrorString(r)};
  const auto n = static_cast<std::size_t>(o.gemm_n);
  const std::size_t matrix = n * n * 2;
  const auto elements = static_cast<std::size_t>(o.collective_bytes / sizeof(float));
  for (std::size_t d = 0; d < devices; ++d) {
    cudaSetDevice(static_cast<int>(d));
    bool ok = cudaStreamCreateWithFlags(&node.compute[d], cudaStreamNonBlocking) == cudaSuccess &&
              cudaStreamCreateWithFlags(&node.comm[d], cudaStreamNonBlocking) == cudaSuccess &&
              cublasCreate(&node.cublas[d]) == CUBLAS_STATUS_SUCCESS && cublasSetStream(node.cublas[d], node.compute[d]) == CUBLAS_STATUS_SUCCESS;
    for (void** p : {&node.a[d], &node.b[d], &node.c[d]}) ok = ok && cudaMalloc(p, matrix) == cudaSuccess;
    ok = ok && cudaMalloc(&node.buffer[d], elements * sizeof(float)) == cudaSuccess;
    for (std::size_t k = 0; k < 4; ++k) ok = ok && cudaEventCreate(&node.events[4 * d + k]) == cudaSuccess;
    if (!ok) return Unavailable{"setting up device " + std::to_string(d) + " failed: " + cudaGetErrorString(cudaGetLastError())};
    cudaMemset(node.a[d], 0x3c, matrix);  // fp16 0x3c3c ≈ 1.06: finite operands
    cudaMemset(node.b[d], 0x3c, matrix);
  }
  const float alpha = 1, beta = 0;
  const int ni = static_cast<int>(n);
  auto gemms = [&](int count_per_device) {
    for (std::size_t d = 0; d < devices; ++d) {
      cudaSetDevice(static_cast<int>(d));
      cudaEventRecord(node.events[4 * d], node.compute[d]);
      for (int k = 0; k < count_per_device; ++k)
        if (cublasGemmEx(node.cublas[d], CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, node.a[d], CUDA_R_16F, ni, node.b[d], CUDA_R_16F, ni, &beta,
                         node.c[d], CUDA_R_16F, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
          return false;
      cudaEventRecord(node.events[4 * d + 1], node.compute[d]);
    }
    return true;
  };
  auto all_reduces = [&](int count_per_device) {
    for (std::size_t d = 0; d < devices; ++d) {
      cudaSetDevice(static_cast<int>(d));
      cudaEventRecord(node.events[4 * d + 2], node.comm[d]);
    }
    for (int k = 0; k < count_per_device; ++k) {
      if (ncclGroupStart() != ncclSuccess) return false;
      for (std::size_t d = 0; d < devices; ++d)
        if (ncclAllReduce(node.buffer[d], node.buffer[d], elements, ncclFloat, ncclSum, node.comms[d], node.comm[d]) != ncclSuccess) return false;
      if (ncclGroupEnd() != ncclSuccess) return false;
    }
    for (std::size_t d = 0; d < devices; ++d) {
      cudaSetDevice(static_cast<int>(d));
      cudaEventRecord(node.events[4 * d + 3], node.comm[d]);
    }
    return true;
  };
  // Seconds between device 0's start and stop events of one stream (0: compute, 2: communication).
  auto elapsed = [&](std::size_t first) {
    for (std::size_t d = 0; d < devices; ++d) {
      cudaSetDevice(static_cast<int>(d));
      if (cudaDeviceSynchronize() != cudaSuccess) return -1.0;
    }
    float ms = 0;
    if (cudaEventElapsedTime(&ms, node.events[first], node.events[first + 1]) != cudaSuccess) return -1.0;
    return 1e-3 * ms;
  };
  if (!gemms(2) || elapsed(0) < 0 || !all_reduces(2) || elapsed(2) < 0) return Unavailable{"the warm-up GEMMs or all-reduces failed"};
  InterferenceMeasurement m;
  m.ranks = count;
  m.gemm_n = o.gemm_n;
  m.collective_bytes = static_cast<double>(elements * sizeof(float));
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) m.device_name = source_text(prop.name);
  if (!gemms(o.gemms)) return Unavailable{"cublasGemmEx failed"};
  m.gemm_alone_s = elapsed(0) / o.gemms;
  const int reduces = std::max(2, o.gemms / 2);
  if (!all_reduces(reduces)) return Unavailable{"ncclAllReduce failed"};
  m.collective_alone_s = elapsed(2) / reduces;
  if (!(m.gemm_alone_s > 0) || !(m.collective_alone_s > 0)) return Unavailable{"timing the GEMMs or all-reduces alone failed"};
  // Beside each other: as many all-reduces as last about as long as the GEMMs, launched together.
  const int beside = std::max(1, static_cast<int>(std::lround(o.gemms * m.gemm_alone_s / m.collective_alone_s)));
  if (!all_reduces(beside) || !gemms(o.gemms)) return Unavailable{"the GEMMs beside the all-reduces failed"};
  for (std::size_t d = 0; d < devices; ++d) {
    cudaSetDevice(static_cast<int>(d));
    if (cudaDeviceSynchronize() != cudaSuccess) return Unavailable{"cudaDeviceSynchronize failed"};
  }
  float gemm_ms = 0, reduce_ms = 0;
  if (cudaEventElapsedTime(&gemm_ms, node.events[0], node.events[1]) != cudaSuccess ||
      cudaEventElapsedTime(&reduce_ms, node.events[2], node.events[3]) != cudaSuccess)
    return Unavailable{"cudaEventElapsedTime failed"};
  m.gemm_beside_s = 1e-3 * gemm_ms / o.gemms;
  m.collective_beside_s = 1e-3 * reduce_ms / beside;
  return m;
}

}  // namespace parasim::calibrate
