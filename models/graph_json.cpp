#include "models/graph_json.hpp"

#include <map>
#include <tuple>

#include "common/did_you_mean.hpp"
#include "common/json_reader.hpp"

namespace parasim::models {
namespace {

using ojson = nlohmann::ordered_json;

// Sizes beyond 2^40 describe no real tensor dim and would only risk overflowing the counts; slots and
// saved-input indices are ints.
constexpr std::int64_t kMaxDimSize = 1LL << 40;
constexpr std::int64_t kMaxSlot = (1LL << 31) - 1;

// ---- writing ---------------------------------------------------------------------------------

ojson dims_to_json(const std::vector<Dim>& dims) {
  ojson out = ojson::array();
  for (const auto& d : dims) {
    ojson j{{"name", d.name}, {"size", d.size}};
    if (!d.splittable) j["splittable"] = false;
    out.push_back(std::move(j));
  }
  return out;
}

ojson names_to_json(const std::vector<std::string>& names) {
  ojson out = ojson::array();
  for (const auto& n : names) out.push_back(n);
  return out;
}

// A tensor in the operator's dtype is just its dim names; another dtype is spelt out.
ojson tensor_to_json(const TensorSpec& t, DType op_dtype) {
  if (t.dtype == op_dtype) return names_to_json(t.dims);
  return ojson{{"dims", names_to_json(t.dims)}, {"dtype", std::string(to_string(t.dtype))}};
}

// The dtype most of the operator's tensors have (ties: the output's), so few tensors need their own.
DType operator_dtype(const Operator& o) {
  std::map<DType, int> votes;
  for (const auto& in : o.inputs) ++votes[in.dtype];
  for (const auto& w : o.weights) ++votes[w.spec.dtype];
  DType best = o.output.dtype;
  int best_votes = ++votes[o.output.dtype];
  for (const auto& [t, n] : votes)
    if (n > best_votes) best = t, best_votes = n;
  return best;
}

ojson operator_to_json(const Operator& o, const std::vector<Layer>& layers) {
  const DType dtype = operator_dtype(o);
  ojson j;
  j["name"] = o.name;
  j["kind"] = std::string(to_string(o.kind));
  if (!o.variant.empty()) j["variant"] = o.variant;
  if (o.layer >= 0 && static_cast<std::size_t>(o.layer) < layers.size()) j["layer"] = layers[static_cast<std::size_t>(o.layer)].name;
  else j["layer"] = o.layer;  // an invalid graph: written as found, rejected when read
  j["dtype"] = std::string(to_string(dtype));
  j["dims"] = dims_to_json(o.dims);
  if (!o.extent_dims.empty()) j["extent_dims"] = dims_to_json(o.extent_dims);
  if (!o.inputs.empty()) {
    ojson inputs = ojson::array();
    for (const auto& in : o.inputs) inputs.push_back(tensor_to_json(in, dtype));
    j["inputs"] = std::move(inputs);
  }
  j["output"] = tensor_to_json(o.output, dtype);
  if (!o.weights.empty()) {
    ojson weights = ojson::array();
    for (const auto& w : o.weights) {
      ojson wj{{"name", w.name}, {"dims", names_to_json(w.spec.dims)}};
      if (w.spec.dtype != dtype) wj["dtype"] = std::string(to_string(w.spec.dtype));
      weights.push_back(std::move(wj));
    }
    j["weights"] = std::move(weights);
  }
  for (auto [key, list] : {std::pair{"gemm_batch", &o.gemm_batch}, {"gemm_m", &o.gemm_m}, {"gemm_n", &o.gemm_n}, {"gemm_k", &o.gemm_k}})
    if (!list->empty()) j[key] = names_to_json(*list);
  j["flops_per_point"] = o.flops_per_point;
  j["bwd_flops_factor"] = o.bwd_flops_factor;
  if (o.model_flops_per_point != 0) j["model_flops_per_point"] = o.model_flops_per_point;
  if (!o.saved_inputs.empty()) j["saved_inputs"] = o.saved_inputs;
  if (o.saved_output) j["saved_output"] = true;
  if (o.saved_mask_bytes_per_element != 0) j["saved_mask_bytes_per_element"] = o.saved_mask_bytes_per_element;
  if (o.routing) j["routing"] = true;
  return j;
}

// One line of JSON with a space after ':' and ',' (nlohmann's compact form has none).
std::string inline_json(const ojson& v) {
  constexpr auto kReplace = ojson::error_handler_t::replace;
  if (v.is_object()) {
    std::string out = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += (first ? "" : ", ") + ojson(it.key()).dump(-1, ' ', false, kReplace) + ": " + inline_json(it.value());
      first = false;
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + inline_json(v[i]);
    return out + "]";
  }
  return v.dump(-1, ' ', false, kReplace);
}

// ---- reading ---------------------------------------------------------------------------------

std::int64_t read_size(const JsonDocument& doc, const std::string& pointer) {
  const std::int64_t v = read_integer(doc, pointer, 1);
  if (v > kMaxDimSize)
    throw doc.error_at(pointer, "found " + describe_json_value(value_at(doc, pointer)) + ", expected an integer <= " + std::to_string(kMaxDimSize));
  return v;
}

int read_index(const JsonDocument& doc, const std::string& pointer) {
  const std::int64_t v = read_integer(doc, pointer, 0);
  if (v > kMaxSlot)
    throw doc.error_at(pointer, "found " + describe_json_value(value_at(doc, pointer)) + ", expected an integer <= " + std::to_string(kMaxSlot));
  return static_cast<int>(v);
}

DType read_dtype(ObjectReader& r, const std::string& key) { return *dtype_from_string(r.enum_string(key, dtype_names())); }

std::vector<std::string> read_names(const JsonDocument& doc, const std::string& pointer) {
  const auto& v = value_at(doc, pointer);
  if (!v.is_array()) throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected an array of dim names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_string(doc, json_pointer_append(pointer, i)));
  return out;
}

std::vector<std::string> read_names_or_empty(ObjectReader& r, const std::string& key) {
  return r.optional(key) ? read_names(r.document(), r.pointer_of(key)) : std::vector<std::string>{};
}

std::vector<Dim> read_dims(ObjectReader& r, const std::string& key, bool required) {
  std::vector<Dim> dims;
  if (!required && !r.has(key)) {
    r.accept(key);
    return dims;
  }
  for (const auto& p : r.array(key)) {
    ObjectReader d(r.document(), p);
    Dim dim;
    dim.name = d.string("name");
    d.required("size");
    dim.size = read_size(r.document(), d.pointer_of("size"));
    dim.splittable = d.boolean_or("splittable", true);
    d.finish();
    dims.push_back(std::move(dim));
  }
  return dims;
}

TensorSpec read_tensor(const JsonDocument& doc, const std::string& pointer, DType op_dtype) {
  const auto& v = value_at(doc, pointer);
  if (v.is_array()) return TensorSpec{read_names(doc, pointer), op_dtype};
  if (!v.is_object())
    throw doc.error_at(pointer, "found " + describe_json_value(v) +
                                    ", expected a tensor: an array of dim names, or an object with \"dims\" and \"dtype\"");
  ObjectReader t(doc, pointer);
  t.required("dims");
  TensorSpec spec{read_names(doc, t.pointer_of("dims")), op_dtype};
  if (t.has("dtype")) spec.dtype = read_dtype(t, "dtype");
  t.finish();
  return spec;
}

Operator read_operator(const JsonDocument& doc, const std::string& pointer, const std::map<std::string, std::int32_t>& layers,
                       const std::vector<std::string>& layer_names) {
  ObjectReader r(doc, pointer);
  Operator o;
  o.name = r.string("name");
  if (!op_kind_from_string(r.enum_string("kind", op_kind_names()), o.kind)) throw r.error("kind", "unknown kind");
  o.variant = r.string_or("variant", "");
  const std::string layer = r.string("layer");
  const auto it = layers.find(layer);
  if (it == layers.end())
    throw doc.error_at(r.pointer_of("layer"), "no layer named \"" + layer + "\" in /layers" + did_you_mean(layer, layer_names));
  o.layer = it->second;
  const DType dtype = read_dtype(r, "dtype");
  o.dims = read_dims(r, "dims", true);
  o.extent_dims = read_dims(r, "extent_dims", false);
  if (r.has("inputs"))
    for (const auto& p : r.array("inputs")) o.inputs.push_back(read_tensor(doc, p, dtype));
  else
    r.accept("inputs");
  r.required("output");
  o.output = read_tensor(doc, r.pointer_of("output"), dtype);
  if (r.has("weights")) {
    for (const auto& p : r.array("weights")) {
      ObjectReader w(doc, p);
      Weight weight;
      weight.name = w.string("name");
      w.required("dims");
      weight.spec = TensorSpec{read_names(doc, w.pointer_of("dims")), dtype};
      if (w.has("dtype")) weight.spec.dtype = read_dtype(w, "dtype");
      w.finish();
      o.weights.push_back(std::move(weight));
    }
  } else {
    r.accept("weights");
  }
  o.gemm_batch = read_names_or_empty(r, "gemm_batch");
  o.gemm_m = read_names_or_empty(r, "gemm_m");
  o.gemm_n = read_names_or_empty(r, "gemm_n");
  o.gemm_k = read_names_or_empty(r, "gemm_k");
  o.flops_per_point = r.number_or("flops_per_point", 0, 0);
  o.bwd_flops_factor = r.number_or("bwd_flops_factor", 0, 0);
  o.model_flops_per_point = r.number_or("model_flops_per_point", 0, 0);
  if (r.has("saved_inputs"))
    for (const auto& p : r.array("saved_inputs")) o.saved_inputs.push_back(read_index(doc, p));
  else
    r.accept("saved_inputs");
  o.saved_output = r.boolean_or("saved_output", false);
  o.saved_mask_bytes_per_element = r.number_or("saved_mask_bytes_per_element", 0, 0);
  o.routing = r.boolean_or("routing", false);
  r.finish();
  return o;
}

TransformerShape read_transformer(ObjectReader r) {
  TransformerShape t;
  t.layers = r.integer("layers", 1);
  t.hidden = r.integer("hidden", 1);
  t.heads = r.integer("heads", 1);
  t.kv_heads = r.integer("kv_heads", 1);
  t.head_dim = r.integer("head_dim", 1);
  t.ffn_hidden = r.integer("ffn_hidden", 1);
  t.seq_len = r.integer("seq_len", 1);
  t.vocab = r.integer("vocab", 1);
  t.experts = r.integer_or("experts", 0, 0);
  t.experts_per_token = r.integer_or("experts_per_token", 0, 0);
  t.mlp = *mlp_kind_from_string(r.enum_string_or("mlp", {"gelu", "swiglu", "squared_relu"}, "gelu"));
  // Graph files written before fused attention existed hold eager attention.
  t.attention = *attention_kind_from_string(r.enum_string_or("attention", {"fused", "eager"}, "eager"));
  t.dropout = r.boolean_or("dropout", false);
  t.moe_ffn_hidden = r.integer_or("moe_ffn_hidden", 0, 0);
  t.shared_ffn_hidden = r.integer_or("shared_ffn_hidden", 0, 0);
  t.shared_expert_gate = r.boolean_or("shared_expert_gate", false);
  t.first_dense_layers = r.integer_or("first_dense_layers", 0, 0);
  t.moe_every = r.integer_or("moe_every", 1, 1);
  t.moe_phase = r.integer_or("moe_phase", 0, 0);
  t.qk_norm = r.boolean_or("qk_norm", false);
  t.q_lora_rank = r.integer_or("q_lora_rank", 0, 0);
  t.kv_lora_rank = r.integer_or("kv_lora_rank", 0, 0);
  t.rope_head_dim = r.integer_or("rope_head_dim", 0, 0);
  t.v_head_dim = r.integer_or("v_head_dim", 0, 0);
  r.finish();
  return t;
}

/// A sharding annotation's axes: null (replicated), one axis name, or a list of names.
std::vector<std::string> read_axes(const JsonDocument& doc, const std::string& pointer) {
  const auto& v = value_at(doc, pointer);
  if (v.is_null()) return {};
  if (v.is_string()) return {read_string(doc, pointer)};
  if (!v.is_array()) throw doc.error_at(pointer, "found " + describe_json_value(v) + ", expected null, a mesh axis name or a list of them");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_string(doc, json_pointer_append(pointer, i)));
  return out;
}

