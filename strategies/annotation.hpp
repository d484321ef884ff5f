#pragma once
/// Sharding annotations as users write them (GSPMD, Xu et al. 2021, §3.1; JAX's PartitionSpec): a named
/// device mesh, and on a few tensors or operators which mesh axes split which of their dims. No JSON
/// here: scenarios/ decodes the plan's "mesh" and "shardings" into these, and strategies/propagation.hpp
/// spreads them over the whole graph.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

/// What an annotation pins.
enum class AnnotationTarget : std::uint8_t {
  Weight,    ///< a parameter tensor, by weight name ("layers.*.mlp.fc1.weight")
  Output,    ///< the output tensor of an operator, by operator name
  Operator,  ///< an operator's iteration dims, by operator name and dim name
};

/// One annotation. Names may hold `*`, which matches any run of characters (so one annotation can pin
/// the same tensor in every layer); each must match at least one tensor or operator.
struct ShardingAnnotation {
  AnnotationTarget target = AnnotationTarget::Weight;
  std::string pattern;
  /// Weight and Output: one entry per tensor dim, outermost first: the mesh axes splitting it, outermost
  /// first (empty: replicated).
  std::vector<std::vector<std::string>> spec;
  /// Output: the mesh axes over which the tensor is a partial sum (its operator's contraction is split
  /// over them; GSPMD's "partial" layout).
  std::vector<std::string> partial;
  /// Operator: dims by name, each with its mesh axes (empty: replicated).
  std::vector<std::pair<std::string, std::vector<std::string>>> dims;
  /// Where the annotation was written (a JSON pointer in the scenario, e.g. "/plan/shardings/0"), for
  /// the messages about it.
  std::string pointer;
  bool operator==(const ShardingAnnotation&) const = default;
};

[[nodiscard]] std::string_view to_string(AnnotationTarget t);  ///< "weight", "output", "operator"

/// Whether `name` matches `pattern`, where `*` matches any run of characters (none included).
[[nodiscard]] bool name_matches(std::string_view pattern, std::string_view name);

}  // namespace parasim::strategies
