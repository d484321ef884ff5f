#pragma once
/// 0–1 integer linear programs, solved exactly by COIN-OR CBC (branch and cut) in libparasim_ilp.so
/// (common/plugin.hpp), so that only the commands that solve one map CBC. The automatic sharding
/// (sim/auto_sharding.hpp) is its user.
#include <string>
#include <vector>

namespace parasim::sim {

/// Minimise Σ cost·x subject to lower ≤ Σ row·x ≤ upper for every row; x[i] binary where `binary[i]`,
/// else continuous in [0, upper[i]] (upper empty: 1 for every variable).
struct LinearProgram {
  struct Row {
    std::vector<int> index;
    std::vector<double> value;
    double lower = 0;
    double upper = 0;
  };
  std::vector<double> cost;
  std::vector<bool> binary;
  std::vector<double> upper;
  std::vector<Row> rows;
  /// A feasible solution to start from (empty: none), so that a time limit always has one to return.
  std::vector<double> start;
};

struct LinearSolution {
  enum class Status {
    Optimal,     ///< proven optimal
    Feasible,    ///< the time limit came first: the best solution found, with its gap
    Infeasible,  ///< no solution exists
    NoSolution,  ///< the time limit came before any solution
  };
  Status status = Status::NoSolution;
  std::vector<double> x;
  double objective = 0;  ///< of the solution returned
  double bound = 0;      ///< the best lower bound proven
  /// (objective − bound) / max(|objective|, 1e-12): 0 when proven optimal.
  [[nodiscard]] double gap() const;
};

[[nodiscard]] std::string_view to_string(LinearSolution::Status s);  ///< "optimal", "feasible", ...

/// What libparasim_ilp.so provides.
struct IlpPlugin {
  int version = 1;
  /// Solves `lp` within `seconds` of wall time on one thread (deterministic for a given problem).
  /// False with `error` set when CBC fails; never throws.
  bool (*solve)(const LinearProgram& lp, double seconds, LinearSolution& out, std::string& error) = nullptr;
  const char* (*version_text)() = nullptr;  ///< "COIN-OR CBC 2.10.8"
};
inline constexpr int kIlpPluginVersion = 1;

/// Solves `lp` with CBC within `seconds`. Throws PlanError when libparasim_ilp.so cannot load (saying
/// why) or CBC fails.
[[nodiscard]] LinearSolution solve_linear_program(const LinearProgram& lp, double seconds);

/// "COIN-OR CBC 2.10.8", or why the solver is not available.
[[nodiscard]] std::string ilp_solver_version();

}  // namespace parasim::sim
