#pragma once
/// What a scenario's result cannot show about its topology: the fields of the cluster that have no
/// effect on this scenario (no traffic crosses the links they describe, or those links never set a
/// collective's pace), and contention the backend does not model. "Changing any topology field
/// changes the result, or the tool says it has no effect on this scenario": these notes are the
/// saying, in the Result, the table and result.json.
#include <string>
#include <vector>

#include "sim/cluster.hpp"
#include "sim/links.hpp"

namespace parasim::sim {

/// One sentence per finding, in a fixed order (link class by link class, then contention).
/// `models_contention`: whether the backend shares links between concurrent collectives.
[[nodiscard]] std::vector<std::string> topology_notes(const Cluster& cluster, const LinkUsage& usage, bool models_contention);

}  // namespace parasim::sim
