#include "strategies/plan_json.hpp"

#include "common/error.hpp"

namespace parasim::strategies {

nlohmann::json to_json(const Plan& plan, const models::Graph& graph) {
  using nlohmann::json;
  PARASIM_CHECK(plan.sharding.size() == graph.op_count() && plan.chunk_of_layer.size() == graph.layers().size(),
                "the plan was made for another graph");
  json out;
  out["schema"] = "parasim.plan/1";
  out["description"] = plan.description;
  json mesh = json::array();
  for (const auto& a : plan.mesh.axes) mesh.push_back(json{{"axis", a.name}, {"size", a.size}});
  out["mesh"] = mesh;
  out["data_parallel"] = plan.dp();
  out["tensor_parallel"] = plan.tp();
  out["pipeline_parallel"] = plan.pp;
  out["expert_parallel"] = plan.ep();
  out["expert_imbalance"] = plan.expert_imbalance;
  out["schedule"] = to_string(plan.schedule);
  out["virtual_stages"] = plan.virtual_stages;
  out["global_batch"] = plan.global_batch;
  out["micro_batch"] = plan.micro_batch;
  out["micro_batches"] = plan.micro_batches;
  out["zero"] = plan.zero;
  out["recompute"] = to_string(plan.recompute);
  out["sequence_parallel"] = plan.sequence_parallel;
  out["tp_comm_overlap"] = plan.tp_comm_overlap;
  out["cp"] = plan.cp();
  out["cp_comm"] = to_string(plan.cp_comm);
  out["grad_bucket_bytes"] = plan.grad_bucket_bytes;
  out["overlap_grad_reduce"] = plan.overlap_grad_reduce;
  out["overlap_param_gather"] = plan.overlap_param_gather;
  out["grad_precision"] = models::to_string(plan.grad_dtype);
  if (!plan.attention_kernel.empty()) out["attention_kernel"] = plan.attention_kernel;
  out["blocking_p2p"] = plan.blocking_p2p;
  out["grad_accumulation"] = to_string(plan.grad_accumulation);
  out["precision"] = models::to_string(plan.precision);
  out["optimizer"] = to_string(plan.optimizer);

  json chunks = json::array();
  for (std::int64_t c = 0; c < plan.chunks(); ++c) {
    json layers = json::array();
    for (std::size_t l = 0; l < graph.layers().size(); ++l)
      if (plan.chunk_of_layer[l] == c) layers.push_back(graph.layers()[l].name);
    chunks.push_back(json{{"chunk", c}, {"stage", plan.stage_of_chunk(c)}, {"layers", layers}});
  }
  out["chunks"] = chunks;

  json sharding = json::array();
  for (models::OpId id = 0; id < graph.op_count(); ++id) {
    const auto& sh = plan.sharding[id];
    if (sh.dims.empty()) continue;
    json dims = json::object();
    for (const auto& ds : sh.dims) {
      json axes = json::array();
      for (int a : ds.axes) axes.push_back(plan.mesh.axes[static_cast<std::size_t>(a)].name);
      dims[ds.dim] = axes;
    }
    sharding.push_back(json{{"op", graph.op(id).name}, {"split", dims}});
  }
  out["sharding"] = sharding;
  return out;
}

}  // namespace parasim::strategies
