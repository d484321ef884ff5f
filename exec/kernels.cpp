#include "exec/kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "exec/blas_plugin.hpp"
#include "sim/cost_model.hpp"

namespace parasim::exec {

std::string_view to_string(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm: return "GEMM";
    case KernelClass::Convolution: return "convolution";
    case KernelClass::Attention: return "attention";
    case KernelClass::Softmax: return "softmax";
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Optimizer: return "optimizer";
  }
  return "GEMM";
}

KernelClass kernel_class(const models::Operator& op, const sim::OpWork& work) {
  if (work.cls == models::OpClass::Attention) return KernelClass::Attention;
  if (work.cls == models::OpClass::Gemm) return op.kind == models::OpKind::Conv2d ? KernelClass::Convolution : KernelClass::Gemm;
  if (op.kind == models::OpKind::Softmax || op.kind == models::OpKind::Loss) return KernelClass::Softmax;
  return KernelClass::Elementwise;
}

float* Scratch::get(int slot, std::size_t count) {
  auto& v = slots_[slot];
  // New elements are 1/64: finite, and no product of the kernels here overflows or turns denormal.
  if (v.size() < count) v.resize(std::max<std::size_t>(count, 1), 1.0f / 64);
  return v.data();
}

void sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) {
  blas_plugin().sgemm(ta, tb, m, n, k, a, b, c);
}

void set_blas_threads(int threads) { blas_plugin().set_threads(threads); }

std::string blas_config() { return blas_plugin().config(); }

namespace {

std::size_t count_of(double elements) { return static_cast<std::size_t>(std::max(1.0, std::round(elements))); }

}  // namespace

void stream_pass(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] + 0.0078125f;
}

void stream_pass(double bytes, Scratch& s) {
  const std::size_t n = count_of(bytes / 8);
  stream_pass(s.get(0, n), s.get(1, n), n);
}

CpuKernels::CpuKernels(const models::Graph& graph, const sim::StepWork& work, const strategies::Plan& plan, int blas_threads)
    : graph_(graph), work_(work), plan_(plan), blas_threads_(blas_threads), parameters_(work.op_work.size()),
      outputs_(work.op_work.size()), output_gradients_(work.op_work.size()), producer_(work.op_work.size(), kNoProducer),
      optimizer_state_(work.stage_updated.size()) {
  for (models::OpId op = 0; op < work.op_work.size(); ++op) {
    const auto producers = graph.producers(op);
    if (!producers.empty() && producers.front() < work.op_work.size()) producer_[op] = producers.front();
  }
  set_blas_threads(blas_threads);
}

std::string CpuKernels::refuses(const strategies::Plan& plan) const {
  if (plan.precision != models::DType::F32)
    return "the CPU executor runs fp32 plans only; the plan trains in " + std::string(models::to_string(plan.precision));
  return "";
}

std::string CpuKernels::describe() const {
  return "parasim's CPU executor: OpenBLAS sgemm on " + std::to_string(blas_threads_) + (blas_threads_ == 1 ? " thread" : " threads") +
         " a rank, convolutions as im2col + sgemm, memory-bound loops; buffers on " + host_pages() + ", " + freed_memory();
}

