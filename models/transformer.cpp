#include "models/transformer.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "models/ops.hpp"

namespace parasim::models {
namespace {

using Dims = std::vector<std::string>;
using namespace ops;

class Builder {
 public:
  explicit Builder(const TransformerConfig& c) : c_(c), g_(c.name) {}

  Graph& graph() { return g_; }
  const TransformerConfig& config() const { return c_; }

  static Dim dim(std::string n, std::int64_t size, bool splittable = true) { return ops::dim(std::move(n), size, splittable); }

  OpId add(Operator o, std::initializer_list<OpId> inputs) {
    o.layer = layer_;
    const OpId id = g_.add_op(std::move(o));
    int slot = 0;
    for (OpId in : inputs) g_.connect(in, id, slot++);
    return id;
  }
  void set_layer(std::int32_t layer) { layer_ = layer; }

  Operator op(std::string name, OpKind kind, std::vector<Dim> dims, std::vector<Dims> inputs, Dims output) const {
    return make(std::move(name), kind, std::move(dims), std::move(inputs), std::move(output), c_.dtype);
  }
  Weight weight(std::string name, Dims dims) const { return Weight{std::move(name), TensorSpec{std::move(dims), c_.dtype}}; }

  OpId linear(const std::string& name, OpId x, const std::vector<Dim>& batch_dims, const std::vector<Dim>& in_dims,
              const std::vector<Dim>& out_dims, bool bias, const std::string& weight_name = {}) {
    return add(ops::linear(name, batch_dims, in_dims, out_dims, bias, c_.dtype, weight_name), {x});
  }

  OpId norm(const std::string& name, OpId x, bool save_input = true) {
    const bool ln = c_.norm == NormKind::LayerNorm;
    Operator o = op(name, ln ? OpKind::LayerNorm : OpKind::RMSNorm, {bdim(), sdim(), dim("h", c_.hidden, false)},
                    {{"b", "s", "h"}}, {"b", "s", "h"});
    o.weights.push_back(weight(name + ".weight", {"h"}));
    if (ln) o.weights.push_back(weight(name + ".bias", {"h"}));
    o.flops_per_point = ln ? kLayerNormFlops : kRmsNormFlops;
    o.bwd_flops_factor = 2;
    if (save_input) o.saved_inputs = {0};
    return add(std::move(o), {x});
  }

  OpId dropout(const std::string& name, OpId x, std::vector<Dim> dims) {
    if (!c_.dropout) return x;
    Dims names;
    for (const auto& d : dims) names.push_back(d.name);
    Operator o = op(name, OpKind::Dropout, std::move(dims), {names}, names);
    o.flops_per_point = kDropoutFlops;
    o.bwd_flops_factor = 1;
    o.saved_mask_bytes_per_element = 1;  // Korthikanti et al. 2022 count one byte per mask element
    return add(std::move(o), {x});
  }

  OpId add_residual(const std::string& name, OpId a, OpId b) {
    Operator o = op(name, OpKind::Add, {bdim(), sdim(), dim("h", c_.hidden)}, {{"b", "s", "h"}, {"b", "s", "h"}}, {"b", "s", "h"});
    o.flops_per_point = kAddFlops;
    o.bwd_flops_factor = 0;  // the gradient passes through unchanged
    return add(std::move(o), {a, b});
  }

  Dim bdim() const { return dim("b", c_.batch); }
  Dim sdim() const { return dim("s", c_.seq_len); }
  Dim hdim() const { return dim("h", c_.hidden); }

