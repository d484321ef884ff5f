// NCCL all-reduce sweep over every GPU of this node in one process (ncclCommInitAll), timed as
// nccl-tests times it: warm-up, then the mean of `iterations` back-to-back launches.
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

}  // namespace parasim::calibrate
