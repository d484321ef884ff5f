#include "exec/numerics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "exec/kernels.hpp"
#include "sim/work/layout.hpp"
#include "strategies/local_shape.hpp"

namespace parasim::exec::numerics {

std::size_t Tensor::count() const {
  std::size_t n = 1;
  for (const auto s : sizes) n *= static_cast<std::size_t>(s);
  return n;
}

// ---- Collectives among threads ----------------------------------------------------------------

std::vector<std::vector<float>> ThreadCollectives::exchange(std::span<const std::int64_t> group, const float* mine, std::size_t count) {
  const std::vector<std::int64_t> members(group.begin(), group.end());
  const auto me = static_cast<std::size_t>(std::find(members.begin(), members.end(), device_) - members.begin());
  PARASIM_CHECK(me < members.size(), "a device takes part in its own group's collective");
  std::unique_lock lock(world_.mutex_);
  const std::uint64_t call = world_.sequence_[{members, device_}]++;
  auto& round = world_.rounds_[{members, call}];
  if (round.parts.empty()) round.parts.resize(members.size());
  round.parts[me].assign(mine, mine + count);
  ++round.arrived;
  world_.changed_.notify_all();
  world_.changed_.wait(lock, [&] { return round.arrived == members.size(); });
  std::vector<std::vector<float>> parts = round.parts;
  if (++round.left == members.size()) world_.rounds_.erase({members, call});
  return parts;
}

void ThreadCollectives::all_reduce(std::span<const std::int64_t> group, float* data, std::size_t count) {
  const auto parts = exchange(group, data, count);
  // Summed in group order on every member, so every member holds the same bits.
  for (std::size_t i = 0; i < count; ++i) {
    float s = 0;
    for (const auto& p : parts) s += p[i];
    data[i] = s;
  }
}

void ThreadCollectives::all_gather(std::span<const std::int64_t> group, const float* mine, std::size_t count, float* out) {
  const auto parts = exchange(group, mine, count);
  for (std::size_t j = 0; j < parts.size(); ++j) std::copy(parts[j].begin(), parts[j].end(), out + j * count);
}

void ThreadCollectives::send(std::int64_t peer, const float* data, std::size_t count) {
  std::lock_guard lock(world_.mutex_);
  world_.mail_[{device_, peer}].emplace_back(data, data + count);
  world_.changed_.notify_all();
}

void ThreadCollectives::receive(std::int64_t peer, float* data, std::size_t count) {
  std::unique_lock lock(world_.mutex_);
  auto& box = world_.mail_[{peer, device_}];
  world_.changed_.wait(lock, [&] { return !box.empty(); });
  PARASIM_CHECK(box.front().size() == count, "a message of the size its receiver expects");
  std::copy(box.front().begin(), box.front().end(), data);
  box.erase(box.begin());
}

namespace {

using models::OpId;
using models::OpKind;
using models::Operator;
using sim::Layout;

bool contains(const std::vector<int>& v, int a) { return std::find(v.begin(), v.end(), a) != v.end(); }

/// Row-major strides of `sizes`.
std::vector<std::size_t> strides_of(const std::vector<std::int64_t>& sizes) {
  std::vector<std::size_t> s(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) s[i - 1] = s[i] * static_cast<std::size_t>(sizes[i]);
  return s;
}

/// Calls f(index vector) for every index of `sizes`, in row-major order.
template <class F>
void for_each_index(const std::vector<std::int64_t>& sizes, F&& f) {
  std::vector<std::int64_t> idx(sizes.size(), 0);
  for (const auto s : sizes)
    if (s == 0) return;
  while (true) {
    f(idx);
    std::size_t d = sizes.size();
    while (d > 0) {
      if (++idx[d - 1] < sizes[d - 1]) break;
      idx[d - 1] = 0;
      --d;
    }
    if (d == 0) return;
  }
}

/// `t` with its positions reordered: result position i is t's position order[i].
Tensor permute(const Tensor& t, const std::vector<std::size_t>& order) {
  Tensor out;
  for (const auto o : order) out.sizes.push_back(t.sizes[o]);
  out.values.resize(t.count());
  const auto in_strides = strides_of(t.sizes);
  std::size_t k = 0;
  for_each_index(out.sizes, [&](const std::vector<std::int64_t>& idx) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < order.size(); ++i) at += static_cast<std::size_t>(idx[i]) * in_strides[order[i]];
    out.values[k++] = t.values[at];
  });
  return out;
}

/// The order that takes dims `from` (names) to `to`: to[i] = from[order[i]].
std::vector<std::size_t> order_of(const std::vector<std::string>& from, const std::vector<std::string>& to) {
  std::vector<std::size_t> order;
  for (const auto& d : to) {
    const auto it = std::find(from.begin(), from.end(), d);
    PARASIM_CHECK(it != from.end(), "a dim of the target order is in the source");
    order.push_back(static_cast<std::size_t>(it - from.begin()));
  }
  return order;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Block `index` of `parts` equal blocks along position p.
Tensor slice_dim(const Tensor& t, std::size_t p, std::int64_t parts, std::int64_t index) {
  PARASIM_CHECK(t.sizes[p] % parts == 0, "a split dim divides evenly");
  Tensor out = t;
  out.sizes[p] = t.sizes[p] / parts;
  out.values.resize(out.count());
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < p; ++i) outer *= static_cast<std::size_t>(t.sizes[i]);
  for (std::size_t i = p + 1; i < t.sizes.size(); ++i) inner *= static_cast<std::size_t>(t.sizes[i]);
  const auto block = static_cast<std::size_t>(out.sizes[p]) * inner, whole = static_cast<std::size_t>(t.sizes[p]) * inner;
  for (std::size_t o = 0; o < outer; ++o)
    std::copy_n(t.values.begin() + static_cast<std::ptrdiff_t>(o * whole + static_cast<std::size_t>(index) * block), block,
                out.values.begin() + static_cast<std::ptrdiff_t>(o * block));
  return out;
}

