#include "strategies/plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"
#include "strategies/propagation.hpp"
#include "strategies/stage_partition.hpp"

namespace parasim::strategies {
namespace {

const std::vector<int> kNoAxes;

std::string str(std::int64_t v) { return std::to_string(v); }

bool is_transformer(const models::Graph& g) { return g.transformer().has_value(); }

bool is_cnn(const models::Graph& g) {
  for (models::OpId id = 0; id < g.op_count(); ++id)
    if (g.op(id).kind == models::OpKind::Conv2d) return true;
  return false;
}

/// Transformer blocks are the graph layers between the embeddings (first) and the head (last).
std::int64_t block_layers(const models::Graph& g) {
  if (is_transformer(g)) return g.transformer()->layers;
  return static_cast<std::int64_t>(g.layers().size());
}

struct MeshLayout {
  DeviceMesh mesh;
  int dp = -1, tp = -1, pp = -1, ep = -1, cp = -1;
};

MeshLayout build_mesh(const PlanSpec& spec, std::int64_t dp_total) {
  MeshLayout m;
  std::vector<std::string> order = spec.mesh_order;
  if (spec.ep > 1 && std::find(order.begin(), order.end(), "ep") == order.end()) {
    // Experts are sharded over a sub-axis of data parallelism, just inside it.
    auto dp_it = std::find(order.begin(), order.end(), "dp");
    order.insert(dp_it == order.end() ? order.end() : dp_it + 1, "ep");
  }
  if (spec.cp > 1 && std::find(order.begin(), order.end(), "cp") == order.end()) {
    // Context parallelism just outside tensor parallelism (Megatron-Core's tp-cp-ep-dp-pp).
    auto tp_it = std::find(order.begin(), order.end(), "tp");
    order.insert(tp_it, "cp");
  }
  for (const auto& name : order) {
    std::int64_t size = 1;
    AxisRole role = AxisRole::Data;
    if (name == "pp") size = spec.pp, role = AxisRole::Pipeline;
    else if (name == "tp") size = spec.tp, role = AxisRole::Tensor;
    else if (name == "dp") size = dp_total / std::max<std::int64_t>(spec.ep, 1), role = AxisRole::Data;
    else if (name == "ep") size = spec.ep, role = AxisRole::Expert;
    else if (name == "cp") size = spec.cp, role = AxisRole::Context;
    m.mesh.axes.push_back(MeshAxis{name, size, role});
  }
  m.dp = m.mesh.axis_index("dp");
  m.tp = m.mesh.axis_index("tp");
  m.pp = m.mesh.axis_index("pp");
  m.ep = m.mesh.axis_index("ep");
  m.cp = m.mesh.axis_index("cp");
  return m;
}

/// The mesh of an annotated plan: the pipeline axis outermost, then the user's axes in their order.
MeshLayout build_user_mesh(const PlanSpec& spec) {
  MeshLayout m;
  m.mesh.axes.push_back(MeshAxis{"pp", spec.pp, AxisRole::Pipeline});
  m.pp = 0;
  int model_axes = 0, model = -1;
  for (const auto& a : spec.mesh) {
    const int index = static_cast<int>(m.mesh.axes.size());
    m.mesh.axes.push_back(MeshAxis{a.name, a.size, a.data ? AxisRole::Data : AxisRole::Tensor});
    if (a.data) m.dp = index;
    else ++model_axes, model = index;
  }
  // One model axis plays tensor parallelism's part where the lowering asks for it (pipeline sends split
  // over it, as Megatron's scatter/gather; the input broadcast of a sharded loader).
  if (model_axes == 1) m.tp = model;
  return m;
}

/// What an annotated plan's mesh must be: named once each, not "pp" (the pipeline axis), at most one
/// data axis, and with the pipeline stages as many devices as the cluster has.
std::optional<PlanProblem> check_user_mesh(const PlanSpec& spec, std::int64_t devices) {
  auto problem = [](std::string pointer, std::string message) { return PlanProblem{std::move(pointer), std::move(message)}; };
  // The knobs that build a mesh cannot be set beside one.
  const PlanSpec knobs;
  if (spec.tp != knobs.tp) return problem("/plan/tp", "tp cannot be set beside \"mesh\": the mesh's axes and the shardings say how tensors split");
  if (spec.dp != knobs.dp) return problem("/plan/dp", "dp cannot be set beside \"mesh\": give the mesh an axis with \"data\": true");
  if (spec.cp != knobs.cp) return problem("/plan/cp", "cp cannot be set beside \"mesh\": split the sequence dim \"s\" with an annotation");
  if (spec.ep != knobs.ep) return problem("/plan/ep", "ep cannot be set beside \"mesh\": split the experts' dim \"e\" with an annotation");
  if (spec.sequence_parallel) return problem("/plan/sequence_parallel", "sequence_parallel cannot be set beside \"mesh\": annotate the sequence dim \"s\"");
  if (spec.tp_comm_overlap) return problem("/plan/tp_comm_overlap", "tp_comm_overlap needs the tp knob's sequence parallelism; it cannot be set beside \"mesh\"");
  if (spec.cp_comm != knobs.cp_comm) return problem("/plan/cp_comm", "cp_comm needs the cp knob; it cannot be set beside \"mesh\"");
  if (spec.expert_imbalance != knobs.expert_imbalance) return problem("/plan/expert_imbalance", "expert_imbalance needs the ep knob; it cannot be set beside \"mesh\"");
  if (spec.mesh_order != knobs.mesh_order) return problem("/plan/mesh_order", "mesh_order orders the knobs' axes; \"mesh\" lists its axes in order itself");
  std::set<std::string> seen;
  std::int64_t product = spec.pp;
  int data_axes = 0;
  for (std::size_t i = 0; i < spec.mesh.size(); ++i) {
    const auto& a = spec.mesh[i];
    const std::string at = "/plan/mesh/" + std::to_string(i);
    if (a.name == "pp") return problem(at + "/name", "\"pp\" names the pipeline axis the pp knob adds; expected another name");
    if (!seen.insert(a.name).second) return problem(at + "/name", "mesh axis \"" + a.name + "\" is named twice");
    if (a.size < 1) return problem(at + "/size", "a mesh axis has at least 1 device, found " + str(a.size));
    if (a.data && ++data_axes > 1) return problem(at + "/data", "only one mesh axis can be the data axis");
    product *= a.size;
  }
  if (product != devices) {
    std::string sizes;
    for (const auto& a : spec.mesh) sizes += " × " + str(a.size);
    return problem("/plan/mesh", "the mesh (pp " + str(spec.pp) + sizes + ") has " + str(product) + " devices, but the cluster has " + str(devices));
  }
  return std::nullopt;
}

// The sharding of every operator, by dim name (see plan.hpp and models/transformer.hpp for the names):
//  - data parallel: the batch dim b over the data axes (dp, then ep); MoE expert ops have no b: their
//    token dim c over dp and the expert dim e over ep;
//  - tensor parallel (transformers, Megatron): key/value heads g, MLP width f and vocabulary v over tp —
//    Q/K/V and fc1 are column-parallel, o_proj and fc2 row-parallel (their contraction is split), the
//    embedding and LM head vocabulary-parallel;
//  - sequence parallel: the sequence dim s of the ops whose dims are exactly {b, s, h} (norms,
//    dropouts, residual adds) over tp;
//  - channel-split model parallel (CNNs): output channels co and channels c over tp.
std::vector<OpSharding> assign_sharding(const models::Graph& g, const PlanSpec& spec, const MeshLayout& m) {
  std::vector<OpSharding> out(g.op_count());
  const bool transformer = is_transformer(g);
  const bool cnn = !transformer && is_cnn(g);
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const models::Operator& o = g.op(id);
    OpSharding& sh = out[id];
    auto add = [&](const std::string& dim, std::vector<int> axes) {
      axes.erase(std::remove_if(axes.begin(), axes.end(), [&](int a) { return a < 0 || m.mesh.axes[static_cast<std::size_t>(a)].size == 1; }),
                 axes.end());
      const models::Dim* d = o.find_dim(dim);
      if (axes.empty() || d == nullptr || !d->splittable) return;
      sh.dims.push_back(DimSharding{dim, std::move(axes)});
    };
    const bool expert_op = o.find_dim("e") != nullptr && o.find_dim("c") != nullptr;
    if (expert_op) {
      add("e", {m.ep});
      add("c", {m.dp});
    } else {
      add("b", {m.dp, m.ep});
    }
    // Context parallel: every operator's sequence over cp, the input tokens included. Attention reads
    // its queries split and its keys whole (the K/V exchange is the reshard into that layout: an
    // all-gather, run as a ring for p2p), or under a2a reads whole sequences split by heads.
    const bool core = transformer && o.find_dim("q") != nullptr;
    const bool a2a = spec.cp_comm == CpComm::AllToAll;
    const bool bsh = transformer && o.dims.size() == 3 && o.dims[0].name == "b" && o.dims[1].name == "s" && o.dims[2].name == "h";
    if (transformer && spec.cp > 1) {
      if (!(spec.sequence_parallel && spec.tp > 1 && bsh)) add("s", {m.cp});
      if (!a2a) add("q", {m.cp});
      if (a2a && core && spec.tp == 1) add("g", {m.cp});
    }
    // The data entering the graph is replicated over the tensor axis: its first consumer reads all of it.
    if (spec.tp > 1 && o.kind != models::OpKind::Input) {
      if (transformer) {
        add("g", core && a2a ? std::vector<int>{m.tp, m.cp} : std::vector<int>{m.tp});
        for (const char* dim : {"f", "v"}) add(dim, {m.tp});
        if (spec.sequence_parallel && bsh) add("s", {m.cp, m.tp});
      } else if (cnn) {
        for (const char* dim : {"co", "c"}) add(dim, {m.tp});
      }
    }
  }
  return out;
}

std::int64_t product_of_axes(const DeviceMesh& mesh, const std::vector<int>& axes) {
  std::int64_t p = 1;
  for (int a : axes) p *= mesh.axes[static_cast<std::size_t>(a)].size;
  return p;
}

// Dims whose split must be exact (model dims); batch, token and vocabulary dims may be split unevenly
// (the vocabulary is padded, as Megatron does).
bool must_divide(const std::string& dim) { return dim == "g" || dim == "f" || dim == "co" || dim == "c" || dim == "e"; }

std::vector<std::int32_t> chunk_assignment(const models::Graph& g, const PlanSpec& spec, std::int64_t chunks) {
  const auto layers = static_cast<std::int64_t>(g.layers().size());
  std::vector<std::int32_t> chunk_of(static_cast<std::size_t>(layers), 0);
  if (!spec.stage_layers.empty()) {
    std::int64_t layer = 0;
    for (std::size_t c = 0; c < spec.stage_layers.size(); ++c)
      for (std::int64_t k = 0; k < spec.stage_layers[c]; ++k) chunk_of[static_cast<std::size_t>(layer++)] = static_cast<std::int32_t>(c);
    return chunk_of;
  }
  if (is_transformer(g) && g.transformer()->layers % chunks == 0) {
    // Megatron: equal blocks per chunk; the embeddings join the first chunk, the head the last.
    const std::int64_t per = g.transformer()->layers / chunks;
    for (std::int64_t l = 0; l < layers; ++l) {
      const std::int64_t block = std::clamp<std::int64_t>(l - 1, 0, g.transformer()->layers - 1);
      chunk_of[static_cast<std::size_t>(l)] = static_cast<std::int32_t>(block / per);
    }
    return chunk_of;
  }
  // Otherwise: contiguous chunks that balance forward + backward FLOPs (linear partition).
  std::vector<double> cost(static_cast<std::size_t>(layers), 0);
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    cost[static_cast<std::size_t>(o.layer)] += o.fwd_flops() + o.bwd_flops();
  }
  return balanced_partition(cost, chunks);
}

}  // namespace

