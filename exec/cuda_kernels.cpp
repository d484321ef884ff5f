// The GPU executor's kernels (exec/cuda_kernels.hpp): cuBLAS, cuDNN and parasim's own CUDA kernels
// (exec/cuda_elementwise.cu) on one device. Built where CMake found the CUDA toolkit, cuDNN and a
// CUDA compiler.
#include "exec/cuda_kernels.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "exec/cuda_elementwise.hpp"
#include "exec/cudnn_graph_conv.hpp"
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

cuda::Element element_of(models::DType t) {
  switch (t) {
    case models::DType::F16: return cuda::Element::F16;
    case models::DType::BF16: return cuda::Element::BF16;
    default: return cuda::Element::F32;
  }
}

/// One lane: its stream, handles, timing events and device buffers (as the CPU executor's Scratch:
/// slots 0 and 1 operands, 2 outputs, 3 a convolution's image, 4 attention's and gradients'
/// outputs; each sized in bytes for the largest pass of the step), cuDNN's and cuBLAS's workspaces.
struct Lane {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudnnHandle_t dnn = nullptr;
  void* slot[5] = {};
  std::size_t bytes[5] = {};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  void* blas_workspace = nullptr;
  std::vector<cudaEvent_t> marks;  ///< a task's pass boundaries, made on first use and kept
};

/// A convolution's cuDNN set-up: descriptors, the algorithms cuDNN's heuristics rank first among
/// those it can run, their math types and workspaces, and its tensors' element counts.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  cudnnMathType_t fwd_math{}, data_math{}, filter_math{};
  std::size_t fwd_bytes = 0, data_bytes = 0, filter_bytes = 0;
  std::size_t x_n = 0, w_n = 0, y_n = 0;
  /// The graph API's plans (forward, backward data, backward filter), where cuDNN made all three;
  /// else the legacy API's algorithms above run.
  std::unique_ptr<cudnn_graph::Plan> graph[3];
};

/// cuBLAS's own workspace a lane (NVIDIA's cuBLAS documentation recommends 32 MiB on Hopper): set once,
/// so cuBLAS allocates nothing while collectives are in flight.
constexpr std::size_t kBlasWorkspaceBytes = std::size_t(32) << 20;

/// The most elements one memory-bound pass touches at once: a larger pass (a loss's, over a batch's
/// logits, several GB) runs as several over the same buffers, each large enough for the device's
/// full bandwidth (128 MiB each way in 16-bit elements), so that the lanes' buffers stay small.
constexpr std::size_t kPassChunk = std::size_t(1) << 26;

/// The largest workspace a convolution's algorithm may take (cuDNN's fastest algorithms can ask for
/// several GB; the lanes hold one workspace each).
constexpr std::size_t kMaxConvWorkspace = std::size_t(1) << 30;