/// One of "shardings": exactly one of "weight", "output", "operator", as a scenario's plan writes them
/// (scenarios/README.md, "Sharding annotations").
ShardingAnnotation read_annotation(const JsonDocument& doc, const std::string& pointer) {
  ObjectReader r(doc, pointer);
  ShardingAnnotation a;
  a.pointer = pointer;
  a.file = doc.file();
  int targets = 0;
  for (const auto& [key, target] : {std::pair{"weight", AnnotationTarget::Weight}, {"output", AnnotationTarget::Output}, {"operator", AnnotationTarget::Operator}})
    if (r.has(key)) {
      ++targets;
      a.target = target;
      a.pattern = r.string(key);
    }
  if (targets != 1) throw doc.error_at(pointer, "a sharding annotation names exactly one of \"weight\", \"output\" or \"operator\"");
  if (a.target == AnnotationTarget::Operator) {
    r.required("dims");
    const auto& dims = value_at(doc, r.pointer_of("dims"));
    if (!dims.is_object() || dims.empty()) throw doc.error_at(r.pointer_of("dims"), "found " + describe_json_value(dims) + ", expected an object of dims and their axes");
    for (const auto& item : dims.items()) a.dims.emplace_back(item.key(), read_axes(doc, json_pointer_append(r.pointer_of("dims"), item.key())));
  } else {
    for (const auto& p : r.array("spec")) a.spec.push_back(read_axes(doc, p));
    if (a.target == AnnotationTarget::Output && r.optional("partial")) a.partial = read_axes(doc, r.pointer_of("partial"));
  }
  r.finish();
  return a;
}

