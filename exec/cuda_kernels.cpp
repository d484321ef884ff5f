// The GPU executor's kernels (exec/cuda_kernels.hpp): cuBLAS, cuDNN and parasim's own CUDA kernels
// (exec/cuda_elementwise.cu) on one device. Built where CMake found the CUDA toolkit, cuDNN and a
// CUDA compiler.
#include "exec/cuda_kernels.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "exec/cuda_elementwise.hpp"
#include "strategies/local_shape.hpp"

namespace parasim::exec {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw PlanError(std::string("--backend cuda: ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw PlanError(std::string("--backend cuda: ") + what + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}
void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw PlanError(std::string("--backend cuda: ") + what + ": " + cudnnGetErrorString(s));
}

cudaDataType_t cuda_type(models::DType t) {
  switch (t) {
    case models::DType::F16: return CUDA_R_16F;
    case models::DType::BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}
cudnnDataType_t cudnn_type(models::DType t) {
  switch (t) {
    case models::DType::F16: return CUDNN_DATA_HALF;
    case models::DType::BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

/// One lane: its stream, handles, timing events and device buffers (as the CPU executor's Scratch:
/// slots 0 and 1 operands, 2 outputs, 3 a convolution's image, 4 attention's outputs; and cuDNN's
/// workspace).
struct Lane {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudnnHandle_t dnn = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* slot[5] = {};
  std::size_t floats[5] = {};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

class CudaKernels final : public Kernels {
 public:
  CudaKernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int device)
      : graph_(graph), work_(work), plan_(plan), optimizer_state_(work.stage_updated.size(), nullptr), optimizer_floats_(work.stage_updated.size(), 0) {
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    device_ = device % std::max(devices, 1);
    check(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    name_ = prop.name;
  }
  ~CudaKernels() override {
    cudaSetDevice(device_);
    for (auto& l : lanes_) {
      for (float* p : l.slot)
        if (p) cudaFree(p);
      if (l.workspace) cudaFree(l.workspace);
      if (l.blas) cublasDestroy(l.blas);
      if (l.dnn) cudnnDestroy(l.dnn);
      if (l.start) cudaEventDestroy(l.start);
      if (l.stop) cudaEventDestroy(l.stop);
      if (l.stream) cudaStreamDestroy(l.stream);
    }
    for (float* p : optimizer_state_)
      if (p) cudaFree(p);
  }

  std::string refuses(const strategies::Plan& plan) const override {
    using models::DType;
    if (plan.precision == DType::F32 || plan.precision == DType::TF32 || plan.precision == DType::F16 || plan.precision == DType::BF16) return "";
    return "the CUDA executor runs fp32, tf32, fp16 and bf16 plans; the plan trains in " + std::string(models::to_string(plan.precision));
  }

  std::string describe() const override {
    return "parasim's CUDA executor on " + name_ + ": cuBLAS GEMMs in " + std::string(models::to_string(plan_.precision)) +
           " (fp32 accumulation), cuDNN convolutions, parasim's memory-bound, softmax and optimizer kernels";
  }

  void set_lanes(std::size_t lanes) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    lanes_.resize(lanes);
    for (auto& l : lanes_) {
      if (l.stream) continue;
      check(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cublasCreate(&l.blas), "cublasCreate");
      check(cublasSetStream(l.blas, l.stream), "cublasSetStream");
      check(cudnnCreate(&l.dnn), "cudnnCreate");
      check(cudnnSetStream(l.dnn, l.stream), "cudnnSetStream");
      check(cudaEventCreate(&l.start), "cudaEventCreate");
      check(cudaEventCreate(&l.stop), "cudaEventCreate");
    }
  }

  void run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    Lane& l = lanes_.at(lane);
    const sim::ComputeWork& cw = work_.computes[w];
    auto timed = [&](auto&& body) {
      check(cudaEventRecord(l.start, l.stream), "cudaEventRecord");
      body();
      check(cudaEventRecord(l.stop, l.stream), "cudaEventRecord");
      check(cudaEventSynchronize(l.stop), "a kernel");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, l.start, l.stop), "cudaEventElapsedTime");
      pass_seconds.push_back(1e-3 * ms);
    };
    if (cw.optimizer_stage >= 0) {
      float* state = optimizer_state(l, static_cast<std::size_t>(cw.optimizer_stage));
      timed([&] { run_optimizer(l, state, static_cast<std::size_t>(cw.optimizer_stage)); });
      return;
    }
    for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) {
      const sim::OpPass& p = work_.ops[k];
      prepare(l, p);
      timed([&] { run_pass(l, p); });
    }
  }

  float* message_buffer(std::size_t lane, std::size_t count) override { return get(lanes_.at(lane), 0, count); }

 private:
  /// A buffer of at least `count` floats in `slot`, new space filled with 1/64 (finite in every
  /// precision the GEMMs read it as).
  float* get(Lane& l, int slot, std::size_t count) {
    if (l.floats[slot] < count) {
      check(cudaStreamSynchronize(l.stream), "cudaStreamSynchronize");
      if (l.slot[slot]) check(cudaFree(l.slot[slot]), "cudaFree");
      check(cudaMalloc(reinterpret_cast<void**>(&l.slot[slot]), count * sizeof(float)), "cudaMalloc");
      cuda::fill(l.slot[slot], 1.0f / 64, count, l.stream);
      l.floats[slot] = count;
    }
    return l.slot[slot];
  }
  void* workspace(Lane& l, std::size_t bytes) {
    if (l.workspace_bytes < bytes) {
      check(cudaStreamSynchronize(l.stream), "cudaStreamSynchronize");
      if (l.workspace) check(cudaFree(l.workspace), "cudaFree");
      check(cudaMalloc(&l.workspace, bytes), "cudaMalloc");
      l.workspace_bytes = bytes;
    }
    return l.workspace;
  }

  struct Shape {
    std::int64_t batch, m, n, k;
  };
  Shape shape_of(const sim::OpWork& w) const {
    return {std::max<std::int64_t>(1, std::llround(w.gemm_batch)), std::max<std::int64_t>(1, std::llround(w.gemm_m)),
            std::max<std::int64_t>(1, std::llround(w.gemm_n)), std::max<std::int64_t>(1, std::llround(w.gemm_k))};
  }
  std::size_t count_of(double elements) const { return static_cast<std::size_t>(std::max(1.0, std::round(elements))); }

  /// Grows the pass's buffers before its timing starts (an allocation synchronises the device).
  void prepare(Lane& l, const sim::OpPass& p) {
    const sim::OpWork& w = work_.op_work[p.op];
    const Shape s = shape_of(w);
    const auto mk = static_cast<std::size_t>(s.batch * s.m * s.k), kn = static_cast<std::size_t>(s.batch * s.n * s.k),
               mn = static_cast<std::size_t>(s.batch * s.m * s.n);
    get(l, 0, std::max({mk, kn, count_of(std::max(w.bytes, w.bwd_bytes) / 8)}));
    get(l, 1, std::max({mk, kn, mn, count_of(std::max(w.bytes, w.bwd_bytes) / 8)}));
    get(l, 2, std::max({mk, kn, mn}));
    get(l, 3, std::max(mk, kn));
    get(l, 4, std::max({mk, kn, mn}));
  }

  /// Row-major C[m×n] = op(A)[m×k]·op(B)[k×n], `batch` times with the given strides (0: one matrix).
  void gemm(Lane& l, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c, std::int64_t batch,
            std::int64_t sa, std::int64_t sb, std::int64_t sc) {
    const float alpha = 1, beta = 0;
    const cudaDataType_t t = cuda_type(plan_.precision);
    const cublasComputeType_t compute = plan_.precision == models::DType::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    // Column-major cuBLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ, which is row-major C.
    check(cublasGemmStridedBatchedEx(l.blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                     static_cast<int>(k), &alpha, b, t, static_cast<int>(tb ? k : n), sb, a, t, static_cast<int>(ta ? m : k), sa, &beta, c, t,
                                     static_cast<int>(n), sc, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }

  void run_pass(Lane& l, const sim::OpPass& p) {
    const models::Operator& op = graph_.op(p.op);
    const sim::OpWork& w = work_.op_work[p.op];
    if (w.is_input) return;
    const bool backward = p.pass == sim::Pass::Backward;
    if (backward && !w.has_backward) return;
    const Shape s = shape_of(w);
    switch (kernel_class(op, w)) {
      case KernelClass::Convolution: convolution(l, p.op, backward); return;
      case KernelClass::Gemm: {
        // As the CPU executor: forward the operator's GEMMs, backward the data and weight gradients.
        const int kernels = backward ? w.bwd_kernels : w.gemms;
        for (int g = 0; g < kernels; ++g) {
          if (!backward) gemm(l, false, false, s.m, s.n, s.k, l.slot[0], l.slot[1], l.slot[2], s.batch, 0, 0, 0);
          else if (g % 2 == 0) gemm(l, false, true, s.m, s.k, s.n, l.slot[1], l.slot[0], l.slot[2], s.batch, 0, 0, 0);
          else gemm(l, true, false, s.k, s.n, s.m, l.slot[0], l.slot[1], l.slot[2], s.batch, 0, 0, 0);
        }
        return;
      }
      case KernelClass::Attention: {
        // Per (batch·head), strided batched: S = Q·Kᵀ, P = softmax(S), O = P·V; backward the four
        // gradient GEMMs, S recomputed, and dS's elementwise pass.
        const std::int64_t mk = s.m * s.k, nk = s.n * s.k, mn = s.m * s.n;
        float *q = l.slot[0], *kv = l.slot[1], *scores = l.slot[2], *out = l.slot[4];
        const auto elements = static_cast<std::size_t>(s.batch * mn);
        if (!backward) {
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          cuda::softmax_rows(scores, scores, elements, static_cast<std::size_t>(s.n), l.stream);
          gemm(l, false, false, s.m, s.k, s.n, scores, kv, out, s.batch, mn, nk, mk);
        } else {
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          gemm(l, true, false, s.n, s.k, s.m, scores, q, out, s.batch, mn, mk, nk);
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          cuda::stream_pass(scores, scores, elements, l.stream);
          gemm(l, false, false, s.m, s.k, s.n, scores, kv, out, s.batch, mn, nk, mk);
          gemm(l, true, false, s.n, s.k, s.m, scores, q, out, s.batch, mn, mk, nk);
        }
        return;
      }
      case KernelClass::Softmax: {
        if (backward) {
          cuda::stream_pass(l.slot[1], l.slot[0], count_of(w.bwd_bytes / 8), l.stream);
        } else {
          const models::Dim* last = op.output.dims.empty() ? nullptr : op.find_dim(op.output.dims.back());
          const double points = op.flops_per_point > 0 ? w.fwd_flops / op.flops_per_point : w.bytes / 8;
          cuda::softmax_rows(l.slot[0], l.slot[1], count_of(points), last ? static_cast<std::size_t>(last->size) : 1, l.stream);
        }
        return;
      }
      case KernelClass::Elementwise: cuda::stream_pass(l.slot[1], l.slot[0], count_of((backward ? w.bwd_bytes : w.bytes) / 8), l.stream); return;
      case KernelClass::Optimizer: return;
    }
  }

  /// A convolution through cuDNN, NCHW, in the plan's precision with fp32 accumulation; its local
  /// extents from the plan's sharding, stride and padding from its input and output sizes.
  void convolution(Lane& l, models::OpId id, bool backward) {
    const models::Operator& op = graph_.op(id);
    const strategies::OpSharding& sh = plan_.sharding[id];
    auto local = [&](const char* d) { return static_cast<int>(std::max<std::int64_t>(1, strategies::local_dim_size(plan_.mesh, sh, op, d))); };
    const int n = local("b"), c = local("ci"), h = local("ih"), wd = local("iw"), k = local("co"), r = local("kh"), s = local("kw"), oh = local("oh"),
              ow = local("ow");
    const int stride = std::max(1, h / std::max(oh, 1)), pad_h = std::max(0, ((oh - 1) * stride + r - h + 1) / 2),
              pad_w = std::max(0, ((ow - 1) * stride + s - wd + 1) / 2);
    const cudnnDataType_t t = cudnn_type(plan_.precision);
    cudnnTensorDescriptor_t x_desc, y_desc;
    cudnnFilterDescriptor_t w_desc;
    cudnnConvolutionDescriptor_t conv;
    check(cudnnCreateTensorDescriptor(&x_desc), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y_desc), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w_desc), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    check(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, t, n, c, h, wd), "cudnnSetTensor4dDescriptor");
    check(cudnnSetFilter4dDescriptor(w_desc, t, CUDNN_TENSOR_NCHW, k, c, r, s), "cudnnSetFilter4dDescriptor");
    check(cudnnSetConvolution2dDescriptor(conv, pad_h, pad_w, stride, stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    check(cudnnSetConvolutionMathType(conv, plan_.precision == models::DType::F32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH),
          "cudnnSetConvolutionMathType");
    int on = 0, oc = 0, ooh = 0, oow = 0;
    check(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, w_desc, &on, &oc, &ooh, &oow), "cudnnGetConvolution2dForwardOutputDim");
    check(cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, t, on, oc, ooh, oow), "cudnnSetTensor4dDescriptor");
    const auto x_n = static_cast<std::size_t>(n) * c * h * wd, w_n = static_cast<std::size_t>(k) * c * r * s,
               y_n = static_cast<std::size_t>(on) * oc * ooh * oow;
    float *x = get(l, 3, x_n), *wt = get(l, 1, w_n), *y = get(l, 2, y_n), *dx = get(l, 4, x_n), *dw = get(l, 0, w_n);
    const float alpha = 1, beta = 0;
    if (!backward) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int found = 0;
      check(cudnnGetConvolutionForwardAlgorithm_v7(l.dnn, x_desc, w_desc, conv, y_desc, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7");
      std::size_t bytes = 0;
      check(cudnnGetConvolutionForwardWorkspaceSize(l.dnn, x_desc, w_desc, conv, y_desc, perf[0].algo, &bytes), "cudnnGetConvolutionForwardWorkspaceSize");
      void* ws = workspace(l, std::max<std::size_t>(bytes, 1));
      check(cudnnConvolutionForward(l.dnn, &alpha, x_desc, x, w_desc, wt, conv, perf[0].algo, ws, bytes, &beta, y_desc, y), "cudnnConvolutionForward");
    } else {
      cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      int found = 0;
      check(cudnnGetConvolutionBackwardDataAlgorithm_v7(l.dnn, w_desc, y_desc, conv, x_desc, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, data),
            "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(l.dnn, x_desc, y_desc, conv, w_desc, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, filter),
            "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      std::size_t data_bytes = 0, filter_bytes = 0;
      check(cudnnGetConvolutionBackwardDataWorkspaceSize(l.dnn, w_desc, y_desc, conv, x_desc, data[0].algo, &data_bytes),
            "cudnnGetConvolutionBackwardDataWorkspaceSize");
      check(cudnnGetConvolutionBackwardFilterWorkspaceSize(l.dnn, x_desc, y_desc, conv, w_desc, filter[0].algo, &filter_bytes),
            "cudnnGetConvolutionBackwardFilterWorkspaceSize");
      void* ws = workspace(l, std::max<std::size_t>({data_bytes, filter_bytes, 1}));
      check(cudnnConvolutionBackwardData(l.dnn, &alpha, w_desc, wt, y_desc, y, conv, data[0].algo, ws, data_bytes, &beta, x_desc, dx),
            "cudnnConvolutionBackwardData");
      check(cudnnConvolutionBackwardFilter(l.dnn, &alpha, x_desc, x, y_desc, y, conv, filter[0].algo, ws, filter_bytes, &beta, w_desc, dw),
            "cudnnConvolutionBackwardFilter");
    }
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w_desc);
    cudnnDestroyTensorDescriptor(y_desc);
    cudnnDestroyTensorDescriptor(x_desc);
  }

  int arrays() const {
    switch (plan_.optimizer) {
      case strategies::Optimizer::Adam:
      case strategies::Optimizer::AdamW: return 4;
      case strategies::Optimizer::SGDMomentum:
      case strategies::Optimizer::Adafactor: return 3;
      case strategies::Optimizer::SGD: return 2;
    }
    return 4;
  }
  float* optimizer_state(Lane& l, std::size_t stage) {
    const std::size_t n = count_of(work_.stage_updated[stage]) * static_cast<std::size_t>(arrays());
    if (optimizer_floats_[stage] < n) {
      if (optimizer_state_[stage]) check(cudaFree(optimizer_state_[stage]), "cudaFree");
      check(cudaMalloc(reinterpret_cast<void**>(&optimizer_state_[stage]), n * sizeof(float)), "cudaMalloc");
      cuda::fill(optimizer_state_[stage], 1.0f / 64, n, l.stream);
      optimizer_floats_[stage] = n;
    }
    return optimizer_state_[stage];
  }
  void run_optimizer(Lane& l, float* p, std::size_t stage) {
    const std::size_t n = count_of(work_.stage_updated[stage]);
    switch (arrays()) {
      case 4: cuda::adam(p, p + n, p + 2 * n, p + 3 * n, n, l.stream); break;
      case 3: cuda::momentum(p, p + n, p + 2 * n, n, l.stream); break;
      default: cuda::sgd(p, p + n, n, l.stream); break;
    }
  }

  const models::Graph& graph_;
  const sim::StepWork& work_;
  const strategies::Plan& plan_;
  int device_ = 0;
  std::string name_;
  std::vector<Lane> lanes_;
  std::vector<float*> optimizer_state_;
  std::vector<std::size_t> optimizer_floats_;
};

}  // namespace

std::string cuda_unavailable() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) return std::string("no CUDA device: cudaGetDeviceCount says \"") + cudaGetErrorString(e) + "\"";
  if (devices == 0) return "no CUDA device on this machine";
  return "";
}

std::unique_ptr<Kernels> make_cuda_kernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int device) {
  return std::make_unique<CudaKernels>(graph, work, plan, device);
}

}  // namespace parasim::exec
