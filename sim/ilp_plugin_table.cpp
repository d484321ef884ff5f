// libparasim_ilp.so: COIN-OR CBC behind sim/ilp.hpp's table (common/plugin.hpp).
#include <coin/Cbc_C_Interface.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/ilp.hpp"

namespace {

using parasim::sim::LinearProgram;
using parasim::sim::LinearSolution;

bool solve(const LinearProgram& lp, double seconds, LinearSolution& out, std::string& error) {
  Cbc_Model* m = Cbc_newModel();
  if (m == nullptr) {
    error = "CBC could not create a model";
    return false;
  }
  const int n = static_cast<int>(lp.cost.size());
  // Column-wise matrix, as Cbc_loadProblem takes it.
  std::vector<std::vector<std::pair<int, double>>> cols(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < lp.rows.size(); ++r)
    for (std::size_t k = 0; k < lp.rows[r].index.size(); ++k)
      cols[static_cast<std::size_t>(lp.rows[r].index[k])].emplace_back(static_cast<int>(r), lp.rows[r].value[k]);
  std::vector<CoinBigIndex> start{0};
  std::vector<int> index;
  std::vector<double> value;
  for (const auto& c : cols) {
    for (const auto& [row, v] : c) index.push_back(row), value.push_back(v);
    start.push_back(static_cast<CoinBigIndex>(index.size()));
  }
  std::vector<double> col_lower(static_cast<std::size_t>(n), 0.0), col_upper(static_cast<std::size_t>(n), 1.0);
  if (lp.upper.size() == static_cast<std::size_t>(n)) col_upper = lp.upper;
  std::vector<double> row_lower, row_upper;
  for (const auto& r : lp.rows) row_lower.push_back(r.lower), row_upper.push_back(r.upper);
  Cbc_loadProblem(m, n, static_cast<int>(lp.rows.size()), start.data(), index.data(), value.data(), col_lower.data(), col_upper.data(),
                  lp.cost.data(), row_lower.data(), row_upper.data());
  for (int i = 0; i < n; ++i)
    if (lp.binary[static_cast<std::size_t>(i)]) Cbc_setInteger(m, i);
  if (lp.start.size() == static_cast<std::size_t>(n)) {
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    Cbc_setMIPStartI(m, n, all.data(), lp.start.data());
  }
  Cbc_setLogLevel(m, 0);
  Cbc_setMaximumSeconds(m, seconds);
  Cbc_setParameter(m, "threads", "1");
  Cbc_setParameter(m, "randomSeed", "1");
  Cbc_setParameter(m, "randomCbcSeed", "1");
  Cbc_setAllowableFractionGap(m, 0.0);
  const int rc = Cbc_solve(m);
  (void)rc;
  const bool have = Cbc_numberSavedSolutions(m) > 0 || Cbc_isProvenOptimal(m);
  if (Cbc_isProvenOptimal(m)) out.status = LinearSolution::Status::Optimal;
  else if (Cbc_isProvenInfeasible(m)) out.status = LinearSolution::Status::Infeasible;
  else out.status = have ? LinearSolution::Status::Feasible : LinearSolution::Status::NoSolution;
  if (out.status == LinearSolution::Status::Optimal || out.status == LinearSolution::Status::Feasible) {
    const double* x = Cbc_getColSolution(m);
    out.x.assign(x, x + n);
    out.objective = Cbc_getObjValue(m);
    out.bound = Cbc_getBestPossibleObjValue(m);
    if (out.status == LinearSolution::Status::Optimal) out.bound = out.objective;
  }
  Cbc_deleteModel(m);
  return true;
}

const char* version_text() {
  static const std::string v = std::string("COIN-OR CBC ") + Cbc_getVersion();
  return v.c_str();
}

const parasim::sim::IlpPlugin kTable{parasim::sim::kIlpPluginVersion, &solve, &version_text};

}  // namespace

extern "C" __attribute__((visibility("default"))) const void* parasim_ilp_plugin() { return &kTable; }