ojson annotation_to_json(const ShardingAnnotation& a) {
  auto axes = [](const std::vector<std::string>& v) { return v.empty() ? ojson(nullptr) : v.size() == 1 ? ojson(v[0]) : ojson(v); };
  ojson j;
  j[std::string(to_string(a.target))] = a.pattern;
  if (a.target == AnnotationTarget::Operator) {
    ojson dims = ojson::object();
    for (const auto& [d, v] : a.dims) dims[d] = axes(v);
    j["dims"] = std::move(dims);
  } else {
    ojson spec = ojson::array();
    for (const auto& v : a.spec) spec.push_back(axes(v));
    j["spec"] = std::move(spec);
    if (!a.partial.empty()) j["partial"] = axes(a.partial);
  }
  return j;
}

}  // namespace

ojson to_json(const Graph& g) {
  ojson j;
  j["format"] = kGraphFormat;
  j["version"] = kGraphFormatVersion;
  j["name"] = g.name();
  j["batch"] = g.batch();
  if (const auto& t = g.transformer()) {
    j["transformer"] = ojson{{"layers", t->layers},     {"hidden", t->hidden},   {"heads", t->heads},
                             {"kv_heads", t->kv_heads}, {"head_dim", t->head_dim}, {"ffn_hidden", t->ffn_hidden},
                             {"seq_len", t->seq_len},   {"vocab", t->vocab},     {"experts", t->experts},
                             {"experts_per_token", t->experts_per_token}, {"mlp", std::string(to_string(t->mlp))},
                             {"attention", std::string(to_string(t->attention))}, {"dropout", t->dropout}};
    // The fields of MoE as trained now and of latent attention, written where they differ from their
    // defaults (so the files of other models stay as they were).
    auto& tj = j["transformer"];
    const TransformerShape defaults;
    for (auto [key, value, fallback] : {std::tuple{"moe_ffn_hidden", t->moe_ffn_hidden, defaults.moe_ffn_hidden},
                                        {"shared_ffn_hidden", t->shared_ffn_hidden, defaults.shared_ffn_hidden},
                                        {"first_dense_layers", t->first_dense_layers, defaults.first_dense_layers},
                                        {"moe_every", t->moe_every, defaults.moe_every},
                                        {"moe_phase", t->moe_phase, defaults.moe_phase},
                                        {"q_lora_rank", t->q_lora_rank, defaults.q_lora_rank},
                                        {"kv_lora_rank", t->kv_lora_rank, defaults.kv_lora_rank},
                                        {"rope_head_dim", t->rope_head_dim, defaults.rope_head_dim},
                                        {"v_head_dim", t->v_head_dim, defaults.v_head_dim}})
      if (value != fallback) tj[key] = value;
    if (t->shared_expert_gate) tj["shared_expert_gate"] = true;
    if (t->qk_norm) tj["qk_norm"] = true;
  }
  ojson layers = ojson::array();
  for (const auto& l : g.layers()) layers.push_back(l.name);
  j["layers"] = std::move(layers);
  ojson operators = ojson::array();
  for (OpId id = 0; id < g.op_count(); ++id) operators.push_back(operator_to_json(g.op(id), g.layers()));
  j["operators"] = std::move(operators);
  ojson edges = ojson::array();
  for (const auto& [from, to, slot] : g.edges())
    edges.push_back(ojson{{"producer", g.op(from).name}, {"consumer", g.op(to).name}, {"slot", slot}});
  j["edges"] = std::move(edges);
  if (!g.annotations().empty()) {
    ojson shardings = ojson::array();
    for (const auto& a : g.annotations()) shardings.push_back(annotation_to_json(a));
    j["shardings"] = std::move(shardings);
  }
  return j;
}