 private:
  const TransformerConfig& c_;
  Graph g_;
  std::int32_t layer_ = 0;
};

OpId build_embeddings(Builder& B, OpId tokens) {
  const auto& c = B.config();
  auto embedding = [&](const std::string& name, std::int64_t rows, const std::string& row_dim) {
    Operator o = B.op(name, OpKind::Embedding, {B.bdim(), B.sdim(), Builder::dim(row_dim, rows), B.hdim()}, {{"b", "s"}},
                      {"b", "s", "h"});
    o.inputs[0].dtype = DType::I64;
    o.weights.push_back(B.weight(name + ".weight", {row_dim, "h"}));
    o.bwd_flops_factor = 0;
    return B.add(std::move(o), {tokens});
  };
  OpId x = embedding("embed_tokens", c.vocab, "v");
  if (c.max_positions > 0) x = B.add_residual("embed_add_positions", x, embedding("embed_positions", c.max_positions, "p"));
  if (c.token_types > 0) x = B.add_residual("embed_add_token_types", x, embedding("embed_token_types", c.token_types, "t"));
  if (c.encoder) x = B.norm("embed_norm", x, /*save_input=*/true);
  return B.dropout("embed_dropout", x, {B.bdim(), B.sdim(), B.hdim()});
}

// The tensors attention reads. Multi-head attention and GQA: Q [b, s, g, r, d], K and V [b, s, g, d].
// Multi-head latent attention (DeepSeek-V2, §2.1): Q as above (d = the no-rope and rope parts), the
// keys' no-rope part and the values of every head from the key/value latent, KV [b, s, g, w] (w = d −
// rope + u), and the down-projection's output [b, s, j] whose last rope_head_dim elements are the rotary
// key shared by all heads. Both are read through extent dims (w, j), as the kernels read the key
// assembled from its two parts; the copy that assembles it is not modelled.
struct AttentionInputs {
  OpId q = 0, k = 0, v = 0;  ///< MLA: k is KV, v the down-projection's output
};

struct AttentionShape {
  std::int64_t g, r, d, u;  ///< key/value heads, query heads per key/value head, query/key head dim, value head dim
  bool mla;
};

AttentionShape attention_shape(const TransformerConfig& c) {
  const std::int64_t g = c.effective_kv_heads();
  return AttentionShape{g, c.heads / g, c.effective_head_dim(), c.effective_v_head_dim(), c.mla()};
}

// The K and V slots' tensors and the extent dims they need.
void attention_kv_tensors(const TransformerConfig& c, const AttentionShape& a, Operator& o, std::size_t k_slot, std::size_t v_slot) {
  if (!a.mla) return;
  o.inputs[k_slot].dims = {"b", "k", "g", "w"};
  if (v_slot < o.inputs.size()) o.inputs[v_slot].dims = {"b", "k", "j"};
  o.extent_dims.push_back(Builder::dim("w", a.d - c.rope_head_dim + a.u));
  if (v_slot < o.inputs.size()) o.extent_dims.push_back(Builder::dim("j", c.kv_lora_rank + c.rope_head_dim));
}

// Eager attention: the b·a·s² scores are written, soft-maxed, dropped out and read again. A model
// with attention sinks keeps their logits on the softmax (one more column per row, not counted).
OpId eager_attention(Builder& B, const std::string& p, const AttentionInputs& in) {
  const auto& c = B.config();
  const AttentionShape a = attention_shape(c);
  const Dim gd = Builder::dim("g", a.g), rd = Builder::dim("r", a.r), dd = Builder::dim("d", a.d);
  const Dim qd = Builder::dim("q", c.seq_len), kd = Builder::dim("k", c.seq_len, false);
  std::vector<Dims> score_inputs{{"b", "q", "g", "r", "d"}, {"b", "k", "g", "d"}};
  if (a.mla) score_inputs.push_back({"b", "k", "j"});
  Operator scores = B.op(p + "scores", OpKind::Matmul, {B.bdim(), gd, rd, qd, kd, dd}, score_inputs, {"b", "g", "r", "q", "k"});
  attention_kv_tensors(c, a, scores, 1, 2);
  scores.gemm_batch = {"b", "g", "r"};
  scores.gemm_m = {"q"};
  scores.gemm_n = {"k"};
  scores.gemm_k = {"d"};
  scores.flops_per_point = 2;
  scores.bwd_flops_factor = 2;
  scores.saved_inputs = a.mla ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1};
  const OpId sc = a.mla ? B.add(std::move(scores), {in.q, in.k, in.v}) : B.add(std::move(scores), {in.q, in.k});

  Operator softmax = B.op(p + "softmax", OpKind::Softmax, {B.bdim(), gd, rd, qd, kd}, {{"b", "g", "r", "q", "k"}}, {"b", "g", "r", "q", "k"});
  softmax.flops_per_point = kSoftmaxFlops;
  softmax.bwd_flops_factor = 1;
  softmax.saved_output = true;
  if (c.attention_sinks) softmax.weights.push_back(B.weight(p + "sinks", {"g", "r"}));
  const OpId sm = B.add(std::move(softmax), {sc});
  const OpId pr = B.dropout(p + "attn_dropout", sm, {B.bdim(), gd, rd, qd, kd});