const std::vector<int>& OpSharding::axes_of(std::string_view dim) const {
  for (const auto& d : dims)
    if (d.dim == dim) return d.axes;
  return kNoAxes;
}

std::int64_t Plan::dp() const {
  return (dp_axis >= 0 ? mesh.axes[static_cast<std::size_t>(dp_axis)].size : 1) * ep();
}
std::int64_t Plan::tp() const { return tp_axis >= 0 ? mesh.axes[static_cast<std::size_t>(tp_axis)].size : 1; }
std::int64_t Plan::ep() const { return ep_axis >= 0 ? mesh.axes[static_cast<std::size_t>(ep_axis)].size : 1; }
std::int64_t Plan::cp() const { return cp_axis >= 0 ? mesh.axes[static_cast<std::size_t>(cp_axis)].size : 1; }

std::int64_t resolve_dp(const PlanSpec& spec, std::int64_t devices) {
  if (!spec.mesh.empty()) {
    for (const auto& a : spec.mesh)
      if (a.data) return std::max<std::int64_t>(a.size, 1);
    return 1;
  }
  if (spec.dp > 0) return spec.dp;
  const std::int64_t mp = std::max<std::int64_t>(spec.tp, 1) * std::max<std::int64_t>(spec.pp, 1) * std::max<std::int64_t>(spec.cp, 1);
  return std::max<std::int64_t>(devices / mp, 1);
}