/// The parts of every group member (in group order), concatenated along position p.
Tensor concat_dim(const Tensor& mine, const std::vector<float>& all, std::size_t members, std::size_t p) {
  Tensor out = mine;
  out.sizes[p] = mine.sizes[p] * static_cast<std::int64_t>(members);
  out.values.resize(out.count());
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < p; ++i) outer *= static_cast<std::size_t>(mine.sizes[i]);
  for (std::size_t i = p + 1; i < mine.sizes.size(); ++i) inner *= static_cast<std::size_t>(mine.sizes[i]);
  const auto block = static_cast<std::size_t>(mine.sizes[p]) * inner, count = mine.count();
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t j = 0; j < members; ++j)
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(j * count + o * block), block,
                  out.values.begin() + static_cast<std::ptrdiff_t>((o * members + j) * block));
  return out;
}

/// C[m×n] (+)= A·B with A m×k, B k×n as stored (transposed when ta/tb), through the executor's sgemm.
std::vector<float> matmul(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b) {
  std::vector<float> c(static_cast<std::size_t>(m * n), 0.0f);
  if (m > 0 && n > 0 && k > 0) sgemm(ta, tb, m, n, k, a, b, c.data());
  return c;
}

/// Position of each of `dims`' names.
std::size_t position(const std::vector<std::string>& dims, const std::string& d) {
  const auto it = std::find(dims.begin(), dims.end(), d);
  PARASIM_CHECK(it != dims.end(), "a GEMM dim of the operator's tensor");
  return static_cast<std::size_t>(it - dims.begin());
}

/// The matrix of `t` (named `dims`) at the batch index `at` (dims the tensor lacks are ignored: it is
/// broadcast over them), rows over `rows`, columns over `cols`, row-major. With `add`, the matrix is
/// added into the tensor instead (a gradient; a broadcast input's sums over what it was broadcast to).
void matrix_io(Tensor& t, const std::vector<std::string>& dims, const std::map<std::string, std::int64_t>& at, const std::vector<std::string>& rows,
               const std::vector<std::string>& cols, std::vector<float>& m, bool add) {
  const auto strides = strides_of(t.sizes);
  std::size_t base = 0;
  for (const auto& [d, i] : at)
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) base += static_cast<std::size_t>(i) * strides[position(dims, d)];
  std::vector<std::int64_t> row_sizes, col_sizes;
  std::vector<std::size_t> row_strides, col_strides;
  for (const auto& d : rows) {
    row_sizes.push_back(t.sizes[position(dims, d)]);
    row_strides.push_back(strides[position(dims, d)]);
  }
  for (const auto& d : cols) {
    col_sizes.push_back(t.sizes[position(dims, d)]);
    col_strides.push_back(strides[position(dims, d)]);
  }
  std::size_t nr = 1, nc = 1;
  for (const auto s : row_sizes) nr *= static_cast<std::size_t>(s);
  for (const auto s : col_sizes) nc *= static_cast<std::size_t>(s);
  if (!add) m.assign(nr * nc, 0.0f);
  std::size_t r = 0;
  for_each_index(row_sizes, [&](const std::vector<std::int64_t>& ri) {
    std::size_t ro = base;
    for (std::size_t i = 0; i < ri.size(); ++i) ro += static_cast<std::size_t>(ri[i]) * row_strides[i];
    std::size_t c = 0;
    for_each_index(col_sizes, [&](const std::vector<std::int64_t>& ci) {
      std::size_t at_ = ro;
      for (std::size_t i = 0; i < ci.size(); ++i) at_ += static_cast<std::size_t>(ci[i]) * col_strides[i];
      if (add) t.values[at_] += m[r * nc + c];
      else m[r * nc + c] = t.values[at_];
      ++c;
    });
    ++r;
  });
}

struct Saved {
  std::vector<Tensor> inputs;  // local, in input_layout order
  Tensor output;               // local, in output_layout
  std::vector<float> probabilities;  // attention: P per (b, g, r); loss: softmax
};

class Runner {
 public:
  Runner(const models::Graph& graph, const strategies::Plan& plan, std::span<const OpId> ops, const Inputs& inputs, Collectives& c)
      : g_(graph), plan_(plan), inputs_(inputs), c_(c), device_(c.device()), coords_(plan.mesh.coords_of(device_)) {
    for (const OpId o : ops) in_range_.insert(o);
    for (const OpId o : graph.topological_order())
      if (in_range_.count(o)) order_.push_back(o);
    saved_.resize(graph.op_count());
    out_layout_.resize(graph.op_count());
    in_grads_.resize(graph.op_count());
  }

