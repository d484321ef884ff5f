#pragma once
/// Sharding annotations as users write them (GSPMD, Xu et al. 2021, §3.1; JAX's PartitionSpec): a named
/// device mesh, and on a few tensors or operators which mesh axes split which of their dims
/// (models/sharding_annotation.hpp). No JSON here: scenarios/ decodes the plan's "mesh" and
/// "shardings" into these, and strategies/propagation.hpp spreads them over the whole graph.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/sharding_annotation.hpp"

namespace parasim::strategies {

/// One axis of the mesh a user declares, outermost first.
struct MeshAxisSpec {
  std::string name;
  std::int64_t size = 1;
  /// A data axis splits the batch dim of the graph's inputs (data parallelism written as an annotation),
  /// and the gradients summed over it are the data-parallel reductions ZeRO shards. At most one.
  bool data = false;
  bool operator==(const MeshAxisSpec&) const = default;
};

/// The annotation itself is the model's type (a graph file can carry annotations too).
using models::AnnotationTarget;
using models::name_matches;
using models::ShardingAnnotation;
using models::to_string;

}  // namespace parasim::strategies