std::optional<PlanProblem> check_plan(const models::Graph& g, const TrainingSpec& training, const PlanSpec& spec, std::int64_t devices) {
  auto problem = [](std::string pointer, std::string message) { return PlanProblem{std::move(pointer), std::move(message)}; };
  if (spec.tp < 1) return problem("/plan/tp", "tp must be >= 1, found " + str(spec.tp));
  if (spec.pp < 1) return problem("/plan/pp", "pp must be >= 1, found " + str(spec.pp));
  if (spec.ep < 1) return problem("/plan/ep", "ep must be >= 1, found " + str(spec.ep));
  if (spec.cp < 1) return problem("/plan/cp", "cp must be >= 1, found " + str(spec.cp));
  if (spec.dp < 0) return problem("/plan/dp", "dp must be >= 1 (or 0 to derive it), found " + str(spec.dp));
  if (spec.virtual_stages < 1) return problem("/plan/virtual_stages", "virtual_stages must be >= 1, found " + str(spec.virtual_stages));
  if (training.micro_batch < 1) return problem("/training/micro_batch", "micro_batch must be >= 1, found " + str(training.micro_batch));
  if (training.global_batch < 1) return problem("/training/global_batch", "global_batch must be >= 1, found " + str(training.global_batch));
  if (spec.zero < 0 || spec.zero > 3) return problem("/plan/zero", "zero must be 0, 1, 2 or 3, found " + str(spec.zero));

  if (spec.auto_sharding && spec.mesh.empty())
    return problem("/plan/auto_sharding", "automatic sharding shards the operators over the axes of a \"mesh\"; the plan has none");
  if (spec.auto_sharding)
    for (const auto& a : spec.shardings)
      if (a.pointer != "/plan/auto_sharding")
        return problem(a.pointer, "annotations cannot be given beside \"auto_sharding\": the integer program finds every operator's sharding");
  if (spec.mesh.empty() && !spec.shardings.empty())
    return problem("/plan/shardings", "sharding annotations name the axes of a \"mesh\"; the plan has none (the knobs' mesh has Megatron's shardings)");
  std::int64_t dp = resolve_dp(spec, devices);
  if (!spec.mesh.empty()) {
    if (auto p = check_user_mesh(spec, devices)) return p;
  } else {
    const std::int64_t mp = spec.tp * spec.pp * spec.cp;
    const std::string mesh_names = spec.cp > 1 ? "tp × cp × pp" : "tp × pp";
    const std::string mesh_sizes = str(spec.tp) + (spec.cp > 1 ? " × " + str(spec.cp) : "") + " × " + str(spec.pp);
    if (spec.dp == 0 && devices % mp != 0)
      return problem(spec.cp > 1 ? "/plan/cp" : "/plan/tp",
                     mesh_names + " = " + str(mp) + " does not divide the " + str(devices) + " devices of the cluster");
    dp = resolve_dp(spec, devices);
    if (mp * dp != devices)
      return problem(spec.dp > 0 ? "/plan/dp" : "/plan/tp",
                     "the mesh " + mesh_names + " × dp = " + mesh_sizes + " × " + str(dp) + " = " + str(mp * dp) +
                         " devices does not match the cluster's " + str(devices) + " devices");
    if (dp % spec.ep != 0) return problem("/plan/ep", "ep (" + str(spec.ep) + ") must divide the data-parallel degree " + str(dp));

    {
      std::set<std::string> seen;
      for (const auto& a : spec.mesh_order) {
        if (a != "pp" && a != "dp" && a != "tp" && a != "ep" && a != "cp")
          return problem("/plan/mesh_order", "unknown mesh axis \"" + a + "\"; expected \"pp\", \"dp\", \"tp\", \"cp\" or \"ep\"");
        if (!seen.insert(a).second) return problem("/plan/mesh_order", "mesh axis \"" + a + "\" appears twice");
      }
      for (const char* a : {"pp", "dp", "tp"})
        if (!seen.count(a)) return problem("/plan/mesh_order", std::string("mesh_order must name axis \"") + a + "\"");
    }
  }

  const auto& t = g.transformer();
  if (t) {
    if (t->heads % spec.tp != 0)
      return problem("/plan/tp", "tp (" + str(spec.tp) + ") does not divide the " + str(t->heads) + " attention heads of the model");
    if (t->kv_heads % spec.tp != 0)
      return problem("/plan/tp", "tp (" + str(spec.tp) + ") does not divide the " + str(t->kv_heads) + " key/value heads of the model");
    if (t->ffn_hidden % spec.tp != 0)
      return problem("/plan/tp", "tp (" + str(spec.tp) + ") does not divide the MLP width " + str(t->ffn_hidden));
    if (spec.cp > 1) {
      // Megatron-Core splits each sequence into 2·cp chunks (rank i holds chunks i and 2cp − 1 − i).
      if (t->seq_len % (2 * spec.cp) != 0)
        return problem("/plan/cp", "cp (" + str(spec.cp) + ") must split the sequence of " + str(t->seq_len) +
                                       " tokens into 2·cp = " + str(2 * spec.cp) + " equal chunks for causal load balancing");
      if (spec.cp_comm == CpComm::AllToAll && t->kv_heads % (spec.tp * spec.cp) != 0)
        return problem("/plan/cp_comm", "the a2a exchange splits the key/value heads over tp × cp = " + str(spec.tp * spec.cp) +
                                            ", which does not divide the " + str(t->kv_heads) + " key/value heads of the model");
    }
    if (spec.ep > 1 && (t->experts == 0 || t->experts % spec.ep != 0))
      return problem("/plan/ep", t->experts == 0 ? "ep > 1 needs a mixture-of-experts model"
                                                 : "ep (" + str(spec.ep) + ") does not divide the " + str(t->experts) + " experts");
    for (auto [width, what] : {std::pair{t->effective_moe_ffn_hidden(), "expert MLP width"}, {t->shared_ffn_hidden, "shared expert's MLP width"}})
      if (t->experts > 0 && width > 0 && width % spec.tp != 0)
        return problem("/plan/tp", "tp (" + str(spec.tp) + ") does not divide the " + what + " " + str(width));
  } else {
    if (spec.sequence_parallel) return problem("/plan/sequence_parallel", "sequence parallel applies to transformer models only");
    if (spec.cp > 1) return problem("/plan/cp", "context parallelism splits a transformer's sequence; this model has none");
    if (spec.ep > 1) return problem("/plan/ep", "ep > 1 needs a mixture-of-experts model");
    if (spec.tp > 1 && !is_cnn(g))
      return problem("/plan/tp", "tp > 1 needs a transformer (Megatron tensor parallel) or a CNN (channel-split model parallel)");
  }
  if (spec.expert_imbalance != 1.0) {
    // The busiest rank receives at most every token's k copies (ep × the balanced share b·s·k/ep) and
    // at most one copy per expert it holds (e/ep of them: (e/ep)/(k/ep) = e/k times the share).
    const char* at = "/plan/expert_imbalance";
    if (!(spec.expert_imbalance >= 1.0))
      return problem(at, "expert_imbalance must be >= 1 (1 = balanced routing), found " + format_number(spec.expert_imbalance));
    if (!t || t->experts == 0) return problem(at, "expert_imbalance applies to mixture-of-experts models only");
    if (spec.ep == 1)
      return problem(at, "expert_imbalance needs ep > 1: a device holding every expert processes all routed tokens however they split");
    const double most = std::min(static_cast<double>(spec.ep), static_cast<double>(t->experts) / static_cast<double>(t->experts_per_token));
    if (spec.expert_imbalance > most)
      return problem(at, "expert_imbalance " + format_number(spec.expert_imbalance) + " exceeds min(ep, experts / experts_per_token) = " +
                             format_number(most) + ", the most one expert-parallel rank can receive");
  }
  if (spec.sequence_parallel && spec.tp == 1) return problem("/plan/sequence_parallel", "sequence parallel needs tp > 1");
  if (spec.tp_comm_overlap && !spec.sequence_parallel)
    return problem("/plan/tp_comm_overlap",
                   "tensor-parallel communication overlap splits the sequence-parallel all-gathers and reduce-scatters; it needs "
                   "sequence_parallel true");

  const std::int64_t blocks = block_layers(g);
  const std::int64_t chunks = spec.pp * spec.virtual_stages;
  if (spec.pp > blocks)
    return problem("/plan/pp", "pp (" + str(spec.pp) + ") exceeds the " + str(blocks) + " layers of the model");
  if (chunks > blocks)
    return problem("/plan/virtual_stages", "pp × virtual_stages = " + str(chunks) + " model chunks exceeds the " + str(blocks) +
                                               " layers of the model");
  if (spec.virtual_stages > 1 && spec.schedule != Schedule::Interleaved1F1B)
    return problem("/plan/virtual_stages", "virtual_stages > 1 needs \"schedule\": \"interleaved-1f1b\"");
  if (spec.schedule == Schedule::Interleaved1F1B && spec.pp == 1)
    return problem("/plan/schedule", "the interleaved-1f1b schedule needs pp > 1");
  if (!spec.stage_layers.empty()) {
    if (static_cast<std::int64_t>(spec.stage_layers.size()) != chunks)
      return problem("/plan/stage_layers", "stage_layers lists " + str(static_cast<std::int64_t>(spec.stage_layers.size())) +
                                               " chunks, expected pp × virtual_stages = " + str(chunks));
    std::int64_t sum = 0;
    for (auto n : spec.stage_layers) {
      if (n < 1) return problem("/plan/stage_layers", "every chunk needs at least one layer");
      sum += n;
    }
    if (sum != static_cast<std::int64_t>(g.layers().size()))
      return problem("/plan/stage_layers", "stage_layers sums to " + str(sum) + ", but the graph has " +
                                               str(static_cast<std::int64_t>(g.layers().size())) + " layers");
  }

  const std::int64_t per_step = training.micro_batch * dp;
  if (training.global_batch % per_step != 0)
    return problem("/training/global_batch", "global_batch (" + str(training.global_batch) + ") is not a multiple of micro_batch × dp = " +
                                                 str(training.micro_batch) + " × " + str(dp) + " = " + str(per_step));
  const std::int64_t m = training.global_batch / per_step;
  if (spec.schedule == Schedule::Interleaved1F1B && m % spec.pp != 0)
    return problem("/training/global_batch", "the interleaved-1f1b schedule needs the micro-batch count (" + str(m) +
                                                 ") to be a multiple of pp (" + str(spec.pp) + ")");
  PARASIM_CHECK(g.batch() == training.micro_batch * dp, "check_plan: the graph must be built with batch = micro_batch × dp");

  if (!spec.mesh.empty()) {
    const MeshLayout layout = build_user_mesh(spec);
    return propagate_shardings(g, layout.mesh, layout.dp, plan_annotations(g, spec)).problem;
  }
  const MeshLayout layout = build_mesh(spec, dp);
  const auto sharding = assign_sharding(g, spec, layout);
  for (models::OpId id = 0; id < g.op_count(); ++id) {
    const auto& o = g.op(id);
    for (const auto& ds : sharding[id].dims) {
      const std::int64_t parts = product_of_axes(layout.mesh, ds.axes);
      if (must_divide(ds.dim) && o.dim_size(ds.dim) % parts != 0)
        return problem(parts == spec.tp ? "/plan/tp" : spec.cp > 1 && parts % spec.cp == 0 ? "/plan/cp" : "/plan/ep",
                       "the split over " + str(parts) + " devices does not divide dim \"" + ds.dim + "\" (size " +
                           str(o.dim_size(ds.dim)) + ") of operator \"" + o.name + "\"");
    }
  }
  return std::nullopt;
}