  const Dim vd = Builder::dim(a.mla ? "u" : "d", a.u);
  const std::string v = a.mla ? "u" : "d";
  Operator context = B.op(p + "context", OpKind::Matmul, {B.bdim(), gd, rd, qd, kd, vd}, {{"b", "g", "r", "q", "k"}, {"b", "k", "g", v}},
                          {"b", "q", "g", "r", v});
  attention_kv_tensors(c, a, context, 1, 2);
  context.gemm_batch = {"b", "g", "r"};
  context.gemm_m = {"q"};
  context.gemm_n = {v};
  context.gemm_k = {"k"};
  context.flops_per_point = 2;
  context.bwd_flops_factor = 2;
  context.saved_inputs = {0, 1};
  return B.add(std::move(context), {pr, a.mla ? in.k : in.v});
}


// Fused attention (FlashAttention, Dao et al. 2022; FlashAttention-2, Dao 2023; cuDNN's fused
// attention): one kernel reads Q, K and V and writes the context; the scores stay on chip, so no
// a·s² activation is stored. It saves its inputs, its output and the fp32 log-sum-exp of every query
// row (4 bytes per (b, head, q), i.e. 4/d bytes per output element), and its backward recomputes the
// scores: five s²-sized matmuls against the forward's two, 2.5 × forward (the FLOP count of
// flash-attention's own benchmarks). A causal kernel skips the key blocks above the diagonal and
// executes about half the scores (ops::kCausalAttentionShare). Attention dropout, where the model has it, runs inside the kernel
// from the RNG state and saves no mask. Model FLOPs count the full s² and backward twice forward,
// 3 × 4 FLOPs per point, as PaLM's MFU does (Chowdhery et al. 2022, Appendix B).
// With a value head dim u other than d (MLA: d 192, u 128) a point costs 2 FLOPs for Q·Kᵀ and 2u/d
// for P·V. A sliding window of w keys executes only the scores inside it (sliding_window_share; the
// kernels skip the blocks outside, as FlashAttention-2's window_size does), and model FLOPs count
// twice that share, capped at the full s², as they count the causal half. Attention sinks (one logit
// per head) join each row's softmax inside the kernel: their FLOPs are not counted.
OpId fused_attention(Builder& B, const std::string& p, const AttentionInputs& in, std::int64_t block) {
  const auto& c = B.config();
  const AttentionShape sh = attention_shape(c);
  const Dim gd = Builder::dim("g", sh.g), rd = Builder::dim("r", sh.r), dd = Builder::dim("d", sh.d);
  const Dim qd = Builder::dim("q", c.seq_len), kd = Builder::dim("k", c.seq_len, false);
  const std::string v = sh.mla ? "u" : "d";
  Operator a = B.op(p + "core_attention", OpKind::Attention, {B.bdim(), gd, rd, qd, kd, dd},
                    {{"b", "q", "g", "r", "d"}, {"b", "k", "g", "d"}, {"b", "k", "g", "d"}}, {"b", "q", "g", "r", v});
  attention_kv_tensors(c, sh, a, 1, 2);
  if (sh.mla) a.extent_dims.push_back(Builder::dim("u", sh.u));
  a.variant = c.encoder ? "full" : "causal";  // the mask
  a.gemm_batch = {"b", "g", "r"};
  a.gemm_m = {"q"};
  a.gemm_n = {"k"};
  a.gemm_k = {"d"};
  const double per_point = 2 + 2 * static_cast<double>(sh.u) / static_cast<double>(sh.d);  // Q·Kᵀ and P·V, 2 FLOPs per MAC each
  double executed = c.encoder ? 1.0 : kCausalAttentionShare, modelled = 1.0;
  if (c.sliding_block(block)) {
    executed = sliding_window_share(c.seq_len, c.sliding_window);
    modelled = std::min(1.0, 2 * executed);
  }
  a.flops_per_point = per_point * executed;
  a.bwd_flops_factor = 2.5;
  a.model_flops_per_point = 3 * per_point * modelled;
  a.saved_inputs = {0, 1, 2};
  a.saved_output = true;
  a.saved_mask_bytes_per_element = 4.0 / static_cast<double>(sh.u);
  if (c.attention_sinks) a.weights.push_back(B.weight(p + "sinks", {"g", "r"}));
  return B.add(std::move(a), {in.q, in.k, in.v});
}

// An RMSNorm over the head dim d of every head of a [b, s, heads…, d] projection (Qwen3's q_norm and
// k_norm): one weight of d shared by the heads.
OpId head_norm(Builder& B, const std::string& name, OpId x, std::vector<Dim> dims) {
  const auto& c = B.config();
  dims.push_back(Builder::dim("d", c.effective_head_dim(), false));
  const Dims names = ops::names(dims);
  Operator o = B.op(name, OpKind::RMSNorm, std::move(dims), {names}, names);
  o.weights.push_back(B.weight(name + ".weight", {"d"}));
  o.flops_per_point = kRmsNormFlops;
  o.bwd_flops_factor = 2;
  o.saved_inputs = {0};
  return B.add(std::move(o), {x});
}

// Multi-head latent attention's projections (DeepSeek-V2, §2.1; Hugging Face's DeepseekV2Attention):
// queries straight from h (q_proj) or through a q_lora_rank latent (q_a_proj, q_a_layernorm,
// q_b_proj); keys and values through one down-projection to the kv_lora_rank latent plus the shared
// rotary key (kv_a_proj_with_mqa), a norm of the latent and an up-projection to every head's no-rope
// key and value (kv_b_proj). Training runs this form; the absorbed form is an inference optimisation.
AttentionInputs mla_projections(Builder& B, const std::string& p, OpId x) {
  const auto& c = B.config();
  const AttentionShape a = attention_shape(c);
  const Dim gd = Builder::dim("g", a.g), rd = Builder::dim("r", a.r), dd = Builder::dim("d", a.d);
  const bool down_bias = c.bias || c.attention_bias;
  AttentionInputs in;
  if (c.q_lora_rank > 0) {
    const Dim md = Builder::dim("m", c.q_lora_rank);
    const OpId down = B.linear(p + "q_a_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {md}, down_bias);
    Operator norm = B.op(p + "q_a_layernorm", OpKind::RMSNorm, {B.bdim(), B.sdim(), Builder::dim("m", c.q_lora_rank, false)},
                         {{"b", "s", "m"}}, {"b", "s", "m"});
    norm.weights.push_back(B.weight(p + "q_a_layernorm.weight", {"m"}));
    norm.flops_per_point = kRmsNormFlops;
    norm.bwd_flops_factor = 2;
    norm.saved_inputs = {0};
    const OpId latent = B.add(std::move(norm), {down});
    in.q = B.linear(p + "q_b_proj", latent, {B.bdim(), B.sdim()}, {md}, {gd, rd, dd}, false);
  } else {
    in.q = B.linear(p + "q_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {gd, rd, dd}, false);
  }
  const Dim jd = Builder::dim("j", c.kv_lora_rank + c.rope_head_dim), ld = Builder::dim("l", c.kv_lora_rank);
  in.v = B.linear(p + "kv_a_proj_with_mqa", x, {B.bdim(), B.sdim()}, {B.hdim()}, {jd}, down_bias);
  // The norm reads the latent part of the down-projection's output (an extent dim: the rotary key is
  // the rest).
  Operator norm = B.op(p + "kv_a_layernorm", OpKind::RMSNorm, {B.bdim(), B.sdim(), Builder::dim("l", c.kv_lora_rank, false)},
                       {{"b", "s", "j"}}, {"b", "s", "l"});
  norm.extent_dims = {jd};
  norm.weights.push_back(B.weight(p + "kv_a_layernorm.weight", {"l"}));
  norm.flops_per_point = kRmsNormFlops;
  norm.bwd_flops_factor = 2;
  norm.saved_inputs = {0};
  const OpId latent = B.add(std::move(norm), {in.v});
  in.k = B.linear(p + "kv_b_proj", latent, {B.bdim(), B.sdim()}, {ld}, {gd, Builder::dim("w", a.d - c.rope_head_dim + a.u)}, false);
  return in;
}

// Attention: Q, K, V projections, attention (fused or eager), output projection.
// Returns the output projection (after dropout).
OpId build_attention(Builder& B, const std::string& p, OpId x, std::int64_t block) {
  const auto& c = B.config();
  const AttentionShape a = attention_shape(c);
  const Dim gd = Builder::dim("g", a.g), rd = Builder::dim("r", a.r), dd = Builder::dim("d", a.d);
  AttentionInputs in;
  if (a.mla) {
    in = mla_projections(B, p, x);
  } else {
    const bool qkv_bias = c.bias || c.qkv_bias || c.attention_bias;
    in.q = B.linear(p + "q_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {gd, rd, dd}, qkv_bias);
    in.k = B.linear(p + "k_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {gd, dd}, qkv_bias);
    in.v = B.linear(p + "v_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {gd, dd}, qkv_bias);
    if (c.qk_norm) {
      in.q = head_norm(B, p + "q_norm", in.q, {B.bdim(), B.sdim(), gd, rd});
      in.k = head_norm(B, p + "k_norm", in.k, {B.bdim(), B.sdim(), gd});
    }
  }
  const OpId ctx = c.attention == AttentionKind::Fused ? fused_attention(B, p, in, block) : eager_attention(B, p, in);
  const Dim vd = Builder::dim(a.mla ? "u" : "d", a.u);
  const OpId o = B.linear(p + "o_proj", ctx, {B.bdim(), B.sdim()}, {gd, rd, vd}, {Builder::dim("n", c.hidden)}, c.bias || c.attention_bias);
  return B.dropout(p + "attn_out_dropout", o, {B.bdim(), B.sdim(), B.hdim()});
}

// A dense MLP of width `width` (the block's MLP, or an MoE block's shared expert).
OpId build_mlp(Builder& B, const std::string& p, OpId x, std::int64_t width) {
  const auto& c = B.config();
  const Dim fd = Builder::dim("f", width);
  OpId hidden;
  if (c.mlp == MlpKind::Gelu) {
    const OpId up = B.linear(p + "fc1", x, {B.bdim(), B.sdim()}, {B.hdim()}, {fd}, c.bias);
    Operator act = B.op(p + "gelu", OpKind::Activation, {B.bdim(), B.sdim(), fd}, {{"b", "s", "f"}}, {"b", "s", "f"});
    act.variant = "gelu";
    act.flops_per_point = kGeluFlops;
    act.bwd_flops_factor = 1;
    act.saved_inputs = {0};
    hidden = B.add(std::move(act), {up});
  } else if (c.mlp == MlpKind::SquaredRelu) {
    // relu(x)² (So et al. 2021, "Primer"; Nemotron-4): backward needs the activation's input.
    const OpId up = B.linear(p + "fc1", x, {B.bdim(), B.sdim()}, {B.hdim()}, {fd}, c.bias);
    Operator act = B.op(p + "squared_relu", OpKind::Activation, {B.bdim(), B.sdim(), fd}, {{"b", "s", "f"}}, {"b", "s", "f"});
    act.variant = "squared_relu";
    act.flops_per_point = kSquaredReluFlops;
    act.bwd_flops_factor = 1;
    act.saved_inputs = {0};
    hidden = B.add(std::move(act), {up});
  } else {
    const OpId gate = B.linear(p + "gate_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {fd}, c.bias);
    const OpId up = B.linear(p + "up_proj", x, {B.bdim(), B.sdim()}, {B.hdim()}, {fd}, c.bias);
    Operator act = B.op(p + "swiglu", OpKind::Activation, {B.bdim(), B.sdim(), fd}, {{"b", "s", "f"}, {"b", "s", "f"}}, {"b", "s", "f"});
    act.variant = "swiglu";
    act.flops_per_point = kSiluFlops + 1;
    act.bwd_flops_factor = 1;
    act.saved_inputs = {0, 1};
    hidden = B.add(std::move(act), {gate, up});
  }
  const OpId down = B.linear(p + (c.mlp == MlpKind::SwiGLU ? "down_proj" : "fc2"), hidden, {B.bdim(), B.sdim()}, {fd},
                             {Builder::dim("n", c.hidden)}, c.bias);
  return B.dropout(p + "mlp_dropout", down, {B.bdim(), B.sdim(), B.hdim()});
}

// Top-k MoE with balanced routing: every expert receives c = b·s·k/e tokens (the plan's
// expert_imbalance says how much more the busiest expert-parallel rank receives). Beside the routed
// experts an optional shared expert, a dense MLP every token passes through (DeepSeekMoE, Dai et al.
// 2024, §3.2; Qwen2-MoE), its output added to theirs, scaled by sigmoid(x·w) where the model gates it
// (Qwen2-MoE's shared_expert_gate).
OpId build_moe(Builder& B, const std::string& p, OpId x) {
  const auto& c = B.config();
  const Dim ed = Builder::dim("e", c.experts);
  Operator router = B.op(p + "router", OpKind::MoERouter, {B.bdim(), B.sdim(), B.hdim(), Builder::dim("e", c.experts, false)},
                         {{"b", "s", "h"}}, {"b", "s", "e"});
  router.weights.push_back(B.weight(p + "router.weight", {"h", "e"}));
  if (c.router_bias) router.weights.push_back(B.weight(p + "router.bias", {"e"}));
  router.gemm_m = {"b", "s"};
  router.gemm_k = {"h"};
  router.gemm_n = {"e"};
  router.flops_per_point = 2;
  router.bwd_flops_factor = 2;
  router.saved_inputs = {0};
  const OpId gate = B.add(std::move(router), {x});

  const std::int64_t tokens = c.batch * c.seq_len * c.experts_per_token;
  const std::int64_t capacity = (tokens + c.experts - 1) / c.experts;
  const Dim cd = Builder::dim("c", capacity);
  // Dispatch gathers each expert's c tokens (GShard's einsum "bsh,bse->ech"): its loops are the output
  // (e, c, h); the token dims b and s only size its inputs, so they are extent dims.
  Operator dispatch = B.op(p + "dispatch", OpKind::MoERouter, {ed, cd, B.hdim()}, {{"b", "s", "h"}, {"b", "s", "e"}}, {"e", "c", "h"});
  dispatch.extent_dims = {B.bdim(), B.sdim()};
  dispatch.routing = true;
  dispatch.flops_per_point = 0;
  dispatch.bwd_flops_factor = 0;
  const OpId routed = B.add(std::move(dispatch), {x, gate});

  const Dim fd = Builder::dim("f", c.effective_moe_ffn_hidden());
  Operator experts = B.op(p + "experts", OpKind::MoEExperts, {ed, cd, B.hdim(), fd}, {{"e", "c", "h"}}, {"e", "c", "h"});
  experts.weights.push_back(B.weight(p + "experts.w1", {"e", "h", "f"}));
  experts.weights.push_back(B.weight(p + "experts.w2", {"e", "f", "h"}));
  experts.weights.push_back(B.weight(p + "experts.w3", {"e", "h", "f"}));
  if (c.expert_bias) {  // gpt-oss: gate_up_proj_bias [e, 2f], down_proj_bias [e, h]
    experts.weights.push_back(B.weight(p + "experts.b1", {"e", "f"}));
    experts.weights.push_back(B.weight(p + "experts.b2", {"e", "h"}));
    experts.weights.push_back(B.weight(p + "experts.b3", {"e", "f"}));
  }
  experts.gemm_batch = {"e"};
  experts.gemm_m = {"c"};
  experts.gemm_k = {"h"};
  experts.gemm_n = {"f"};
  // Three GEMMs of c·h·f MACs each (gate, up, down), 2 FLOPs per MAC.
  experts.flops_per_point = 6;
  experts.bwd_flops_factor = 2;
  experts.saved_inputs = {0};
  // Inside the fused expert MLP backward needs what the dense SwiGLU MLP saves beyond its input: the
  // gate and up outputs and their product, 3·c·f elements per expert, i.e. 3·f/h per output element.
  experts.saved_mask_bytes_per_element =
      3.0 * static_cast<double>(c.effective_moe_ffn_hidden()) / static_cast<double>(c.hidden) * static_cast<double>(bytes_of(c.dtype));
  const OpId ex = B.add(std::move(experts), {routed});

  // Combine: each token's output is the gate-weighted sum of its k experts' outputs (GShard's
  // "ech,bse->bsh"); loops over the output, the expert side only sizes the first input.
  Operator combine = B.op(p + "combine", OpKind::MoERouter, {B.bdim(), B.sdim(), B.hdim()}, {{"e", "c", "h"}, {"b", "s", "e"}},
                          {"b", "s", "h"});
  combine.extent_dims = {ed, cd};
  combine.routing = true;
  combine.flops_per_point = 2.0 * static_cast<double>(c.experts_per_token);  // k multiply-adds per output element
  combine.bwd_flops_factor = 1;
  combine.saved_inputs = {0, 1};  // the gradient of the gate weights needs the expert outputs and the weights
  const OpId routed_out = B.add(std::move(combine), {ex, gate});
  if (c.shared_ffn_hidden == 0) return routed_out;

  const OpId shared = build_mlp(B, p + "shared_expert.", x, c.shared_ffn_hidden);
  // routed + shared, or routed + sigmoid(x·w)·shared: an add, with the gate a multiply more per element
  // (the sigmoid, one per token, is not counted); backward passes the gradient through to the routed
  // output and scales it for the shared one (1 FLOP), and the gate's gradient is a dot product over h (2).
  std::vector<Dim> dims{B.bdim(), B.sdim(), B.hdim()};
  std::vector<Dims> inputs{{"b", "s", "h"}, {"b", "s", "h"}};
  OpId gate_logit = 0;
  if (c.shared_expert_gate) {
    gate_logit = B.linear(p + "shared_expert_gate", x, {B.bdim(), B.sdim()}, {B.hdim()}, {Builder::dim("o", 1)}, false);
    inputs.push_back({"b", "s", "o"});
  }
  Operator sum = B.op(p + "shared_add", OpKind::Add, dims, inputs, {"b", "s", "h"});
  if (c.shared_expert_gate) {
    sum.extent_dims = {Builder::dim("o", 1)};
    sum.flops_per_point = kAddFlops + 1;
    sum.bwd_flops_factor = 1.5;
    sum.saved_inputs = {1, 2};
    return B.add(std::move(sum), {routed_out, shared, gate_logit});
  }
  sum.flops_per_point = kAddFlops;
  sum.bwd_flops_factor = 0;  // the gradient passes through unchanged
  return B.add(std::move(sum), {routed_out, shared});
}

}  // namespace

std::optional<std::string> validate(const TransformerConfig& c) {
  auto positive = [](const char* field, std::int64_t v) -> std::optional<std::string> {
    if (v < 1) return std::string(field) + " must be >= 1, found " + std::to_string(v);
    return std::nullopt;
  };
  for (auto [field, v] : {std::pair{"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads}, {"vocab", c.vocab},
                          {"seq_len", c.seq_len}, {"batch", c.batch}})
    if (auto e = positive(field, v)) return e;
  // Upper limits far above any real model; they keep token counts inside int64 and graph sizes bounded.
  for (auto [field, v, max] : {std::tuple{"layers", c.layers, kMaxLayers}, {"seq_len", c.seq_len, std::int64_t{1} << 24},
                               {"batch", c.batch, ops::kMaxBatch}})
    if (v > max) return std::string(field) + " must be <= " + std::to_string(max) + ", found " + std::to_string(v);
  for (auto [field, v] : {std::pair{"kv_heads", c.kv_heads}, {"head_dim", c.head_dim}, {"ffn_hidden", c.ffn_hidden},
                          {"max_positions", c.max_positions}, {"token_types", c.token_types}, {"experts", c.experts},
                          {"moe_ffn_hidden", c.moe_ffn_hidden}, {"shared_ffn_hidden", c.shared_ffn_hidden},
                          {"first_dense_layers", c.first_dense_layers}, {"moe_phase", c.moe_phase}, {"sliding_window", c.sliding_window},
                          {"q_lora_rank", c.q_lora_rank}, {"kv_lora_rank", c.kv_lora_rank}, {"rope_head_dim", c.rope_head_dim},
                          {"v_head_dim", c.v_head_dim}})
    if (v < 0) return std::string(field) + " must be >= 0, found " + std::to_string(v);
  for (auto [field, v] : {std::pair{"moe_every", c.moe_every}, {"sliding_every", c.sliding_every}})
    if (auto e = positive(field, v)) return e;
  // Widths and ranks far above any released model keep every count inside int64.
  for (auto [field, v] : {std::pair{"moe_ffn_hidden", c.moe_ffn_hidden}, {"shared_ffn_hidden", c.shared_ffn_hidden},
                          {"q_lora_rank", c.q_lora_rank}, {"kv_lora_rank", c.kv_lora_rank}, {"rope_head_dim", c.rope_head_dim},
                          {"v_head_dim", c.v_head_dim}, {"experts", c.experts}})
    if (v > (std::int64_t{1} << 24)) return std::string(field) + " must be <= 16777216, found " + std::to_string(v);
  if (c.head_dim == 0 && c.hidden % c.heads != 0)
    return "heads (" + std::to_string(c.heads) + ") must divide hidden (" + std::to_string(c.hidden) + ") unless head_dim is given";
  if (c.heads % c.effective_kv_heads() != 0)
    return "kv_heads (" + std::to_string(c.effective_kv_heads()) + ") must divide heads (" + std::to_string(c.heads) + ")";
  if (c.max_positions > 0 && c.seq_len > c.max_positions)
    return "seq_len (" + std::to_string(c.seq_len) + ") exceeds max_positions (" + std::to_string(c.max_positions) + ")";
  if (c.experts == 0) {
    for (auto [field, set] : {std::pair{"moe_ffn_hidden", c.moe_ffn_hidden > 0}, {"shared_ffn_hidden", c.shared_ffn_hidden > 0},
                              {"shared_expert_gate", c.shared_expert_gate}, {"router_bias", c.router_bias}, {"expert_bias", c.expert_bias}})
      if (set) return std::string(field) + " needs experts > 0 (a mixture-of-experts model)";
  } else {
    if (c.encoder) return std::string("experts > 0 needs a decoder (encoder blocks have no MoE layer here)");
    if (c.moe_phase >= c.moe_every)
      return "moe_phase (" + std::to_string(c.moe_phase) + ") must be below moe_every (" + std::to_string(c.moe_every) + ")";
    bool any = false;
    for (std::int64_t i = c.first_dense_layers; i < c.layers && !any; ++i) any = c.moe_block(i);
    if (!any)
      return "first_dense_layers (" + std::to_string(c.first_dense_layers) + "), moe_every (" + std::to_string(c.moe_every) + ") and moe_phase (" +
             std::to_string(c.moe_phase) + ") leave every one of the " + std::to_string(c.layers) + " blocks dense";
  }
  if (c.shared_expert_gate && c.shared_ffn_hidden == 0) return std::string("shared_expert_gate needs a shared expert (shared_ffn_hidden > 0)");
  if (c.mla()) {
    if (c.head_dim == 0) return std::string("head_dim must be given with multi-head latent attention (kv_lora_rank > 0): it is the query/key head dim");
    if (c.rope_head_dim >= c.head_dim)
      return "rope_head_dim (" + std::to_string(c.rope_head_dim) + ") must be below head_dim (" + std::to_string(c.head_dim) + ")";
    if (c.effective_kv_heads() != c.heads)
      return std::string("kv_heads must equal heads with multi-head latent attention: every head gets its keys and values from the latent");
    if (c.qk_norm) return std::string("qk_norm is not modelled with multi-head latent attention");
    if (c.encoder) return std::string("kv_lora_rank > 0 (multi-head latent attention) needs a decoder");
  } else {
    for (auto [field, v] : {std::pair{"q_lora_rank", c.q_lora_rank}, {"rope_head_dim", c.rope_head_dim}, {"v_head_dim", c.v_head_dim}})
      if (v > 0) return std::string(field) + " applies to multi-head latent attention only (kv_lora_rank > 0)";
  }
  if (c.sliding_window > 0 && c.encoder) return std::string("sliding_window needs a causal decoder");
  // An upper bound on the parameters, in floating point: counts are int64, and no real model is near 10^15.
  const double h = static_cast<double>(c.hidden),
               attn = static_cast<double>(c.heads + 2 * c.effective_kv_heads()) *
                          static_cast<double>(std::max(c.effective_head_dim(), c.effective_v_head_dim())) +
                      static_cast<double>(c.q_lora_rank + c.kv_lora_rank + c.rope_head_dim);
  const double mlp = static_cast<double>(c.effective_ffn_hidden()) + static_cast<double>(c.shared_ffn_hidden) +
                     static_cast<double>(c.effective_moe_ffn_hidden()) * static_cast<double>(c.experts);
  const double bound = static_cast<double>(c.layers) * (2 * h * attn + 2 * attn * static_cast<double>(c.q_lora_rank + c.kv_lora_rank) + 3 * h * mlp) +
                       2 * h * static_cast<double>(c.vocab + c.max_positions + c.token_types + 1);
  if (bound > 1e15) return std::string("the sizes give more than 10^15 parameters, beyond any model parasim can count");
  if (c.experts > 0 && (c.experts_per_token < 1 || c.experts_per_token > c.experts))
    return "experts_per_token must be between 1 and experts (" + std::to_string(c.experts) + "), found " +
           std::to_string(c.experts_per_token);
  // The routed token count batch·seq_len·experts_per_token sizes the expert capacity in int64.
  if (c.experts > 0 && static_cast<double>(c.batch) * static_cast<double>(c.seq_len) * static_cast<double>(c.experts_per_token) > 4e18)
    return std::string("batch·seq_len·experts_per_token exceeds 4·10^18 routed tokens");
  return std::nullopt;
}

Graph build_transformer(const TransformerConfig& c) {
  if (auto problem = validate(c)) PARASIM_CHECK(false, "build_transformer: " + *problem);
  Builder B(c);
  Graph& g = B.graph();
  g.set_batch(c.batch);
  TransformerShape shape{c.layers, c.hidden, c.heads, c.effective_kv_heads(), c.effective_head_dim(),
                         c.effective_ffn_hidden(), c.seq_len, c.vocab, c.experts,
                         c.experts > 0 ? c.experts_per_token : 0, c.mlp, c.attention, c.dropout};
  if (c.experts > 0) {
    shape.moe_ffn_hidden = c.effective_moe_ffn_hidden();
    shape.shared_ffn_hidden = c.shared_ffn_hidden;
    shape.shared_expert_gate = c.shared_expert_gate;
    shape.first_dense_layers = c.first_dense_layers;
    shape.moe_every = c.moe_every;
    shape.moe_phase = c.moe_phase;
  }
  shape.qk_norm = c.qk_norm;
  shape.q_lora_rank = c.q_lora_rank;
  shape.kv_lora_rank = c.kv_lora_rank;
  shape.rope_head_dim = c.rope_head_dim;
  shape.v_head_dim = c.mla() ? c.effective_v_head_dim() : 0;
  g.set_transformer(shape);

  B.set_layer(g.add_layer("embeddings"));
  Operator input = B.op("tokens", OpKind::Input, {B.bdim(), B.sdim()}, {}, {"b", "s"});
  input.output.dtype = DType::I64;
  OpId x = B.add(std::move(input), {});
  x = build_embeddings(B, x);

  for (std::int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    B.set_layer(g.add_layer("layers." + std::to_string(i)));
    if (c.encoder) {
      // Post-norm (BERT): x = LN(x + Attn(x)); x = LN(x + MLP(x)).
      const OpId a = build_attention(B, p + "attn.", x, i);
      x = B.norm(p + "attn_norm", B.add_residual(p + "attn_add", x, a));
      const OpId m = build_mlp(B, p + "mlp.", x, c.effective_ffn_hidden());
      x = B.norm(p + "mlp_norm", B.add_residual(p + "mlp_add", x, m));
    } else {
      // Pre-norm (GPT, Llama): x = x + Attn(LN(x)); x = x + MLP(LN(x)).
      const OpId a = build_attention(B, p + "attn.", B.norm(p + "input_norm", x), i);
      x = B.add_residual(p + "attn_add", x, a);
      const OpId n2 = B.norm(p + "post_attn_norm", x);
      const OpId m = c.moe_block(i) ? build_moe(B, p + "moe.", n2) : build_mlp(B, p + "mlp.", n2, c.effective_ffn_hidden());
      x = B.add_residual(p + "mlp_add", x, m);
    }
  }

  B.set_layer(g.add_layer("head"));
  if (c.encoder) {
    OpId pooled = x;
    if (c.pooler) {
      // BERT pooler: the first token's hidden state, then dense + tanh.
      Operator first = B.op("pooler.first_token", OpKind::Pool, {B.bdim(), Builder::dim("s", c.seq_len, false), B.hdim()},
                            {{"b", "s", "h"}}, {"b", "h"});
      first.variant = "first_token";
      first.bwd_flops_factor = 0;
      pooled = B.linear("pooler.dense", B.add(std::move(first), {x}), {B.bdim()}, {B.hdim()}, {Builder::dim("n", c.hidden)}, true);
      Operator act = B.op("pooler.tanh", OpKind::Activation, {B.bdim(), B.hdim()}, {{"b", "h"}}, {"b", "h"});
      act.variant = "tanh";
      act.flops_per_point = 1;
      act.bwd_flops_factor = 1;
      act.saved_output = true;
      pooled = B.add(std::move(act), {pooled});
    }
    const bool pooled_2d = c.pooler;
    Operator loss = pooled_2d ? B.op("loss", OpKind::Loss, {B.bdim(), Builder::dim("h", c.hidden, false)}, {{"b", "h"}}, {"b"})
                              : B.op("loss", OpKind::Loss, {B.bdim(), B.sdim(), Builder::dim("h", c.hidden, false)}, {{"b", "s", "h"}}, {"b"});
    loss.output.dtype = DType::F32;
    loss.flops_per_point = kLossFlops;
    loss.bwd_flops_factor = 1;
    loss.saved_inputs = {0};
    B.add(std::move(loss), {pooled});
  } else {
    x = B.norm("final_norm", x);
    Operator head = ops::linear("lm_head", {B.bdim(), B.sdim()}, {B.hdim()}, {Builder::dim("v", c.vocab)}, false, c.dtype,
                                c.tied_embeddings ? "embed_tokens.weight" : "lm_head.weight");
    // A tied head multiplies by the embedding matrix itself, [v, h], transposed: name it with the
    // embedding's dims so the shared weight has one shape.
    if (c.tied_embeddings) head.weights[0].spec.dims = {"v", "h"};
    const OpId logits = B.add(std::move(head), {x});
    // The cross-entropy runs in fp32 (Megatron-LM casts the logits with .float() before its
    // vocab-parallel cross-entropy; Hugging Face models do logits.float()), so its traffic is fp32.
    const OpId logits_fp32 = B.add(ops::cast_to_fp32("logits_fp32", {B.bdim(), B.sdim(), Builder::dim("v", c.vocab)}, c.dtype), {logits});
    Operator loss = ops::loss("loss", {B.bdim(), B.sdim()}, Builder::dim("v", c.vocab), DType::F32);
    loss.variant = ops::kVocabParallelCrossEntropy;  // its passes over the logits (models/ops.hpp)
    B.add(std::move(loss), {logits_fp32});
  }
  return std::move(g);
}

std::int64_t active_param_count(const Graph& g) {
  // As Graph::param_count, but a routed expert's weight (one of an MoEExperts operator, over its e
  // dim) counts k of its e slices.
  const std::int64_t k = g.transformer() ? g.transformer()->experts_per_token : 0;
  std::set<std::string> seen;
  std::int64_t n = 0;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const Operator& o = g.op(id);
    for (const auto& w : o.weights) {
      if (!seen.insert(w.name).second) continue;
      std::int64_t elements = 1;
      for (const auto& d : w.spec.dims) elements *= o.kind == OpKind::MoEExperts && d == "e" && k > 0 ? k : o.dim_size(d);
      n += elements;
    }
  }
  return n;
}

double sliding_window_share(std::int64_t seq_len, std::int64_t window) {
  // Σ_{q=0}^{s−1} min(q + 1, w) = w(w + 1)/2 + (s − w)·w for w ≤ s, else s(s + 1)/2.
  const double s = static_cast<double>(seq_len), w = static_cast<double>(std::min(window, seq_len));
  return (w * (w + 1) / 2 + (s - w) * w) / (s * s);
}

}  // namespace parasim::models