std::string to_json_text(const Graph& g) {
  const ojson j = to_json(g);
  std::string out = "{\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += (first ? "  " : ",\n  ") + ojson(it.key()).dump() + ": ";
    first = false;
    const ojson& v = it.value();
    if (v.is_array() && !v.empty()) {
      out += "[\n";
      for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ",\n    " : "    ") + inline_json(v[i]);
      out += "\n  ]";
    } else {
      out += inline_json(v);
    }
  }
  return out + "\n}\n";
}

Graph graph_from_json(const JsonDocument& doc, const std::string& pointer) {
  ObjectReader r(doc, pointer);
  r.enum_string("format", {kGraphFormat});
  if (const std::int64_t version = r.integer("version", 1); version != kGraphFormatVersion)
    throw doc.error_at(r.pointer_of("version"), "found version " + std::to_string(version) + ", this parasim reads version " +
                                                    std::to_string(kGraphFormatVersion));
  Graph g(r.string("name"));
  r.required("batch");
  g.set_batch(read_size(doc, r.pointer_of("batch")));
  if (r.has("transformer")) g.set_transformer(read_transformer(r.object("transformer")));
  else r.accept("transformer");

  std::map<std::string, std::int32_t> layers;
  std::vector<std::string> layer_names;
  for (const auto& p : r.array("layers")) {
    std::string name = read_string(doc, p);
    if (!layers.emplace(name, g.add_layer(name)).second) throw doc.error_at(p, "duplicate layer name \"" + name + "\"");
    layer_names.push_back(std::move(name));
  }

  std::map<std::string, OpId> ops;
  std::vector<std::string> op_names;
  const auto op_pointers = r.array("operators");
  for (const auto& p : op_pointers) {
    Operator o = read_operator(doc, p, layers, layer_names);
    const std::string name = o.name;
    const OpId id = g.add_op(std::move(o));
    if (!ops.emplace(name, id).second) throw doc.error_at(json_pointer_append(p, "name"), "duplicate operator name \"" + name + "\"");
    op_names.push_back(name);
  }

  // Where each edge sits in the file, to point at the edge a problem concerns.
  std::map<std::tuple<OpId, OpId, int>, std::string> edge_pointers;
  for (const auto& p : r.array("edges")) {
    ObjectReader e(doc, p);
    auto endpoint = [&](const char* key) {
      const std::string name = e.string(key);
      const auto it = ops.find(name);
      if (it == ops.end())
        throw doc.error_at(e.pointer_of(key), "no operator named \"" + name + "\" in /operators" + did_you_mean(name, op_names));
      return it->second;
    };
    const OpId from = endpoint("producer"), to = endpoint("consumer");
    const int slot = e.optional("slot") ? read_index(doc, e.pointer_of("slot")) : 0;
    e.finish();
    g.connect(from, to, slot);
    edge_pointers[{from, to, slot}] = p;
  }
  if (r.optional("shardings")) {
    std::vector<ShardingAnnotation> annotations;
    for (const auto& p : r.array("shardings")) annotations.push_back(read_annotation(doc, p));
    g.set_annotations(std::move(annotations));
  }
  r.finish();

  if (const auto problem = g.check()) {
    std::string at = pointer;
    if (problem->edge) at = edge_pointers.at(*problem->edge);
    else if (problem->op) at = op_pointers.at(*problem->op) + (problem->op_field.empty() ? "" : "/" + problem->op_field);
    else if (problem->layer) at = json_pointer_append(r.pointer_of("layers"), static_cast<std::size_t>(*problem->layer));
    throw doc.error_at(at, problem->message);
  }
  return g;
}

}  // namespace parasim::models