Plan make_plan(const models::Graph& g, const TrainingSpec& training, const PlanSpec& spec, std::int64_t devices) {
  if (auto p = check_plan(g, training, spec, devices)) PARASIM_CHECK(false, "make_plan: " + p->message);
  const std::int64_t dp = resolve_dp(spec, devices);
  const MeshLayout layout = spec.mesh.empty() ? build_mesh(spec, dp) : build_user_mesh(spec);
  Plan plan;
  plan.mesh = layout.mesh;
  plan.dp_axis = layout.dp;
  plan.tp_axis = layout.tp;
  plan.pp_axis = layout.pp;
  plan.ep_axis = layout.ep;
  plan.cp_axis = layout.cp;
  plan.annotated = !spec.mesh.empty();
  plan.sharding = plan.annotated ? propagate_shardings(g, layout.mesh, layout.dp, plan_annotations(g, spec)).propagation.sharding
                                 : assign_sharding(g, spec, layout);
  plan.pp = spec.pp;
  plan.virtual_stages = spec.virtual_stages;
  plan.chunk_of_layer = chunk_assignment(g, spec, spec.pp * spec.virtual_stages);
  plan.schedule = spec.schedule;
  plan.global_batch = training.global_batch;
  plan.micro_batch = training.micro_batch;
  plan.micro_batches = training.global_batch / (training.micro_batch * dp);
  plan.zero = spec.fsdp ? 3 : spec.zero;
  plan.recompute = spec.recompute;
  plan.sequence_parallel = spec.sequence_parallel;
  plan.tp_comm_overlap = spec.tp_comm_overlap;
  plan.cp_comm = spec.cp_comm;
  plan.expert_imbalance = spec.expert_imbalance;
  {
    const bool transformer = g.transformer().has_value();
    const Framework framework = spec.implementation ? *spec.implementation : default_framework(transformer);
    const auto grad_dtype = training.grad_precision ? *training.grad_precision : models::weight_dtype(training.precision);
    plan.implementation = implementation_of(framework, dp, static_cast<double>(models::bytes_of(grad_dtype)), spec.grad_bucket_mb);
    plan.grad_bucket_bytes = plan.implementation.bucket_for(spec.fsdp ? 3 : spec.zero);
  }
  plan.overlap_grad_reduce = spec.overlap_grad_reduce;
  plan.overlap_param_gather = spec.overlap_param_gather;
  plan.blocking_p2p = spec.blocking_p2p;
  plan.grad_accumulation = spec.grad_accumulation;
  plan.precision = training.precision;
  plan.optimizer = training.optimizer;
  plan.attention_kernel = training.attention_kernel;
  // Absent: the weights' dtype — fp32 (fp32 and tf32 training), or the 16-bit one mixed precision
  // keeps (fp8 training's are bf16).
  plan.grad_dtype = training.grad_precision ? *training.grad_precision : models::weight_dtype(training.precision);

  plan.description = describe_plan(spec, training, dp, plan.micro_batches);
  return plan;
}

