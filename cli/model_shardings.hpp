#pragma once
/// `parasim model --plan SCENARIO.json --shardings [--json]`: every operator's sharding under the
/// scenario's plan (sim/sharding_view.hpp), for a user to check what annotations propagated to.
#include <ostream>
#include <string>

namespace parasim::cli {

/// Prints the shardings of the plan of the scenario in `scenario_file` as a table or JSON.
void print_shardings(std::ostream& out, const std::string& scenario_file, bool json);

}  // namespace parasim::cli
