#pragma once
/// A sharding annotation as users write it (GSPMD, Xu et al. 2021, §3.1; JAX's PartitionSpec): which
/// mesh axes split which dims of a tensor or an operator, by name. Written in a scenario's plan
/// (scenarios/) or in a graph file beside the operators (models/graph_json.hpp); the mesh axes they
/// name are the plan's, and strategies/propagation.hpp spreads them over the graph. Names only, so
/// that a model can carry them without knowing any plan.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parasim::models {

/// What an annotation pins.
enum class AnnotationTarget : std::uint8_t {
  Weight,    ///< a parameter tensor, by weight name ("layers.*.mlp.fc1.weight")
  Output,    ///< the output tensor of an operator, by operator name
  Operator,  ///< an operator's iteration dims, by operator name and dim name
  /// A named preset over one axis: the knobs' shardings written as annotations on every weight.
  /// "megatron": each weight's heads (g), else MLP width (f), else vocabulary (v) dim over the axis
  /// (Shoeybi et al. 2019: Q, K, V and fc1 by columns, the attention output and fc2 by rows, the
  /// embedding by vocabulary rows); "channels": each weight's output channels (co), else channels (c)
  /// (the CNN channel split). Propagation does the rest, as for any annotation.
  Preset,
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
  /// Preset: the mesh axis it splits over (`pattern` names the preset).
  std::string axis;
  /// Operator: dims by name, each with its mesh axes (empty: replicated).
  std::vector<std::pair<std::string, std::vector<std::string>>> dims;
  /// Where the annotation was written: a JSON pointer ("/plan/shardings/0") in `file`, for the
  /// messages about it.
  std::string pointer;
  /// The graph file it was written in; empty: the scenario.
  std::string file;
  bool operator==(const ShardingAnnotation&) const = default;
};

[[nodiscard]] std::string_view to_string(AnnotationTarget t);  ///< "weight", "output", "operator"

/// Whether `name` matches `pattern`, where `*` matches any run of characters (none included).
[[nodiscard]] bool name_matches(std::string_view pattern, std::string_view name);

}  // namespace parasim::models