std::string describe_mesh(const PlanSpec& spec, std::int64_t dp, bool cp_comm) {
  std::ostringstream d;
  if (!spec.mesh.empty()) {
    // An annotated plan: its own axes, as named ("mesh data 2 × model 4, pp 2").
    d << "mesh";
    for (std::size_t i = 0; i < spec.mesh.size(); ++i) d << (i == 0 ? " " : " × ") << spec.mesh[i].name << " " << spec.mesh[i].size;
    if (spec.auto_sharding) d << " (auto-sharded" << (spec.auto_sharding_outcome.empty() ? "" : ": " + spec.auto_sharding_outcome) << ")";
    d << ", pp " << spec.pp;
    return d.str();
  }
  d << "tp " << spec.tp;
  if (spec.cp > 1) d << " × cp " << spec.cp << (cp_comm ? " (" + std::string(to_string(spec.cp_comm)) + ")" : "");
  d << " × pp " << spec.pp << " × dp " << dp;
  return d.str();
}

std::string describe_plan(const PlanSpec& spec, const TrainingSpec& training, std::int64_t dp, std::int64_t micro_batches) {
  const int zero = spec.fsdp ? 3 : spec.zero;
  std::ostringstream d;
  d << describe_mesh(spec, dp, true);
  if (spec.ep > 1) d << " (ep " << spec.ep << (spec.expert_imbalance != 1.0 ? ", imbalance " + format_number(spec.expert_imbalance) : "") << ")";
  d << ", " << to_string(spec.schedule);
  if (spec.virtual_stages > 1) d << " v" << spec.virtual_stages;
  d << ", micro-batch " << training.micro_batch << " × " << micro_batches;
  if (zero > 0) d << (spec.fsdp ? ", fsdp" : ", zero-" + std::to_string(zero));
  if (spec.recompute != Recompute::None) d << ", recompute " << to_string(spec.recompute);
  if (spec.sequence_parallel) d << ", sequence parallel";
  if (spec.tp_comm_overlap) d << ", tp comm overlap";
  if (spec.overlap_param_gather && zero >= 1 && zero <= 2) d << ", param gather overlap";
  if (training.grad_precision == models::DType::F32 && models::mixed_precision(training.precision)) d << ", fp32 gradients";
  return d.str();
}

}  // namespace parasim::strategies
