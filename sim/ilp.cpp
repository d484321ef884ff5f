#include "sim/ilp.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "common/plugin.hpp"

namespace parasim::sim {
namespace {

const IlpPlugin& plugin() {
  return plugin_table<IlpPlugin>("libparasim_ilp.so", "parasim_ilp_plugin", kIlpPluginVersion, false, "the ILP solver (COIN-OR CBC)");
}

}  // namespace

double LinearSolution::gap() const {
  if (status == Status::Optimal) return 0;
  return std::max(0.0, objective - bound) / std::max(std::abs(objective), 1e-12);
}

std::string_view to_string(LinearSolution::Status s) {
  switch (s) {
    case LinearSolution::Status::Optimal: return "optimal";
    case LinearSolution::Status::Feasible: return "feasible (time limit)";
    case LinearSolution::Status::Infeasible: return "infeasible";
    case LinearSolution::Status::NoSolution: return "no solution (time limit)";
  }
  return "optimal";
}

LinearSolution solve_linear_program(const LinearProgram& lp, double seconds) {
  PARASIM_CHECK(lp.binary.size() == lp.cost.size(), "one integrality flag per variable");
  LinearSolution out;
  std::string error;
  if (!plugin().solve(lp, seconds, out, error)) throw PlanError("the ILP solver failed: " + error);
  return out;
}

std::string ilp_solver_version() {
  std::string why;
  const IlpPlugin* p = find_plugin_table<IlpPlugin>("libparasim_ilp.so", "parasim_ilp_plugin", kIlpPluginVersion, false, &why);
  return p ? std::string(p->version_text()) : "not available: " + why;
}

}  // namespace parasim::sim