  Results run() {
    for (const OpId o : order_)
      if (stage_of(o) == my_stage()) forward(o);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it)
      if (stage_of(*it) == my_stage()) backward(*it);
    // Weight gradients: reduced over the axes they are partial sums over, then gathered whole.
    for (auto& [name, wg] : weight_grads_) {
      auto& [tensor, layout] = wg;
      Layout partial = layout;
      partial.partial = partial_of_[name];
      tensor = reshard(tensor, partial, replicated(layout.pos.size()));
      results_.weight_grads[name] = std::move(tensor);
    }
    return std::move(results_);
  }

 private:
  const strategies::OpSharding& sh(OpId o) const { return plan_.sharding[o]; }
  std::int64_t my_stage() const { return plan_.pp_axis >= 0 ? coords_[static_cast<std::size_t>(plan_.pp_axis)] : 0; }
  std::int64_t stage_of(OpId o) const {
    return plan_.pp_axis >= 0 ? plan_.stage_of_chunk(plan_.chunk_of_layer[static_cast<std::size_t>(g_.op(o).layer)]) : 0;
  }
  /// This device's peer on pipeline stage `stage` (same coordinates on every other axis).
  std::int64_t peer_on(std::int64_t stage) const {
    auto c = coords_;
    c[static_cast<std::size_t>(plan_.pp_axis)] = stage;
    return plan_.mesh.device_at(c);
  }
  std::int64_t axis_size(int a) const { return plan_.mesh.axes[static_cast<std::size_t>(a)].size; }
  static Layout replicated(std::size_t positions) {
    Layout l;
    l.pos.resize(positions);
    return l;
  }

  std::vector<std::int64_t> global_sizes(const Operator& op, const std::vector<std::string>& dims) const {
    std::vector<std::int64_t> s;
    for (const auto& d : dims) s.push_back(op.dim_size(d));
    return s;
  }

  /// This device's block of a global tensor in `layout` (no partial).
  Tensor local_of(Tensor t, const Layout& layout) const {
    for (std::size_t p = 0; p < layout.pos.size(); ++p)
      for (const int a : layout.pos[p]) t = slice_dim(t, p, axis_size(a), coords_[static_cast<std::size_t>(a)]);
    return t;
  }

  /// `t` (local, in layout `from`) in layout `to`: the collectives sim::reshard lowers for the change,
  /// run for real, then local slices where `to` splits what `from` held whole.
  Tensor reshard(Tensor t, const Layout& from, const Layout& to) {
    PARASIM_CHECK(from.pos.size() == to.pos.size(), "a tensor keeps its rank across a reshard");
    double bytes = static_cast<double>(t.count()) * sizeof(float);
    for (const auto& r : sim::reshard(from, to, bytes, bytes, plan_.mesh)) {
      int pf = -1, pt = -1;
      for (std::size_t i = 0; i < from.pos.size(); ++i) {
        if (contains(from.pos[i], r.axis)) pf = static_cast<int>(i);
        if (contains(to.pos[i], r.axis)) pt = static_cast<int>(i);
      }
      const auto group = plan_.mesh.group_of(device_, std::vector<int>{r.axis});
      const auto members = group.size();
      const std::int64_t me = coords_[static_cast<std::size_t>(r.axis)];
      results_.collectives.push_back(std::string(sim::to_string(r.kind)) + " " + plan_.mesh.axes[static_cast<std::size_t>(r.axis)].name + " " +
                                     std::to_string(t.count() * sizeof(float)));
      switch (r.kind) {
        case sim::CollectiveKind::AllReduce: c_.all_reduce(group, t.values.data(), t.count()); break;
        case sim::CollectiveKind::ReduceScatter:
          c_.all_reduce(group, t.values.data(), t.count());
          t = slice_dim(t, static_cast<std::size_t>(pt), static_cast<std::int64_t>(members), me);
          break;
        case sim::CollectiveKind::AllGather:
        case sim::CollectiveKind::AllToAll: {
          std::vector<float> all(t.count() * members);
          c_.all_gather(group, t.values.data(), t.count(), all.data());
          t = concat_dim(t, all, members, static_cast<std::size_t>(pf));
          if (r.kind == sim::CollectiveKind::AllToAll) t = slice_dim(t, static_cast<std::size_t>(pt), static_cast<std::int64_t>(members), me);
          break;
        }
        default: PARASIM_CHECK(false, "a reshard is an all-reduce, reduce-scatter, all-gather or all-to-all");
      }
    }
    // Axes that split `to` where `from` was whole (and not partial): a local slice, no communication.
    for (std::size_t p = 0; p < to.pos.size(); ++p)
      for (const int a : to.pos[p]) {
        bool held = contains(from.partial, a);
        for (const auto& q : from.pos) held |= contains(q, a);
        if (!held) t = slice_dim(t, p, axis_size(a), coords_[static_cast<std::size_t>(a)]);
      }
    return t;
  }

  /// Input `slot` of `o`, local, in its input layout.
  Tensor input_of(OpId o, std::size_t slot) {
    const Operator& op = g_.op(o);
    const Layout want = sim::input_layout(op, sh(o), slot);
    const OpId p = g_.producers(o)[slot];
    if (!in_range_.count(p)) {
      const auto it = inputs_.activations.find(g_.op(p).name);
      PARASIM_CHECK(it != inputs_.activations.end(), "an input tensor for every operator feeding the range");
      return local_of(it->second, want);
    }
    if (stage_of(p) == my_stage()) return reshard(saved_[p].output, out_layout_[p], want);
    // From the previous stage: the producer's output with its partial sums reduced.
    auto cached = received_.find(p);
    if (cached == received_.end()) {
      const Layout sent = sim::without_partial(sim::output_layout(g_.op(p), sh(p)));
      Tensor t;
      t.sizes = global_sizes(g_.op(p), g_.op(p).output.dims);
      for (std::size_t i = 0; i < sent.pos.size(); ++i)
        for (const int a : sent.pos[i]) t.sizes[i] /= axis_size(a);
      t.values.resize(t.count());
      c_.receive(peer_on(stage_of(p)), t.values.data(), t.count());
      cached = received_.emplace(p, std::make_pair(std::move(t), sent)).first;
    }
    return reshard(cached->second.first, cached->second.second, want);
  }

  Tensor weight_of(OpId o, std::size_t w) const {
    const Operator& op = g_.op(o);
    const auto it = inputs_.weights.find(op.weights[w].name);
    PARASIM_CHECK(it != inputs_.weights.end(), "a value for every weight");
    return local_of(it->second, weight_layout(o, w));
  }
  Layout weight_layout(OpId o, std::size_t w) const {
    Layout l;
    for (const auto& d : g_.op(o).weights[w].spec.dims) l.pos.push_back(sh(o).axes_of(d));
    return l;
  }
  /// Local sizes of `dims` of `o`.
  std::map<std::string, std::int64_t> local_dims(OpId o) const {
    std::map<std::string, std::int64_t> m;
    for (const auto& d : g_.op(o).dims) m[d.name] = d.size / strategies::axes_product(plan_.mesh, sh(o).axes_of(d.name));
    return m;
  }
  /// This device holds the first block of every axis the output is a partial sum over (where a bias
  /// is added once).
  bool first_over_partial(OpId o) const {
    for (const int a : sim::output_layout(g_.op(o), sh(o)).partial)
      if (coords_[static_cast<std::size_t>(a)] != 0) return false;
    return true;
  }
  /// Offset of this device's block along position p of a tensor in `layout` of global size `size`.
  std::int64_t offset_of(const Layout& layout, std::size_t p, std::int64_t local) const {
    std::int64_t off = 0;
    for (const int a : layout.pos[p]) off = off * axis_size(a) + coords_[static_cast<std::size_t>(a)];
    return off * local;
  }

  void forward(OpId o) {
    const Operator& op = g_.op(o);
    Saved& s = saved_[o];
    out_layout_[o] = sim::output_layout(op, sh(o));
    if (op.kind == OpKind::Input) {
      const auto it = inputs_.activations.find(op.name);
      PARASIM_CHECK(it != inputs_.activations.end(), "a value for every graph input in the range");
      s.output = local_of(it->second, out_layout_[o]);
    } else {
      for (std::size_t i = 0; i < op.inputs.size(); ++i) s.inputs.push_back(input_of(o, i));
      s.output = compute(o, s);
    }
    // To the next stages that read it: once per stage, with its partial sums reduced.
    std::set<std::int64_t> sent;
    for (const auto& [c, slot] : g_.consumers(o)) {
      (void)slot;
      if (!in_range_.count(c) || stage_of(c) == my_stage() || !sent.insert(stage_of(c)).second) continue;
      const Tensor t = reshard(s.output, out_layout_[o], sim::without_partial(out_layout_[o]));
      c_.send(peer_on(stage_of(c)), t.values.data(), t.count());
    }
    bool read_outside = op.kind == OpKind::Loss;
    for (const auto& [c, slot] : g_.consumers(o)) read_outside |= !in_range_.count(c);
    if (read_outside) results_.outputs[op.name] = reshard(s.output, out_layout_[o], replicated(out_layout_[o].pos.size()));
  }

  Tensor compute(OpId o, Saved& s) {
    const Operator& op = g_.op(o);
    switch (op.kind) {
      case OpKind::Linear: return linear_forward(o, s);
      case OpKind::Attention: return attention(o, s, nullptr, nullptr);
      case OpKind::Matmul: return matmul_op(o, s, nullptr, nullptr);
      case OpKind::Softmax: {
        Tensor y = s.inputs[0];
        softmax_rows(s.inputs[0].values.data(), y.values.data(), y.count(), static_cast<std::size_t>(y.sizes.back()));
        return y;
      }
      case OpKind::LayerNorm: return layer_norm_forward(o, s);
      case OpKind::Activation: {
        Tensor y = s.inputs[0];
        for (float& v : y.values) v = op.variant == "relu" ? std::max(v, 0.0f) : gelu(v);
        return y;
      }
      case OpKind::Add: {
        Tensor y = s.inputs[0];
        for (std::size_t i = 0; i < y.values.size(); ++i) y.values[i] += s.inputs[1].values[i];
        return y;
      }
      case OpKind::Dropout: return s.inputs[0];
      case OpKind::Loss: return loss_forward(o, s);
      default: PARASIM_CHECK(false, "a supported operator kind"); return {};
    }
  }

  static float gelu(float x) {
    // The tanh form (Hendrycks & Gimpel 2016, §2), as GPT-2 and Megatron-LM compute it.
    const float k = 0.7978845608f;  // √(2/π)
    return 0.5f * x * (1 + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  static float gelu_grad(float x) {
    const float k = 0.7978845608f, u = k * (x + 0.044715f * x * x * x), t = std::tanh(u);
    return 0.5f * (1 + t) + 0.5f * x * (1 - t * t) * k * (1 + 3 * 0.044715f * x * x);
  }

  /// The main weight (holding a contracted dim) and the bias (output dims only) of a linear.
  std::pair<std::size_t, int> linear_weights(const Operator& op) const {
    std::size_t main = 0;
    int bias = -1;
    for (std::size_t w = 0; w < op.weights.size(); ++w) {
      bool output_only = true;
      for (const auto& d : op.weights[w].spec.dims) output_only &= std::find(op.output.dims.begin(), op.output.dims.end(), d) != op.output.dims.end();
      if (output_only) bias = static_cast<int>(w);
      else main = w;
    }
    return {main, bias};
  }

  /// A linear's GEMM view on this device: its local extents, its input as A[M×K] and its main weight
  /// as W[K×N] (permuted from their dims), and which weights are the main one and the bias.
  struct LinearView {
    std::map<std::string, std::int64_t> local;
    std::int64_t m = 1, n = 1, k = 1;
    Tensor a, w;
    std::size_t main = 0;
    int bias = -1;
  };
  LinearView linear_view(OpId o, const Saved& s) const {
    const Operator& op = g_.op(o);
    LinearView v;
    std::tie(v.main, v.bias) = linear_weights(op);
    v.local = local_dims(o);
    auto extent = [&](const std::vector<std::string>& dims) {
      std::int64_t e = 1;
      for (const auto& d : dims) e *= v.local.at(d);
      return e;
    };
    v.m = extent(op.gemm_m);
    v.n = extent(op.gemm_n);
    v.k = extent(op.gemm_k);
    v.a = permute(s.inputs[0], order_of(op.inputs[0].dims, concat(op.gemm_m, op.gemm_k)));
    v.w = permute(weight_of(o, v.main), order_of(op.weights[v.main].spec.dims, concat(op.gemm_k, op.gemm_n)));
    return v;
  }

  /// Linear forward: A[M×K] · W[K×N] by the operator's GEMM view, then the bias once.
  Tensor linear_forward(OpId o, Saved& s) {
    const Operator& op = g_.op(o);
    const LinearView v = linear_view(o, s);
    const auto bias = v.bias;
    Tensor c;
    for (const auto& d : concat(op.gemm_m, op.gemm_n)) c.sizes.push_back(v.local.at(d));
    c.values = matmul(false, false, v.m, v.n, v.k, v.a.values.data(), v.w.values.data());
    Tensor y = permute(c, order_of(concat(op.gemm_m, op.gemm_n), op.output.dims));
    if (bias >= 0 && first_over_partial(o)) add_bias(o, static_cast<std::size_t>(bias), y, weight_of(o, static_cast<std::size_t>(bias)));
    return y;
  }

  /// y += the bias broadcast over the output dims it lacks.
  void add_bias(OpId o, std::size_t w, Tensor& y, const Tensor& b) const {
    const Operator& op = g_.op(o);
    const auto order = order_of(op.output.dims, op.weights[w].spec.dims);
    const auto bs = strides_of(b.sizes);
    std::size_t k = 0;
    for_each_index(y.sizes, [&](const std::vector<std::int64_t>& idx) {
      std::size_t at = 0;
      for (std::size_t i = 0; i < order.size(); ++i) at += static_cast<std::size_t>(idx[order[i]]) * bs[i];
      y.values[k++] += b.values[at];
    });
  }

  /// The bias's gradient: dy summed over the output dims the bias lacks.
  Tensor bias_grad(OpId o, std::size_t w, const Tensor& dy) const {
    const Operator& op = g_.op(o);
    const auto order = order_of(op.output.dims, op.weights[w].spec.dims);
    const auto local = local_dims(o);
    Tensor b;
    for (const auto& d : op.weights[w].spec.dims) b.sizes.push_back(local.at(d));
    b.values.assign(b.count(), 0.0f);
    const auto bs = strides_of(b.sizes);
    std::size_t k = 0;
    for_each_index(dy.sizes, [&](const std::vector<std::int64_t>& idx) {
      std::size_t at = 0;
      for (std::size_t i = 0; i < order.size(); ++i) at += static_cast<std::size_t>(idx[order[i]]) * bs[i];
      b.values[at] += dy.values[k++];
    });
    return b;
  }

  /// A weightless batched matmul (eager attention's scores and context) by its GEMM view: per batch
  /// index, C[m×n] = A[m×k]·B[k×n]; an input lacking a batch dim is broadcast over it. Forward when
  /// dout is null; else both inputs' gradients into grads.
  Tensor matmul_op(OpId o, Saved& s, const Tensor* dout, std::vector<Tensor>* grads) {
    const Operator& op = g_.op(o);
    const auto local = local_dims(o);
    std::vector<std::int64_t> batch_sizes;
    for (const auto& d : op.gemm_batch) batch_sizes.push_back(local.at(d));
    auto extent = [&](const std::vector<std::string>& dims) {
      std::int64_t e = 1;
      for (const auto& d : dims) e *= local.at(d);
      return e;
    };
    const std::int64_t m = extent(op.gemm_m), n = extent(op.gemm_n), k = extent(op.gemm_k);
    Tensor out;
    for (const auto& d : op.output.dims) out.sizes.push_back(local.at(d));
    out.values.assign(out.count(), 0.0f);
    if (dout) {
      grads->assign(2, Tensor{});
      for (std::size_t i = 0; i < 2; ++i) {
        (*grads)[i] = s.inputs[i];
        std::fill((*grads)[i].values.begin(), (*grads)[i].values.end(), 0.0f);
      }
    }
    Tensor& a_t = s.inputs[0];
    Tensor& b_t = s.inputs[1];
    std::vector<float> a, b, c;
    for_each_index(batch_sizes, [&](const std::vector<std::int64_t>& bi) {
      std::map<std::string, std::int64_t> at;
      for (std::size_t i = 0; i < bi.size(); ++i) at[op.gemm_batch[i]] = bi[i];
      matrix_io(a_t, op.inputs[0].dims, at, op.gemm_m, op.gemm_k, a, false);
      matrix_io(b_t, op.inputs[1].dims, at, op.gemm_k, op.gemm_n, b, false);
      if (!dout) {
        c = matmul(false, false, m, n, k, a.data(), b.data());
        matrix_io(out, op.output.dims, at, op.gemm_m, op.gemm_n, c, true);
        return;
      }
      Tensor dy = *dout;
      matrix_io(dy, op.output.dims, at, op.gemm_m, op.gemm_n, c, false);
      std::vector<float> da = matmul(false, true, m, k, n, c.data(), b.data());  // dA = dC·Bᵀ
      std::vector<float> db = matmul(true, false, k, n, m, a.data(), c.data());  // dB = Aᵀ·dC
      matrix_io((*grads)[0], op.inputs[0].dims, at, op.gemm_m, op.gemm_k, da, true);
      matrix_io((*grads)[1], op.inputs[1].dims, at, op.gemm_k, op.gemm_n, db, true);
    });
    return out;
  }

  /// Fused attention by positions: Q (B, S, G, R, D), K and V (B, S, G, D), output (B, S, G, R, Dv).
  /// Forward when dout is null; else the gradients of Q, K and V into grads.
  Tensor attention(OpId o, Saved& s, const Tensor* dout, std::vector<Tensor>* grads) {
    const Operator& op = g_.op(o);
    const Tensor &q = s.inputs[0], &k = s.inputs[1], &v = s.inputs[2];
    const std::int64_t B = q.sizes[0], Q = q.sizes[1], G = q.sizes[2], R = q.sizes[3], D = q.sizes[4], K = k.sizes[1], Dv = v.sizes[3];
    const float scale = 1.0f / std::sqrt(static_cast<float>(op.dim_size(op.inputs[0].dims[4])));
    const bool causal = op.variant == "causal";
    Tensor out;
    out.sizes = {B, Q, G, R, Dv};
    out.values.assign(out.count(), 0.0f);
    if (dout) {
      grads->assign(3, Tensor{});
      (*grads)[0] = q;
      (*grads)[1] = k;
      (*grads)[2] = v;
      for (auto& t : *grads) std::fill(t.values.begin(), t.values.end(), 0.0f);
    } else {
      s.probabilities.assign(static_cast<std::size_t>(B * G * R * Q * K), 0.0f);
    }
    const auto qs = strides_of(q.sizes), ks = strides_of(k.sizes), vs = strides_of(v.sizes), os = strides_of(out.sizes);
    std::vector<float> qm(static_cast<std::size_t>(Q * D)), km(static_cast<std::size_t>(K * D)), vm(static_cast<std::size_t>(K * Dv)),
        dom(static_cast<std::size_t>(Q * Dv));
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t g = 0; g < G; ++g)
        for (std::int64_t r = 0; r < R; ++r) {
          for (std::int64_t i = 0; i < Q; ++i)
            for (std::int64_t d = 0; d < D; ++d) qm[static_cast<std::size_t>(i * D + d)] = q.values[b * qs[0] + i * qs[1] + g * qs[2] + r * qs[3] + d * qs[4]];
          for (std::int64_t j = 0; j < K; ++j) {
            for (std::int64_t d = 0; d < D; ++d) km[static_cast<std::size_t>(j * D + d)] = k.values[b * ks[0] + j * ks[1] + g * ks[2] + d * ks[3]];
            for (std::int64_t d = 0; d < Dv; ++d) vm[static_cast<std::size_t>(j * Dv + d)] = v.values[b * vs[0] + j * vs[1] + g * vs[2] + d * vs[3]];
          }
          float* p = s.probabilities.data() + static_cast<std::size_t>(((b * G + g) * R + r) * Q * K);
          if (!dout) {
            std::vector<float> scores = matmul(false, true, Q, K, D, qm.data(), km.data());
            for (std::int64_t i = 0; i < Q; ++i)
              for (std::int64_t j = 0; j < K; ++j) {
                float& x = scores[static_cast<std::size_t>(i * K + j)];
                // A masked score is a large negative number rather than −∞: the row softmax is
                // built with -ffast-math (exec/softmax.cpp), which assumes no infinities.
                x = causal && j > i ? -1e30f : x * scale;
              }
            softmax_rows(scores.data(), p, scores.size(), static_cast<std::size_t>(K));
            const std::vector<float> om = matmul(false, false, Q, Dv, K, p, vm.data());
            for (std::int64_t i = 0; i < Q; ++i)
              for (std::int64_t d = 0; d < Dv; ++d) out.values[b * os[0] + i * os[1] + g * os[2] + r * os[3] + d * os[4]] = om[static_cast<std::size_t>(i * Dv + d)];
            continue;
          }
          for (std::int64_t i = 0; i < Q; ++i)
            for (std::int64_t d = 0; d < Dv; ++d) dom[static_cast<std::size_t>(i * Dv + d)] = dout->values[b * os[0] + i * os[1] + g * os[2] + r * os[3] + d * os[4]];
          // dV = Pᵀ·dO; dP = dO·Vᵀ; dS = P ∘ (dP − rowsum(dP ∘ P)) · scale; dQ = dS·K; dK = dSᵀ·Q.
          const std::vector<float> dv = matmul(true, false, K, Dv, Q, p, dom.data());
          std::vector<float> ds = matmul(false, true, Q, K, Dv, dom.data(), vm.data());
          for (std::int64_t i = 0; i < Q; ++i) {
            float dot = 0;
            for (std::int64_t j = 0; j < K; ++j) dot += ds[static_cast<std::size_t>(i * K + j)] * p[i * K + j];
            for (std::int64_t j = 0; j < K; ++j) ds[static_cast<std::size_t>(i * K + j)] = p[i * K + j] * (ds[static_cast<std::size_t>(i * K + j)] - dot) * scale;
          }
          const std::vector<float> dq = matmul(false, false, Q, D, K, ds.data(), km.data());
          const std::vector<float> dk = matmul(true, false, K, D, Q, ds.data(), qm.data());
          Tensor &gq = (*grads)[0], &gk = (*grads)[1], &gv = (*grads)[2];
          for (std::int64_t i = 0; i < Q; ++i)
            for (std::int64_t d = 0; d < D; ++d) gq.values[b * qs[0] + i * qs[1] + g * qs[2] + r * qs[3] + d * qs[4]] = dq[static_cast<std::size_t>(i * D + d)];
          for (std::int64_t j = 0; j < K; ++j) {
            for (std::int64_t d = 0; d < D; ++d) gk.values[b * ks[0] + j * ks[1] + g * ks[2] + d * ks[3]] += dk[static_cast<std::size_t>(j * D + d)];
            for (std::int64_t d = 0; d < Dv; ++d) gv.values[b * vs[0] + j * vs[1] + g * vs[2] + d * vs[3]] += dv[static_cast<std::size_t>(j * Dv + d)];
          }
        }
    return out;
  }

  static constexpr float kNormEpsilon = 1e-5f;  // PyTorch's LayerNorm default

  /// Layer norm over the last position, scale then shift (weights[0], weights[1] where present).
  Tensor layer_norm_forward(OpId o, Saved& s) {
    const Operator& op = g_.op(o);
    Tensor y = s.inputs[0];
    const auto h = static_cast<std::size_t>(y.sizes.back()), rows = y.count() / h;
    const Tensor gamma = op.weights.empty() ? Tensor{} : weight_of(o, 0);
    const Tensor beta = op.weights.size() > 1 ? weight_of(o, 1) : Tensor{};
    for (std::size_t r = 0; r < rows; ++r) {
      float* x = y.values.data() + r * h;
      float mean = 0, var = 0;
      for (std::size_t i = 0; i < h; ++i) mean += x[i];
      mean /= static_cast<float>(h);
      for (std::size_t i = 0; i < h; ++i) var += (x[i] - mean) * (x[i] - mean);
      const float inv = 1.0f / std::sqrt(var / static_cast<float>(h) + kNormEpsilon);
      for (std::size_t i = 0; i < h; ++i) {
        x[i] = (x[i] - mean) * inv;
        if (!gamma.values.empty()) x[i] *= gamma.values[i];
        if (!beta.values.empty()) x[i] += beta.values[i];
      }
    }
    return y;
  }

  /// Softmax cross-entropy over the last position against the labels, one loss per row.
  Tensor loss_forward(OpId o, Saved& s) {
    const Tensor& x = s.inputs[0];
    const auto classes = static_cast<std::size_t>(x.sizes.back()), rows = x.count() / classes;
    const Layout in = sim::input_layout(g_.op(o), sh(o), 0);
    const std::int64_t first = offset_of(in, 0, x.sizes[0]), per_sample = static_cast<std::int64_t>(rows) / x.sizes[0];
    s.probabilities.resize(x.count());
    softmax_rows(x.values.data(), s.probabilities.data(), x.count(), classes);
    Tensor out;
    out.sizes.assign(x.sizes.begin(), x.sizes.end() - 1);
    out.values.resize(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto label = static_cast<std::size_t>(inputs_.labels.at(static_cast<std::size_t>(first + static_cast<std::int64_t>(r) / per_sample)));
      out.values[r] = -std::log(s.probabilities[r * classes + label]);
    }
    return out;
  }

  void add_weight_grad(OpId o, std::size_t w, Tensor grad) {
    const auto& name = g_.op(o).weights[w].name;
    auto [it, fresh] = weight_grads_.try_emplace(name, std::make_pair(std::move(grad), weight_layout(o, w)));
    if (!fresh) {
      for (std::size_t i = 0; i < it->second.first.values.size(); ++i) it->second.first.values[i] += grad.values[i];
    }
    partial_of_[name] = sim::weight_grad_partial_axes(g_.op(o), sh(o), g_.op(o).weights[w]);
  }

  void backward(OpId o) {
    const Operator& op = g_.op(o);
    Saved& s = saved_[o];
    const Layout want = sim::without_partial(out_layout_[o]);
    // The output's gradient: from every consumer in the range, from outside, or 1 a sample (a loss).
    Tensor dy = s.output;
    std::fill(dy.values.begin(), dy.values.end(), op.kind == OpKind::Loss ? 1.0f : 0.0f);
    auto accumulate = [&](const Tensor& t) {
      for (std::size_t i = 0; i < dy.values.size(); ++i) dy.values[i] += t.values[i];
    };
    // A consumer on another stage sent one message per input slot it reads this output at; messages
    // between two devices arrive in the order they were sent (stages run backward in reverse graph
    // order, as this loop visits the consumers of a chain).
    // Consumers on this stage whose gradients share a layout are summed first and resharded once, as
    // the lowering reduces a tensor's gradient once however many operators read it (Megatron's one
    // all-reduce for the Q, K and V projections' input gradient).
    std::map<Layout, Tensor> local;
    for (const auto& [c, slot] : g_.consumers(o)) {
      if (!in_range_.count(c)) continue;
      if (stage_of(c) == my_stage()) {
        const Tensor& part = in_grads_[c][static_cast<std::size_t>(slot)];
        auto [it, fresh] = local.try_emplace(sim::input_grad_layout(g_.op(c), sh(c), static_cast<std::size_t>(slot)), part);
        if (!fresh)
          for (std::size_t i = 0; i < part.values.size(); ++i) it->second.values[i] += part.values[i];
      } else {
        Tensor t = dy;
        c_.receive(peer_on(stage_of(c)), t.values.data(), t.count());
        accumulate(t);
      }
    }
    for (const auto& [layout, part] : local) accumulate(reshard(part, layout, want));
    if (const auto it = inputs_.output_grads.find(op.name); it != inputs_.output_grads.end()) accumulate(local_of(it->second, want));
    if (op.kind == OpKind::Input) return;

    std::vector<Tensor> dx(op.inputs.size());
    switch (op.kind) {
      case OpKind::Linear: {
        const LinearView v = linear_view(o, s);
        const auto& [local, m, n, k, a, w, main, bias] = v;
        const Tensor dc = permute(dy, order_of(op.output.dims, concat(op.gemm_m, op.gemm_n)));
        Tensor da, dw;
        da.values = matmul(false, true, m, k, n, dc.values.data(), w.values.data());
        for (const auto& d : concat(op.gemm_m, op.gemm_k)) da.sizes.push_back(local.at(d));
        dw.values = matmul(true, false, k, n, m, a.values.data(), dc.values.data());
        for (const auto& d : concat(op.gemm_k, op.gemm_n)) dw.sizes.push_back(local.at(d));
        dx[0] = permute(da, order_of(concat(op.gemm_m, op.gemm_k), op.inputs[0].dims));
        add_weight_grad(o, main, permute(dw, order_of(concat(op.gemm_k, op.gemm_n), op.weights[main].spec.dims)));
        if (bias >= 0) add_weight_grad(o, static_cast<std::size_t>(bias), bias_grad(o, static_cast<std::size_t>(bias), dy));
        break;
      }
      case OpKind::Attention: (void)attention(o, s, &dy, &dx); break;
      case OpKind::Matmul: (void)matmul_op(o, s, &dy, &dx); break;
      case OpKind::Softmax: {
        // dx = y ∘ (dy − rowsum(dy ∘ y)), y the saved output.
        const Tensor& y = s.output;
        const auto row = static_cast<std::size_t>(y.sizes.back());
        dx[0] = y;
        for (std::size_t r = 0; r < y.count() / row; ++r) {
          float dot = 0;
          for (std::size_t j = 0; j < row; ++j) dot += dy.values[r * row + j] * y.values[r * row + j];
          for (std::size_t j = 0; j < row; ++j) dx[0].values[r * row + j] = y.values[r * row + j] * (dy.values[r * row + j] - dot);
        }
        break;
      }
      case OpKind::LayerNorm: {
        const Tensor& x = s.inputs[0];
        const auto h = static_cast<std::size_t>(x.sizes.back()), rows = x.count() / h;
        const Tensor gamma = op.weights.empty() ? Tensor{} : weight_of(o, 0);
        Tensor dgamma, dbeta;
        if (!op.weights.empty()) dgamma = Tensor{{static_cast<std::int64_t>(h)}, std::vector<float>(h, 0.0f)};
        if (op.weights.size() > 1) dbeta = Tensor{{static_cast<std::int64_t>(h)}, std::vector<float>(h, 0.0f)};
        dx[0] = x;
        std::vector<float> xhat(h), gy(h);
        for (std::size_t r = 0; r < rows; ++r) {
          const float* xr = x.values.data() + r * h;
          const float* dyr = dy.values.data() + r * h;
          float mean = 0, var = 0;
          for (std::size_t i = 0; i < h; ++i) mean += xr[i];
          mean /= static_cast<float>(h);
          for (std::size_t i = 0; i < h; ++i) var += (xr[i] - mean) * (xr[i] - mean);
          const float inv = 1.0f / std::sqrt(var / static_cast<float>(h) + kNormEpsilon);
          float mean_gy = 0, mean_gy_xhat = 0;
          for (std::size_t i = 0; i < h; ++i) {
            xhat[i] = (xr[i] - mean) * inv;
            gy[i] = dyr[i] * (gamma.values.empty() ? 1.0f : gamma.values[i]);
            mean_gy += gy[i];
            mean_gy_xhat += gy[i] * xhat[i];
            if (!dgamma.values.empty()) dgamma.values[i] += dyr[i] * xhat[i];
            if (!dbeta.values.empty()) dbeta.values[i] += dyr[i];
          }
          mean_gy /= static_cast<float>(h);
          mean_gy_xhat /= static_cast<float>(h);
          for (std::size_t i = 0; i < h; ++i) dx[0].values[r * h + i] = inv * (gy[i] - mean_gy - xhat[i] * mean_gy_xhat);
        }
        if (!dgamma.values.empty()) add_weight_grad(o, 0, std::move(dgamma));
        if (!dbeta.values.empty()) add_weight_grad(o, 1, std::move(dbeta));
        break;
      }
      case OpKind::Activation:
        dx[0] = s.inputs[0];
        for (std::size_t i = 0; i < dy.values.size(); ++i) {
          const float x = s.inputs[0].values[i];
          dx[0].values[i] = dy.values[i] * (op.variant == "relu" ? (x > 0 ? 1.0f : 0.0f) : gelu_grad(x));
        }
        break;
      case OpKind::Add: dx[0] = dy; dx[1] = dy; break;
      case OpKind::Dropout: dx[0] = dy; break;
      case OpKind::Loss: {
        const auto classes = static_cast<std::size_t>(s.inputs[0].sizes.back());
        const Layout in = sim::input_layout(op, sh(o), 0);
        const std::int64_t first = offset_of(in, 0, s.inputs[0].sizes[0]);
        const auto rows = s.inputs[0].count() / classes, per_sample = rows / static_cast<std::size_t>(s.inputs[0].sizes[0]);
        dx[0] = s.inputs[0];
        for (std::size_t r = 0; r < rows; ++r) {
          const auto label = static_cast<std::size_t>(inputs_.labels.at(static_cast<std::size_t>(first + static_cast<std::int64_t>(r / per_sample))));
          for (std::size_t j = 0; j < classes; ++j)
            dx[0].values[r * classes + j] = dy.values[r] * (s.probabilities[r * classes + j] - (j == label ? 1.0f : 0.0f));
        }
        break;
      }
      default: PARASIM_CHECK(false, "a supported operator kind");
    }
    in_grads_[o] = dx;
    // Gradients leaving the range or the stage.
    const auto producers = g_.producers(o);
    for (std::size_t i = 0; i < dx.size(); ++i) {
      const OpId p = producers[i];
      const Layout from = sim::input_grad_layout(op, sh(o), i);
      if (!in_range_.count(p)) {
        const Tensor whole = reshard(dx[i], from, replicated(from.pos.size()));
        auto [it, fresh] = results_.input_grads.try_emplace(g_.op(p).name, whole);
        if (!fresh)
          for (std::size_t e = 0; e < whole.values.size(); ++e) it->second.values[e] += whole.values[e];
      } else if (stage_of(p) != my_stage()) {
        const Tensor t = reshard(dx[i], from, sim::without_partial(sim::output_layout(g_.op(p), sh(p))));
        c_.send(peer_on(stage_of(p)), t.values.data(), t.count());
      }
    }
  }

  const models::Graph& g_;
  const strategies::Plan& plan_;
  const Inputs& inputs_;
  Collectives& c_;
  std::int64_t device_;
  std::vector<std::int64_t> coords_;
  std::set<OpId> in_range_;
  std::vector<OpId> order_;
  std::vector<Saved> saved_;
  std::vector<Layout> out_layout_;
  std::vector<std::vector<Tensor>> in_grads_;
  std::map<OpId, std::pair<Tensor, Layout>> received_;
  std::map<std::string, std::pair<Tensor, Layout>> weight_grads_;
  std::map<std::string, sim::AxisSet> partial_of_;
  Results results_;
};

}  // namespace