void CpuKernels::run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) {
  Scratch& scratch = lanes_.at(lane);
  PARASIM_CHECK(w < work_.computes.size(), "compute work in range");
  const sim::ComputeWork& cw = work_.computes[w];
  using clock = std::chrono::steady_clock;
  if (cw.optimizer_stage >= 0) {
    const auto t0 = clock::now();
    run_optimizer(cw.optimizer_stage);
    pass_seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    return;
  }
  for (std::uint32_t k = cw.ops_begin; k < cw.ops_end; ++k) {
    const auto t0 = clock::now();
    run_pass(work_.ops[k], scratch, lane_micro_batch_.at(lane));
    pass_seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
}

float* CpuKernels::activation(bool gradient, models::OpId op, std::int32_t micro_batch, std::size_t count) {
  auto& per_micro_batch = (gradient ? output_gradients_ : outputs_)[op];
  if (per_micro_batch.size() <= static_cast<std::size_t>(micro_batch)) per_micro_batch.resize(static_cast<std::size_t>(micro_batch) + 1);
  auto& v = per_micro_batch[static_cast<std::size_t>(micro_batch)];
  if (v.size() < count) v.resize(std::max<std::size_t>(count, 1), 1.0f / 64);
  return v.data();
}

void CpuKernels::run_pass(const sim::OpPass& p, Scratch& s, std::int32_t micro_batch) {
  const models::Operator& op = graph_.op(p.op);
  const sim::OpWork& w = work_.op_work[p.op];
  if (w.is_input) return;
  const bool backward = p.pass == sim::Pass::Backward;
  if (backward && !w.has_backward) return;
  const auto batch = static_cast<std::int64_t>(std::llround(w.gemm_batch)), m = static_cast<std::int64_t>(std::llround(w.gemm_m)),
             n = static_cast<std::int64_t>(std::llround(w.gemm_n)), k = static_cast<std::int64_t>(std::llround(w.gemm_k));
  switch (kernel_class(op, w)) {
    case KernelClass::Gemm:
    case KernelClass::Convolution: {
      const bool conv = op.kind == models::OpKind::Conv2d;
      const auto mk = static_cast<std::size_t>(m * k), kn = static_cast<std::size_t>(k * n), mn = static_cast<std::size_t>(m * n);
      // Forward Y[m×n] = X[m×k]·W[k×n]; backward dX[m×k] = dY[m×n]·Wᵀ and dW[k×n] = Xᵀ·dY, with X and
      // W in slot 0 and 1, dY in slot 1, every output in slot 2.
      // An operator holding weights reads its own (and writes its own gradient), as training does;
      // a product of two activations (no weights) reads scratch.
      Parameter* own = nullptr;
      if (w.weight_elements > 0) {
        own = &parameters_[p.op];
        if (own->weights.size() < kn) {
          // 1/k: a product of activations near 1/64 then stays near them (a mean), layer after layer.
          own->weights.assign(kn, 1.0f / static_cast<float>(std::max<std::int64_t>(k, 1)));
          own->gradient.assign(kn, 0.0f);
        }
      }
      // Activations: the operator's output (forward) and its output's gradient (backward) in buffers
      // of its own for the micro-batch, its input the first producer's output (or scratch), the
      // input's gradient written into the producer's gradient buffer. A convolution's patch matrix
      // and its gradient stay in the lane's scratch (a convolution library's workspace).
      const models::OpId from = producer_[p.op];
      float* x = (conv || from == kNoProducer) ? s.get(0, std::max(mk, own ? std::size_t{0} : kn)) : activation(false, from, micro_batch, mk);
      const float* wy = backward ? activation(true, p.op, micro_batch, mn) : s.get(1, std::max(own ? std::size_t{0} : kn, mn));
      float* y = backward ? ((conv || from == kNoProducer) ? s.get(2, std::max(mn, std::max(mk, own ? std::size_t{0} : kn)))
                                                           : activation(true, from, micro_batch, mk))
                          : activation(false, p.op, micro_batch, mn);
      const float* weights = own ? own->weights.data() : wy;  // forward: W
      const float* stored = own ? own->weights.data() : x;    // backward: W, as stored (k × n)
      float* gradient = own ? own->gradient.data() : s.get(2, std::max(kn, mn));
      // A convolution's image holds about m·k / (kh·kw) floats; patch row r is the k floats of the
      // image starting at row_offset(r) (the rows of neighbouring output pixels overlap, as a real
      // patch matrix's do). im2col copies them; col2im adds a patch-matrix gradient back in place.
      const auto window = static_cast<std::size_t>(w.conv_window);
      const std::size_t kk = static_cast<std::size_t>(k), in = std::max(mk / window, kk);
      auto row_offset = [&](std::size_t r) { return (r * kk / window) % (in - kk + 1); };
      if (conv) {
        // im2col: the m × k patch matrix written from the input (m·k floats read and written).
        const float* image = from == kNoProducer ? s.get(3, in) : activation(false, from, micro_batch, in);
        for (std::size_t r = 0; r < static_cast<std::size_t>(m); ++r) std::memcpy(x + r * kk, image + row_offset(r), kk * sizeof(float));
      }
      const int kernels = backward ? w.bwd_kernels : w.gemms;
      for (int g = 0; g < kernels; ++g)
        for (std::int64_t i = 0; i < batch; ++i) {
          if (!backward) {
            sgemm(false, false, m, n, k, x, weights, y);
          } else if (g % 2 == 0) {
            sgemm(false, true, m, k, n, wy, stored, y);  // dX = dY·Wᵀ (W stored k × n)
          } else {
            sgemm(true, false, k, n, m, x, wy, gradient);  // dW = Xᵀ·dY
          }
        }
      if (conv && backward) {
        // col2im: the patch-matrix gradient added back into the image, row by row (m·k floats read,
        // and as many read and written in the image).
        float* image = from == kNoProducer ? s.get(3, in) : activation(true, from, micro_batch, in);
        for (std::size_t r = 0; r < static_cast<std::size_t>(m); ++r) {
          float* dst = image + row_offset(r);
          const float* src = y + r * kk;
          for (std::size_t j = 0; j < kk; ++j) dst[j] += 1e-30f * src[j];
        }
      }
      return;
    }
    case KernelClass::Attention: {
      // Per (batch·head): S = Q·Kᵀ (m × n over k), P = softmax(S) in place, O = P·V (m × k over n).
      const auto mk = static_cast<std::size_t>(m * k), nk = static_cast<std::size_t>(n * k), mn = static_cast<std::size_t>(m * n);
      const float* q = s.get(0, std::max(mk, nk));
      const float* kv = s.get(1, std::max(mk, nk));
      float* scores = s.get(2, mn);
      float* out = s.get(4, std::max(mk, nk));
      for (std::int64_t i = 0; i < batch; ++i) {
        if (!backward) {
          sgemm(false, true, m, n, k, q, kv, scores);
          softmax_rows(scores, scores, mn, static_cast<std::size_t>(n));
          sgemm(false, false, m, k, n, scores, kv, out);
        } else {
          sgemm(false, true, m, n, k, q, kv, scores);   // S again (the scores were not stored)
          sgemm(true, false, n, k, m, scores, q, out);  // dV = Pᵀ·dO
          sgemm(false, true, m, n, k, q, kv, scores);   // dP = dO·Vᵀ
          for (std::size_t j = 0; j < mn; ++j) scores[j] = scores[j] * 0.5f - 0.0078125f;  // dS = P ∘ (dP − rowsum)
          sgemm(false, false, m, k, n, scores, kv, out);  // dQ = dS·K
          sgemm(true, false, n, k, m, scores, q, out);    // dK = dSᵀ·Q
        }
      }
      return;
    }
    case KernelClass::Softmax: {
      const models::Dim* last = op.output.dims.empty() ? nullptr : op.find_dim(op.output.dims.back());
      // Forward: an exponential per point of the operator (its FLOPs over the FLOPs per point the
      // model counts), normalised by rows of its last output dim; backward: its bytes, memory-bound.
      if (backward) {
        stream_pass(w.bwd_bytes, s);
      } else {
        const double points = op.flops_per_point > 0 ? w.fwd_flops / op.flops_per_point : w.bytes / 8;
        softmax_pass(points * 8, last ? static_cast<double>(last->size) : 1.0, s);
      }
      return;
    }
    case KernelClass::Elementwise: {
      // Forward: the producer's output to this operator's; backward: this output's gradient to the
      // producer's (half the bytes read, half written, as stream_pass moves them).
      const models::OpId from = producer_[p.op];
      const std::size_t count = count_of((backward ? w.bwd_bytes : w.bytes) / 8);
      if (from == kNoProducer) {
        stream_pass(backward ? w.bwd_bytes : w.bytes, s);
      } else if (!backward) {
        stream_pass(activation(false, from, micro_batch, count), activation(false, p.op, micro_batch, count), count);
      } else {
        stream_pass(activation(true, p.op, micro_batch, count), activation(true, from, micro_batch, count), count);
      }
      return;
    }
    case KernelClass::Optimizer: return;
  }
}

void adam_update(float* p, const float* g, float* m, float* v, std::size_t n) {
  constexpr float lr = 1e-6f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1 - beta1) * g[i];
    v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
    p[i] -= lr * m[i] / (std::sqrt(v[i]) + eps);
  }
}