class CudaKernels final : public Kernels {
 public:
  CudaKernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int device)
      : graph_(graph), work_(work), plan_(plan), element_(element_of(plan.precision)), optimizer_state_(work.stage_updated.size(), nullptr) {
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
    for (auto& [op, c] : convs_) {
      for (auto& g : c.graph) g.reset();  // before the handles they were made on
      cudnnDestroyConvolutionDescriptor(c.conv);
      cudnnDestroyFilterDescriptor(c.w);
      cudnnDestroyTensorDescriptor(c.y);
      cudnnDestroyTensorDescriptor(c.x);
    }
    for (auto& l : lanes_) {
      for (void* p : l.slot)
        if (p) cudaFree(p);
      if (l.workspace) cudaFree(l.workspace);
      if (l.blas_workspace) cudaFree(l.blas_workspace);
      if (l.blas) cublasDestroy(l.blas);
      if (l.dnn) cudnnDestroy(l.dnn);
      for (cudaEvent_t e : l.marks) cudaEventDestroy(e);
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
    std::string convs = "cuDNN convolutions";
    if (graph_convs_ + legacy_convs_ > 0) {
      convs += std::string(plan_.precision == models::DType::F16 || plan_.precision == models::DType::BF16 ? " (NHWC" : " (NCHW") + ", fp32 accumulation; ";
      if (legacy_convs_ == 0) {
        convs += "each by cuDNN's graph API, the first engine its heuristics rank)";
      } else {
        convs += std::to_string(graph_convs_) + " by the graph API, the first engine its heuristics rank, " + std::to_string(legacy_convs_) +
                 " by the legacy API's fastest timed algorithm, since the graph API refused them (" + legacy_why_ + "))";
      }
    }
    return "parasim's CUDA executor on " + name_ + ": cuBLAS GEMMs in " + std::string(models::to_string(plan_.precision)) + " (fp32 accumulation), " + convs +
           ", parasim's memory-bound, softmax and optimizer kernels";
  }

  /// Creates the lanes and every buffer the step will use, before any step: an allocation or free
  /// while another thread's NCCL kernel waits for a peer can hang the device (NVIDIA/nccl#195).
  void set_lanes(std::size_t lanes) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    lanes_.resize(lanes);
    for (auto& l : lanes_) {
      if (l.stream) continue;
      check(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cublasCreate(&l.blas), "cublasCreate");
      check(cublasSetStream(l.blas, l.stream), "cublasSetStream");
      check(cudaMalloc(&l.blas_workspace, kBlasWorkspaceBytes), "cudaMalloc");
      check(cublasSetWorkspace(l.blas, l.blas_workspace, kBlasWorkspaceBytes), "cublasSetWorkspace");
      check(cudnnCreate(&l.dnn), "cudnnCreate");
      check(cudnnSetStream(l.dnn, l.stream), "cudnnSetStream");
    }
    if (lanes_.empty()) return;
    // The largest size of each slot over every operator pass, and cuDNN's plans.
    std::size_t need[5] = {1, 1, 1, 1, 1}, workspace_bytes = 1;
    const std::size_t e = cuda::bytes_of(element_);
    for (models::OpId o = 0; o < work_.op_work.size(); ++o) {
      const sim::OpWork& w = work_.op_work[o];
      if (w.is_input) continue;
      const models::Operator& op = graph_.op(o);
      const Shape s = shape_of(w);
      const auto mk = static_cast<std::size_t>(s.batch * s.m * s.k), kn = static_cast<std::size_t>(s.batch * s.n * s.k),
                 mn = static_cast<std::size_t>(s.batch * s.m * s.n);
      const std::size_t pass = std::min(kPassChunk, count_of(std::max(w.bytes, w.bwd_bytes) / (2.0 * static_cast<double>(e))));
      std::size_t sizes[5] = {std::max({mk, kn, pass}), std::max({mk, kn, mn, pass}), std::max({mk, kn, mn}), std::max(mk, kn), std::max({mk, kn, mn})};
      if (kernel_class(op, w) == KernelClass::Softmax) {
        sizes[0] = std::max(sizes[0], count_of(softmax_points(op, w)));
        sizes[1] = std::max(sizes[1], count_of(softmax_points(op, w)));
      }
      if (kernel_class(op, w) == KernelClass::Convolution) {
        const ConvPlan& c = conv_plan(lanes_.front(), o);
        sizes[0] = std::max(sizes[0], c.w_n);
        sizes[1] = std::max(sizes[1], c.w_n);
        sizes[2] = std::max(sizes[2], c.y_n);
        sizes[3] = std::max(sizes[3], c.x_n);
        sizes[4] = std::max(sizes[4], c.x_n);
        workspace_bytes = std::max({workspace_bytes, c.fwd_bytes, c.data_bytes, c.filter_bytes});
      }
      for (int k = 0; k < 5; ++k) need[k] = std::max(need[k], sizes[k]);
    }
    for (auto& l : lanes_) {
      for (int k = 0; k < 5; ++k) grow(l, k, need[k] * e);
      if (l.workspace_bytes < workspace_bytes) {
        if (l.workspace) check(cudaFree(l.workspace), "cudaFree");
        check(cudaMalloc(&l.workspace, workspace_bytes), "cudaMalloc");
        l.workspace_bytes = workspace_bytes;
      }
    }
    for (std::size_t stage = 0; stage < optimizer_state_.size(); ++stage) {
      if (optimizer_state_[stage]) continue;
      const std::size_t n = count_of(work_.stage_updated[stage]) * static_cast<std::size_t>(arrays());
      check(cudaMalloc(reinterpret_cast<void**>(&optimizer_state_[stage]), n * sizeof(float)), "cudaMalloc");
      cuda::fill(optimizer_state_[stage], 1.0f / 64, n, cuda::Element::F32, lanes_.front().stream);
    }
    check(cudaDeviceSynchronize(), "setting up the executor's buffers");
  }

  /// A task's passes enqueued back to back on the lane's stream, an event before and after each, and
  /// their times read once the last is done: the host runs ahead of the device as a framework's
  /// does, so a library's own host time (cuDNN's, cuBLAS's) overlaps the device's work before it
  /// instead of being counted in each pass (a pass counts it only where the device waited for it).
  void run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    Lane& l = lanes_.at(lane);
    const sim::ComputeWork& cw = work_.computes[w];
    std::size_t passes = 0;
    auto timed = [&](auto&& body) {
      check(cudaEventRecord(mark(l, 2 * passes), l.stream), "cudaEventRecord");
      body();
      check(cudaGetLastError(), "a kernel launch");
      check(cudaEventRecord(mark(l, 2 * passes + 1), l.stream), "cudaEventRecord");
      ++passes;
    };
    if (cw.optimizer_stage >= 0) {
      const auto stage = static_cast<std::size_t>(cw.optimizer_stage);
      timed([&] { run_optimizer(l, optimizer_state_[stage], stage); });
    } else {
      for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) timed([&] { run_pass(l, work_.ops[k]); });
    }
    if (passes == 0) return;
    check(cudaEventSynchronize(l.marks[2 * passes - 1]), "a kernel");
    for (std::size_t i = 0; i < passes; ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, l.marks[2 * i], l.marks[2 * i + 1]), "cudaEventElapsedTime");
      pass_seconds.push_back(1e-3 * ms);
    }
  }

  /// Floats of a message or collective: the bytes of `count` fp32 values (NCCL moves them as floats
  /// whatever the plan's precision: the same bytes). Grown only before the first step (the executor
  /// asks for the largest first).
  float* message_buffer(std::size_t lane, std::size_t count) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    Lane& l = lanes_.at(lane);
    grow(l, 0, count * sizeof(float));
    return static_cast<float*>(l.slot[0]);
  }

 private:
  /// The lane's `i`th event, made the first time a task has that many passes (the warm-up step makes
  /// them all).
  static cudaEvent_t mark(Lane& l, std::size_t i) {
    while (l.marks.size() <= i) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      l.marks.push_back(e);
    }
    return l.marks[i];
  }

  /// Slot `k` of at least `bytes`, new space filled with values drawn from [-1/16, 1/16] in the plan's
  /// precision (not a constant: GEMMs on constant operands run faster than on real ones).
  void grow(Lane& l, int k, std::size_t bytes) {
    if (l.bytes[k] >= bytes) return;
    check(cudaStreamSynchronize(l.stream), "cudaStreamSynchronize");
    if (l.slot[k]) check(cudaFree(l.slot[k]), "cudaFree");
    check(cudaMalloc(&l.slot[k], bytes), "cudaMalloc");
    cuda::fill_random(l.slot[k], 1.0f / 16, bytes / cuda::bytes_of(element_), 0x5eedULL + static_cast<unsigned long long>(k), element_, l.stream);
    check(cudaStreamSynchronize(l.stream), "cudaStreamSynchronize");
    l.bytes[k] = bytes;
  }

  struct Shape {
    std::int64_t batch, m, n, k;
  };
  Shape shape_of(const sim::OpWork& w) const {
    return {std::max<std::int64_t>(1, std::llround(w.gemm_batch)), std::max<std::int64_t>(1, std::llround(w.gemm_m)),
            std::max<std::int64_t>(1, std::llround(w.gemm_n)), std::max<std::int64_t>(1, std::llround(w.gemm_k))};
  }
  std::size_t count_of(double elements) const { return static_cast<std::size_t>(std::max(1.0, std::round(elements))); }
  /// A softmax's or a loss's forward points, as the CPU executor counts them.
  double softmax_points(const models::Operator& op, const sim::OpWork& w) const {
    return op.flops_per_point > 0 ? w.fwd_flops / op.flops_per_point : w.bytes / (2.0 * static_cast<double>(cuda::bytes_of(element_)));
  }
  /// A memory-bound pass over `bytes`, half read and half written, in chunks of at most kPassChunk
  /// elements over the same buffers.
  void memory_pass(Lane& l, double bytes) {
    for (std::size_t left = count_of(bytes / (2.0 * static_cast<double>(cuda::bytes_of(element_)))); left > 0;) {
      const std::size_t chunk = std::min(left, kPassChunk);
      cuda::stream_pass(l.slot[1], l.slot[0], chunk, element_, l.stream);
      left -= chunk;
    }
  }

  /// Row-major C[m×n] = op(A)[m×k]·op(B)[k×n], `batch` times with the given strides (0: one matrix).
  void gemm(Lane& l, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const void* a, const void* b, void* c, std::int64_t batch,
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
        // As the CPU executor: forward the operator's GEMMs, backward the data and weight gradients
        // (a batched operator's matrices strided apart, so their outputs do not overlap).
        const std::int64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
        const int kernels = backward ? w.bwd_kernels : w.gemms;
        for (int g = 0; g < kernels; ++g) {
          if (!backward) gemm(l, false, false, s.m, s.n, s.k, l.slot[0], l.slot[1], l.slot[2], s.batch, mk, kn, mn);
          else if (g % 2 == 0) gemm(l, false, true, s.m, s.k, s.n, l.slot[1], l.slot[0], l.slot[4], s.batch, mn, kn, mk);
          else gemm(l, true, false, s.k, s.n, s.m, l.slot[0], l.slot[1], l.slot[2], s.batch, mk, mn, kn);
        }
        return;
      }
      case KernelClass::Attention: {
        // Per (batch·head), strided batched: S = Q·Kᵀ, P = softmax(S), O = P·V; backward the four
        // gradient GEMMs, S recomputed, and dS's elementwise pass.
        const std::int64_t mk = s.m * s.k, nk = s.n * s.k, mn = s.m * s.n;
        void *q = l.slot[0], *kv = l.slot[1], *scores = l.slot[2], *out = l.slot[4];
        const auto elements = static_cast<std::size_t>(s.batch * mn);
        if (!backward) {
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          cuda::softmax_rows(scores, scores, elements, static_cast<std::size_t>(s.n), element_, l.stream);
          gemm(l, false, false, s.m, s.k, s.n, scores, kv, out, s.batch, mn, nk, mk);
        } else {
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          gemm(l, true, false, s.n, s.k, s.m, scores, q, out, s.batch, mn, mk, nk);
          gemm(l, false, true, s.m, s.n, s.k, q, kv, scores, s.batch, mk, nk, mn);
          cuda::stream_pass(scores, scores, elements, element_, l.stream);
          gemm(l, false, false, s.m, s.k, s.n, scores, kv, out, s.batch, mn, nk, mk);
          gemm(l, true, false, s.n, s.k, s.m, scores, q, out, s.batch, mn, mk, nk);
        }
        return;
      }
      case KernelClass::Softmax: {
        if (backward) {
          memory_pass(l, w.bwd_bytes);
        } else {
          const models::Dim* last = op.output.dims.empty() ? nullptr : op.find_dim(op.output.dims.back());
          cuda::softmax_rows(l.slot[0], l.slot[1], count_of(softmax_points(op, w)), last ? static_cast<std::size_t>(last->size) : 1, element_, l.stream);
        }
        return;
      }
      case KernelClass::Elementwise: memory_pass(l, backward ? w.bwd_bytes : w.bytes); return;
      case KernelClass::Optimizer: return;
    }
  }

  /// The cuDNN plan of convolution `id`, made once (on `l`'s handle, before any step): NHWC or NCHW
  /// (below) in the plan's precision with fp32 accumulation, its local extents from the plan's sharding; stride
  /// and padding from its input and output sizes (a 1×1 stride-1 convolution has no input extent
  /// dims: its input is its output's size).
  const ConvPlan& conv_plan(Lane& l, models::OpId id) {
    if (const auto it = convs_.find(id); it != convs_.end()) return it->second;
    const models::Operator& op = graph_.op(id);
    const strategies::OpSharding& sh = plan_.sharding[id];
    auto local = [&](const char* d, const char* fallback) {
      const char* name = op.find_dim(d) ? d : fallback;
      return static_cast<int>(std::max<std::int64_t>(1, strategies::local_dim_size(plan_.mesh, sh, op, name)));
    };
    const int n = local("b", "b"), c = local("ci", "ci"), h = local("ih", "oh"), wd = local("iw", "ow"), k = local("co", "co"), r = local("kh", "kh"),
              s = local("kw", "kw"), oh = local("oh", "oh"), ow = local("ow", "ow");
    const int stride_h = std::max(1, (h + oh - 1) / oh), stride_w = std::max(1, (wd + ow - 1) / ow);
    const int pad_h = std::max(0, ((oh - 1) * stride_h + r - h + 1) / 2), pad_w = std::max(0, ((ow - 1) * stride_w + s - wd + 1) / 2);
    const cudnnDataType_t t = cudnn_type(plan_.precision);
    ConvPlan p;
    check(cudnnCreateTensorDescriptor(&p.x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&p.y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&p.w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&p.conv), "cudnnCreateConvolutionDescriptor");
    // 16-bit plans channels-last (NHWC), as mixed-precision CNN training runs on tensor cores
    // (PyTorch's channels_last memory format; NVIDIA's "Convolutional Layers User's Guide", "Tensor
    // Layouts in Memory": NHWC avoids the transposes NCHW needs around tensor-core kernels); fp32
    // and tf32 NCHW, PyTorch's default.
    const bool half = plan_.precision == models::DType::F16 || plan_.precision == models::DType::BF16;
    const cudnnTensorFormat_t format = half ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    check(cudnnSetTensor4dDescriptor(p.x, format, t, n, c, h, wd), "cudnnSetTensor4dDescriptor");
    check(cudnnSetFilter4dDescriptor(p.w, t, format, k, c, r, s), "cudnnSetFilter4dDescriptor");
    check(cudnnSetConvolution2dDescriptor(p.conv, pad_h, pad_w, stride_h, stride_w, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    // fp32 without TF32 (which cuDNN's default math allows from Ampere on); tf32 with it; 16-bit on
    // tensor cores.
    const cudnnMathType_t math = plan_.precision == models::DType::F32    ? CUDNN_FMA_MATH
                                 : plan_.precision == models::DType::TF32 ? CUDNN_DEFAULT_MATH
                                                                          : CUDNN_TENSOR_OP_MATH;
    check(cudnnSetConvolutionMathType(p.conv, math), "cudnnSetConvolutionMathType");
    int on = 0, oc = 0, ooh = 0, oow = 0;
    check(cudnnGetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &on, &oc, &ooh, &oow), "cudnnGetConvolution2dForwardOutputDim");
    check(cudnnSetTensor4dDescriptor(p.y, format, t, on, oc, ooh, oow), "cudnnSetTensor4dDescriptor");
    p.x_n = static_cast<std::size_t>(n) * c * h * wd;
    p.w_n = static_cast<std::size_t>(k) * c * r * s;
    p.y_n = static_cast<std::size_t>(on) * oc * ooh * oow;
    // The graph API first, as frameworks call cuDNN today (exec/cudnn_graph_conv.hpp).
    {
      const cudnn_graph::Shape shape{n, c, h, wd, k, r, s, ooh, oow, pad_h, pad_w, stride_h, stride_w, t, half};
      std::string why;
      const cudnn_graph::Direction directions[3] = {cudnn_graph::Direction::Forward, cudnn_graph::Direction::BackwardData,
                                                    cudnn_graph::Direction::BackwardFilter};
      for (int d = 0; d < 3 && why.empty(); ++d) p.graph[d] = cudnn_graph::Plan::make(l.dnn, shape, directions[d], kMaxConvWorkspace, why);
      if (why.empty()) {
        p.fwd_bytes = p.graph[0]->workspace_bytes();
        p.data_bytes = p.graph[1]->workspace_bytes();
        p.filter_bytes = p.graph[2]->workspace_bytes();
        ++graph_convs_;
        return convs_.emplace(id, std::move(p)).first->second;
      }
      for (auto& g : p.graph) g.reset();
      if (legacy_why_.empty()) legacy_why_ = op.name + ": " + why;
      ++legacy_convs_;
    }
    choose<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
        p, math, op.name,
        [&](auto* perf, int* found) {
          check(cudnnFindConvolutionForwardAlgorithm(l.dnn, p.x, p.w, p.conv, p.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, found, perf),
                "cudnnFindConvolutionForwardAlgorithm");
        },
        [&](auto algo, std::size_t* bytes) {
          check(cudnnGetConvolutionForwardWorkspaceSize(l.dnn, p.x, p.w, p.conv, p.y, algo, bytes), "cudnnGetConvolutionForwardWorkspaceSize");
        },
        p.fwd, p.fwd_math, p.fwd_bytes);
    choose<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
        p, math, op.name,
        [&](auto* perf, int* found) {
          check(cudnnFindConvolutionBackwardDataAlgorithm(l.dnn, p.w, p.y, p.conv, p.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, found, perf),
                "cudnnFindConvolutionBackwardDataAlgorithm");
        },
        [&](auto algo, std::size_t* bytes) {
          check(cudnnGetConvolutionBackwardDataWorkspaceSize(l.dnn, p.w, p.y, p.conv, p.x, algo, bytes), "cudnnGetConvolutionBackwardDataWorkspaceSize");
        },
        p.bwd_data, p.data_math, p.data_bytes);
    choose<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
        p, math, op.name,
        [&](auto* perf, int* found) {
          check(cudnnFindConvolutionBackwardFilterAlgorithm(l.dnn, p.x, p.y, p.conv, p.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, found, perf),
                "cudnnFindConvolutionBackwardFilterAlgorithm");
        },
        [&](auto algo, std::size_t* bytes) {
          check(cudnnGetConvolutionBackwardFilterWorkspaceSize(l.dnn, p.x, p.y, p.conv, p.w, algo, bytes),
                "cudnnGetConvolutionBackwardFilterWorkspaceSize");
        },
        p.bwd_filter, p.filter_math, p.filter_bytes);
    return convs_.emplace(id, std::move(p)).first->second;
  }

  /// One of a convolution's three algorithms: the fastest that cuDNN timed on this device (`query`
  /// fills the ranking, as PyTorch's `cudnn.benchmark = True` asks) within kMaxConvWorkspace, its
  /// math type, and its workspace (`size`, asked with that math type set); the descriptor is left at
  /// `math`.
  template <class Perf, int Count, class Query, class Size, class Algo>
  void choose(const ConvPlan& p, cudnnMathType_t math, const std::string& op, Query&& query, Size&& size, Algo& algo, cudnnMathType_t& algo_math,
              std::size_t& bytes) {
    Perf perf[Count];
    int found = 0;
    query(perf, &found);
    const Perf* best = first_usable(perf, found, op);
    algo = best->algo;
    algo_math = best->mathType;
    check(cudnnSetConvolutionMathType(p.conv, algo_math), "cudnnSetConvolutionMathType");
    size(algo, &bytes);
    check(cudnnSetConvolutionMathType(p.conv, math), "cudnnSetConvolutionMathType");
  }

  /// The first of cuDNN's ranked algorithms it can run within kMaxConvWorkspace.
  template <class Perf>
  static const Perf* first_usable(const Perf* perf, int found, const std::string& op) {
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxConvWorkspace) return &perf[i];
    throw PlanError("--backend cuda: cuDNN has no algorithm for convolution \"" + op + "\"");
  }

  void convolution(Lane& l, models::OpId id, bool backward) {
    const ConvPlan& p = convs_.at(id);
    if (p.graph[0]) {
      // Forward: y (slot 2) from x (slot 3) and w (slot 1); backward data: dx (slot 4) from w and dy
      // (slot 2); backward filter: dw (slot 0) from x and dy.
      if (!backward) {
        check(p.graph[0]->execute(l.dnn, l.slot[3], l.slot[1], l.slot[2], l.workspace), "cuDNN's forward convolution plan");
        return;
      }
      check(p.graph[1]->execute(l.dnn, l.slot[4], l.slot[1], l.slot[2], l.workspace), "cuDNN's backward-data convolution plan");
      check(p.graph[2]->execute(l.dnn, l.slot[3], l.slot[0], l.slot[2], l.workspace), "cuDNN's backward-filter convolution plan");
      return;
    }
    const float alpha = 1, beta = 0;
    if (!backward) {
      check(cudnnSetConvolutionMathType(p.conv, p.fwd_math), "cudnnSetConvolutionMathType");
      check(cudnnConvolutionForward(l.dnn, &alpha, p.x, l.slot[3], p.w, l.slot[1], p.conv, p.fwd, l.workspace, p.fwd_bytes, &beta, p.y, l.slot[2]),
            "cudnnConvolutionForward");
      return;
    }
    check(cudnnSetConvolutionMathType(p.conv, p.data_math), "cudnnSetConvolutionMathType");
    check(cudnnConvolutionBackwardData(l.dnn, &alpha, p.w, l.slot[1], p.y, l.slot[2], p.conv, p.bwd_data, l.workspace, p.data_bytes, &beta, p.x,
                                       l.slot[4]),
          "cudnnConvolutionBackwardData");
    check(cudnnSetConvolutionMathType(p.conv, p.filter_math), "cudnnSetConvolutionMathType");
    check(cudnnConvolutionBackwardFilter(l.dnn, &alpha, p.x, l.slot[3], p.y, l.slot[2], p.conv, p.bwd_filter, l.workspace, p.filter_bytes, &beta, p.w,
                                         l.slot[0]),
          "cudnnConvolutionBackwardFilter");
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
  cuda::Element element_;
  int device_ = 0;
  std::string name_;
  std::vector<Lane> lanes_;
  std::map<models::OpId, ConvPlan> convs_;
  int graph_convs_ = 0, legacy_convs_ = 0;  ///< convolutions planned by cuDNN's graph API, and by its legacy API
  std::string legacy_why_;                 ///< why the graph API refused the first that it refused
  std::vector<float*> optimizer_state_;
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