std::string unsupported(const models::Graph& graph, const strategies::Plan& plan, std::span<const OpId> ops) {
  for (const OpId o : ops) {
    const Operator& op = graph.op(o);
    switch (op.kind) {
      case OpKind::Input:
      case OpKind::Linear:
      case OpKind::LayerNorm:
      case OpKind::Add:
      case OpKind::Dropout:
      case OpKind::Loss: break;
      case OpKind::Activation:
        if (op.variant != "relu" && op.variant != "gelu") return "operator \"" + op.name + "\": activation \"" + op.variant + "\" (relu and gelu run)";
        break;
      case OpKind::Matmul:
        if (op.inputs.size() != 2) return "operator \"" + op.name + "\": a matmul of other than two inputs (multi-head latent attention)";
        break;
      case OpKind::Softmax:
        if (!op.weights.empty()) return "operator \"" + op.name + "\": a softmax with attention sinks";
        break;
      case OpKind::Attention:
        if (op.inputs.size() != 3 || op.inputs[0].dims.size() != 5 || op.inputs[1].dims.size() != 4)
          return "operator \"" + op.name + "\": attention of another layout than (b, s, g, r, d) queries and (b, s, g, d) keys";
        if (!plan.sharding[o].axes_of(op.inputs[0].dims[1]).empty() || !plan.sharding[o].axes_of(op.inputs[1].dims[1]).empty())
          return "operator \"" + op.name + "\": attention over a split sequence";
        break;
      default: return "operator \"" + op.name + "\": " + std::string(models::to_string(op.kind)) + " has no numerics here";
    }
    if (op.kind == OpKind::Linear && !op.gemm_batch.empty()) return "operator \"" + op.name + "\": a batched linear";
    for (const auto& d : plan.sharding[o].dims)
      if (d.axes.size() > 1) return "operator \"" + op.name + "\": dim " + d.dim + " split over more than one mesh axis";
  }
  return "";
}

Results run(const models::Graph& graph, const strategies::Plan& plan, std::span<const OpId> ops, const Inputs& inputs, Collectives& collectives) {
  PARASIM_CHECK(unsupported(graph, plan, ops).empty(), "the numerics support every operator of the range");
  return Runner(graph, plan, ops, inputs, collectives).run();
}

}  // namespace parasim::exec::numerics