void momentum_update(float* p, const float* g, float* v, std::size_t n) {
  constexpr float lr = 1e-6f, mu = 0.9f;
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = mu * v[i] + g[i];
    p[i] -= lr * v[i];
  }
}

void CpuKernels::run_optimizer(std::int64_t stage) {
  const std::size_t n = count_of(work_.stage_updated[static_cast<std::size_t>(stage)]);
  int arrays = 2;  // parameters and gradients
  switch (plan_.optimizer) {
    case strategies::Optimizer::Adam:
    case strategies::Optimizer::AdamW: arrays = 4; break;
    case strategies::Optimizer::SGDMomentum:
    case strategies::Optimizer::Adafactor: arrays = 3; break;
    case strategies::Optimizer::SGD: arrays = 2; break;
  }
  constexpr float lr = 1e-6f;
  auto update = [&](float* p, const float* g, float* state, std::size_t count) {
    if (arrays == 4) {
      adam_update(p, g, state, state + count, count);
    } else if (arrays == 3) {
      momentum_update(p, g, state, count);
    } else {
      for (std::size_t i = 0; i < count; ++i) p[i] -= lr * g[i];
    }
  };
  // The weights the rank's kernels read, in operator order, then the rest of the stage's share.
  // (Values stay near 1/64: the gradients are products of 1/64-sized operands, the steps 1e-6.)
  std::size_t left = n;
  for (Parameter& own : parameters_) {
    if (left == 0) break;
    if (own.weights.empty()) continue;
    const std::size_t count = std::min(left, own.weights.size());
    if (own.state.size() < count * static_cast<std::size_t>(arrays - 2)) own.state.assign(count * static_cast<std::size_t>(arrays - 2), 0.0f);
    update(own.weights.data(), own.gradient.data(), own.state.data(), count);
    left -= count;
  }
  if (left == 0) return;
  auto& state = optimizer_state_[static_cast<std::size_t>(stage)];
  if (state.size() < left * static_cast<std::size_t>(arrays)) state.assign(left * static_cast<std::size_t>(arrays), 1.0f / 64);
  float* p = state.data();
  update(p, p + left, p + 2 * left, left);
}

}  // namespace parasim::exec
