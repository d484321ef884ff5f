// libparasim_blas.so's table (exec/blas_plugin.hpp): OpenBLAS's calls that parasim makes. Compiled
// into the plugin only (cli/CMakeLists.txt).
#include <cblas.h>

#include <algorithm>

#include "exec/blas_plugin.hpp"

namespace {

void sgemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(ta ? m : k), b, static_cast<blasint>(tb ? k : n), 0.0f, c,
              static_cast<blasint>(n));
}

void set_threads(int threads) { openblas_set_num_threads(std::max(threads, 1)); }

const char* config() { return openblas_get_config(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const parasim::exec::BlasPlugin* parasim_blas_plugin() {
  static const parasim::exec::BlasPlugin table{parasim::exec::kBlasPluginVersion, &sgemm, &set_threads, &config};
  return &table;
}
