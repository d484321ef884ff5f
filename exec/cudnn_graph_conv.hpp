#pragma once
/// A convolution through cuDNN's graph (backend) API, as today's frameworks call cuDNN (PyTorch
/// through cudnn-frontend): an operation graph of the one convolution, the engine configurations
/// cuDNN's heuristics rank for it (mode A), and the first that finalizes into an execution plan
/// within a workspace limit. The legacy API's algorithm enumeration (cudnnConvolutionForward and
/// its algorithms) reaches only cuDNN's older engines: on an H100 its 1×1 bf16 convolutions ran at
/// under a tenth of the rate of a GEMM of the same shape. Built into libparasim_gpu.so with the
/// CUDA executor (exec/cuda_kernels.cpp).
#include <cudnn.h>

#include <cstddef>
#include <memory>
#include <string>

namespace parasim::exec::cudnn_graph {

enum class Direction { Forward, BackwardData, BackwardFilter };

/// One 2-D convolution: batch n, channels c → k, input h×w, filter r×s, output oh×ow, padding and
/// stride; elements of `type`, laid out NHWC (filters KRSC) or NCHW (KCRS); fp32 accumulation.
struct Shape {
  int n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1, oh = 1, ow = 1;
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  bool nhwc = false;
};

class Plan {
 public:
  /// The plan of `direction` on `handle`, or null with `why` saying what cuDNN refused.
  static std::unique_ptr<Plan> make(cudnnHandle_t handle, const Shape& shape, Direction direction, std::size_t max_workspace, std::string& why);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  [[nodiscard]] std::size_t workspace_bytes() const { return workspace_; }
  /// The engine's name as cuDNN's heuristics rank it ("engine 28, heuristics' choice 1 of 9").
  [[nodiscard]] const std::string& engine() const { return engine_; }
  /// Enqueues the convolution on the handle's stream: x, w and y are the input, filter and output
  /// of the forward convolution (backward data writes x from w and y; backward filter writes w from
  /// x and y).
  [[nodiscard]] cudnnStatus_t execute(cudnnHandle_t handle, void* x, void* w, void* y, void* workspace) const;

 private:
  Plan() = default;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::size_t workspace_ = 0;
  std::string engine_;
};

}  // namespace parasim::exec::cudnn_graph
