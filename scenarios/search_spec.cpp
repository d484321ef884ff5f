#include "scenarios/search_spec.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "sim/cluster.hpp"

namespace parasim::scenarios {
namespace {

using nlohmann::json;

template <class T>
std::vector<T> list_of(const json& search, const char* key) {
  std::vector<T> out;
  if (const auto it = search.find(key); it != search.end())
    for (const auto& v : *it) out.push_back(v.get<T>());
  return out;
}

template <class E, class Parse>
std::vector<E> enum_list(const json& search, const char* key, Parse parse) {
  std::vector<E> out;
  if (const auto it = search.find(key); it != search.end()) {
    for (const auto& v : *it) {
      const auto e = parse(v.get<std::string>());
      PARASIM_CHECK(e.has_value(), std::string("scenario schema and decoder disagree about search.") + key);
      out.push_back(*e);
    }
  }
  return out;
}

}  // namespace

SearchSpec decode_search_spec(const JsonDocument& doc, const Scenario& base, const sim::Profile& profile) {
  SearchSpec spec;
  const json& root = doc.root();
  if (const auto c = root.find("cluster"); c != root.end() && c->contains("price_per_device_hour")) {
    spec.price_per_device_hour = (*c)["price_per_device_hour"].get<double>();
    spec.has_price = true;
  }
  const auto it = root.find("search");
  if (it == root.end()) return spec;
  const json& s = *it;
  const auto objective = strategies::search::objective_from_string(s.value("objective", std::string("time")));
  PARASIM_CHECK(objective.has_value(), "scenario schema and decoder disagree about search.objective");
  spec.objective = *objective;
  spec.simulate_top = s.value("simulate_top", spec.simulate_top);
  spec.refine_top = s.value("refine_top", spec.refine_top);
  spec.auto_sharding = s.value("auto_sharding", spec.auto_sharding);
  auto& space = spec.space;
  space.nodes = list_of<std::int64_t>(s, "nodes");
  space.tp = list_of<std::int64_t>(s, "tp");
  space.pp = list_of<std::int64_t>(s, "pp");
  space.ep = list_of<std::int64_t>(s, "ep");
  space.cp = list_of<std::int64_t>(s, "cp");
  space.micro_batch = list_of<std::int64_t>(s, "micro_batch");
  space.schedule = enum_list<strategies::Schedule>(s, "schedule", strategies::schedule_from_string);
  space.max_virtual_stages = s.value("max_virtual_stages", space.max_virtual_stages);
  space.zero = list_of<int>(s, "zero");
  space.recompute = enum_list<strategies::Recompute>(s, "recompute", strategies::recompute_from_string);
  space.sequence_parallel = list_of<bool>(s, "sequence_parallel");

  if (spec.objective == strategies::search::Objective::Cost && !spec.has_price)
    throw doc.error_at("/search/objective", "the cost objective needs a price: set cluster.price_per_device_hour");
  for (std::size_t i = 0; i < space.nodes.size(); ++i) {
    sim::ClusterSpec cluster = base.cluster;
    if (space.nodes[i] != cluster.nodes && !cluster.inter_node.torus_dims.empty()) {
      cluster.inter_node.torus_ndims = static_cast<std::int64_t>(cluster.inter_node.torus_dims.size());
      cluster.inter_node.torus_dims.clear();
    }
    cluster.nodes = space.nodes[i];
    if (auto problem = sim::check_cluster_spec(cluster, profile))
      throw doc.error_at(json_pointer_append("/search/nodes", i),
                         "the cluster cannot have " + std::to_string(space.nodes[i]) + " nodes: " + problem->message);
  }
  // A degree list none of whose values divides any candidate cluster's devices leaves the search
  // nothing to rank: said at the list, with the device counts it had to divide.
  std::vector<std::int64_t> device_counts;
  for (const std::int64_t n : space.nodes.empty() ? std::vector<std::int64_t>{base.cluster.nodes} : space.nodes)
    device_counts.push_back(n * base.cluster.devices_per_node);
  for (const auto& [name, degrees] : {std::pair<const char*, const std::vector<std::int64_t>*>{"tp", &space.tp}, {"pp", &space.pp}, {"cp", &space.cp}}) {
    if (degrees->empty()) continue;
    const bool any = std::any_of(degrees->begin(), degrees->end(), [&](std::int64_t v) {
      return std::any_of(device_counts.begin(), device_counts.end(), [&](std::int64_t d) { return v >= 1 && d % v == 0; });
    });
    if (any) continue;
    std::string found, counts;
    for (const std::int64_t v : *degrees) found += (found.empty() ? "" : ", ") + std::to_string(v);
    for (const std::int64_t d : device_counts) counts += (counts.empty() ? "" : ", ") + std::to_string(d);
    throw doc.error_at(std::string("/search/") + name, std::string("found [") + found + "], expected at least one " + name +
                                                         " degree that divides the cluster's devices (" + counts +
                                                         "): no candidate of the search space could run");
  }
  return spec;
}

}  // namespace parasim::scenarios
