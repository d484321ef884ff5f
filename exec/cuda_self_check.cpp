// The GPU executor's own kernels against a host reference (exec/cuda_self_check.hpp). Built into
// libparasim_gpu.so with the CUDA executor.
#include "exec/cuda_self_check.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "exec/cuda_elementwise.hpp"

namespace parasim::exec {
namespace {

/// bf16 as the upper half of an fp32 (truncation; exact for values made from bf16 bit patterns).
std::uint16_t to_bf16(float x) {
  std::uint32_t f;
  std::memcpy(&f, &x, sizeof f);
  return static_cast<std::uint16_t>(f >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t f = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}

struct Device {
  void* p = nullptr;
  explicit Device(std::size_t bytes) { cudaMalloc(&p, bytes); }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

/// Runs `launch` over `input` (host floats, stored on the device as `e`, `offset` elements into the
/// buffer so that odd offsets take the kernels' unaligned path) and returns the output as floats;
/// the output buffer is poisoned (NaN bit patterns) first, so an element left unwritten shows.
template <class Launch>
std::vector<float> run(const std::vector<float>& input, cuda::Element e, std::size_t offset, Launch&& launch, std::string& error) {
  const std::size_t n = input.size(), width = cuda::bytes_of(e), bytes = (n + offset) * width;
  std::vector<unsigned char> host(bytes, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (e == cuda::Element::F32) {
      std::memcpy(&host[(i + offset) * 4], &input[i], 4);
    } else {
      const std::uint16_t h = to_bf16(input[i]);
      std::memcpy(&host[(i + offset) * 2], &h, 2);
    }
  }
  Device x(bytes), y(bytes);
  std::vector<float> out(n);
  if (!x.p || !y.p || cudaMemcpy(x.p, host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess || cudaMemset(y.p, 0xff, bytes) != cudaSuccess) {
    error = "cudaMalloc or cudaMemcpy failed";
    return out;
  }
  launch(static_cast<unsigned char*>(y.p) + offset * width, static_cast<const unsigned char*>(x.p) + offset * width);
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess || cudaMemcpy(host.data(), y.p, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    error = std::string("a kernel failed: ") + cudaGetErrorString(cudaGetLastError());
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (e == cuda::Element::F32) {
      std::memcpy(&out[i], &host[(i + offset) * 4], 4);
    } else {
      std::uint16_t h;
      std::memcpy(&h, &host[(i + offset) * 2], 2);
      out[i] = from_bf16(h);
    }
  }
  return out;
}

/// ‖out − ref‖ / ‖ref‖, NaN when any output is not finite.
double relative_error(const std::vector<float>& out, const std::vector<double>& ref) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return NAN;
    diff += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(diff / norm);
}

}  // namespace

std::string check_cuda_kernels() {
  std::ostringstream problems;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  // An element count that leaves a tail after the 16-byte vectors, and rows with a partial last one.
  const std::size_t n = 3 * 2048 + 1000 + 3, row = 2048;
  for (const cuda::Element e : {cuda::Element::F32, cuda::Element::BF16}) {
    const char* type = e == cuda::Element::F32 ? "fp32" : "bf16";
    // bf16 inputs are exactly their bf16 values, so the reference starts from what the kernel read.
    std::vector<float> input(n);
    for (float& v : input) v = e == cuda::Element::F32 ? u(gen) : from_bf16(to_bf16(u(gen)));
    // fp32 arithmetic lands far under 1e-5 here; a bf16 output carries 8 bits: under 2^-8.
    const double tolerance = e == cuda::Element::F32 ? 1e-5 : 1.0 / 256;
    for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      std::string error;
      const std::vector<float> out = run(input, e, offset, [&](void* y, const void* x) { cuda::stream_pass(y, x, n, e, nullptr); }, error);
      if (!error.empty()) return error;
      std::vector<double> ref(n);
      for (std::size_t i = 0; i < n; ++i) ref[i] = 0.5 * input[i] + 0.0078125;
      const double err = relative_error(out, ref);
      if (!(err < tolerance)) problems << "stream_pass (" << type << ", offset " << offset << "): relative error " << err << "; ";
    }
    std::string error;
    const std::vector<float> out = run(input, e, 0, [&](void* y, const void* x) { cuda::softmax_rows(x, y, n, row, e, nullptr); }, error);
    if (!error.empty()) return error;
    std::vector<double> ref(n);
    for (std::size_t begin = 0; begin < n; begin += row) {
      const std::size_t end = std::min(n, begin + row);
      double m = -INFINITY, sum = 0;
      for (std::size_t j = begin; j < end; ++j) m = std::max(m, static_cast<double>(input[j]));
      for (std::size_t j = begin; j < end; ++j) sum += std::exp(input[j] - m);
      for (std::size_t j = begin; j < end; ++j) ref[j] = std::exp(input[j] - m) / sum;
    }
    // __expf is fast-math: about 2 ulp, still far under 1e-4 relative in fp32.
    const double err = relative_error(out, ref);
    if (!(err < (e == cuda::Element::F32 ? 1e-4 : 1.0 / 128))) problems << "softmax_rows (" << type << "): relative error " << err << "; ";
  }
  std::string text = problems.str();
  if (text.size() >= 2) text.resize(text.size() - 2);
  return text;
}

}  // namespace parasim::exec
