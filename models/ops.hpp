#pragma once
/// Constructors for the operators that several builders share (a linear layer, a loss, any operator
/// whose tensors share one dtype) and the FLOPs per element of the memory-bound operators, so the
/// ResNet, MLP and transformer graphs describe the same operator the same way.
#include <cstdint>
#include <string>
#include <vector>

#include "models/operator.hpp"

namespace parasim::models::ops {

// FLOPs per element of the memory-bound operators: they are a fraction of a percent of a model's
// FLOPs and their time comes from bytes moved, so rounded counts suffice. LayerNorm and BatchNorm:
// mean, variance, normalise, scale, shift ≈ 5; RMSNorm ≈ 4; GELU (tanh form) ≈ 8; SiLU ≈ 5; softmax:
// max, subtract, exp, sum, divide ≈ 5; a softmax cross-entropy ≈ 5 as softmax.
inline constexpr double kLayerNormFlops = 5, kBatchNormFlops = 5, kRmsNormFlops = 4, kGeluFlops = 8, kSiluFlops = 5,
                        kSoftmaxFlops = 5, kDropoutFlops = 1, kAddFlops = 1, kReluFlops = 1, kLossFlops = 5,
                        kSquaredReluFlops = 2;  // max(x, 0), then its square

/// A language model's loss as Megatron-Core computes it (`variant` of its Loss operator): the
/// vocab-parallel cross-entropy of megatron/core/tensor_parallel/cross_entropy.py (tag core_r0.8.0;
/// NeMo's GPT and Llama models use it too) runs unfused PyTorch operations over the fp32 logits, each
/// a pass over them: forward, the maximum (read), subtracting it in place (read, write), exp in place
/// (read, write), the sum (read) and dividing by it in place (read, write) = 8 passes, the softmax
/// kept for the backward; backward, subtracting 1 at the targets (one element per row) and
/// multiplying by the loss gradient in place (read, write) = 2 passes. The fp32 cast before it is its
/// own operator.
inline constexpr const char* kVocabParallelCrossEntropy = "vocab_parallel";
inline constexpr double kVocabParallelCrossEntropyFwdPasses = 8, kVocabParallelCrossEntropyBwdPasses = 2;

/// The share of the s × s score matrix a causal fused attention executes, as its FLOPs are counted:
/// one half. The blocks on the diagonal run in full and are masked inside; that waste is part of
/// the kernel's measured efficiency, which the published benchmarks state against the same half
/// (flash-attention's benchmarks/benchmark_flash_attention.py: flops = 4·b·s²·heads·d / 2 when causal).
inline constexpr double kCausalAttentionShare = 0.5;

/// The largest batch any builder accepts (inclusive): with sequence lengths and expert fan-out it keeps
/// every token count far inside int64.
inline constexpr std::int64_t kMaxBatch = 1LL << 31;

/// A dim of an operator's iteration space.
[[nodiscard]] Dim dim(std::string name, std::int64_t size, bool splittable = true);

/// The names of `dims`, in order.
[[nodiscard]] std::vector<std::string> names(const std::vector<Dim>& dims);

/// An operator whose inputs and output all have element type `dtype`; FLOPs and saved tensors unset.
[[nodiscard]] Operator make(std::string name, OpKind kind, std::vector<Dim> dims, std::vector<std::vector<std::string>> inputs,
                            std::vector<std::string> output, DType dtype);

/// y = x·W (+ b). Loops: batch, in and out dims; x [batch…, in…], y [batch…, out…], W [in…, out…]
/// named `weight_name` (default name + ".weight"; a shared name ties weights), b [out…]. GEMM view
/// m = batch, k = in, n = out; 2 FLOPs per MAC; backward twice forward (data and weight gradients);
/// saves x for the weight gradient.
[[nodiscard]] Operator linear(std::string name, const std::vector<Dim>& batch, const std::vector<Dim>& in, const std::vector<Dim>& out,
                              bool bias, DType dtype, std::string weight_name = {});

/// The fp32 upcast of a tensor [dims…] of type `from` (reads 2 bytes, writes 4 per element for fp16).
[[nodiscard]] Operator cast_to_fp32(std::string name, const std::vector<Dim>& dims, DType from);

/// Softmax cross-entropy of logits [batch…, classes] against integer labels: output the per-sample
/// loss [batch…] in fp32; saves the logits (PyTorch keeps the log-softmax output, of the same size).
[[nodiscard]] Operator loss(std::string name, const std::vector<Dim>& batch, const Dim& classes, DType dtype);

}  // namespace parasim::models::ops
