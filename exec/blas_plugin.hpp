#pragma once
/// OpenBLAS, for `parasim execute --backend cpu` and `parasim calibrate --backend cpu|mpi`, lives in
/// libparasim_blas.so (common/plugin.hpp), loaded on the first GEMM, so that no other command maps
/// OpenBLAS or starts its thread pool.
#include <cstdint>
#include <string>

namespace parasim::exec {

/// What libparasim_blas.so provides.
struct BlasPlugin {
  int version = 1;  ///< kBlasPluginVersion of the build that made it
  /// Row-major C = A·B (A m×k, or k×m when `ta`; B k×n, or n×k when `tb`; C m×n), cblas_sgemm.
  void (*sgemm)(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) = nullptr;
  /// openblas_set_num_threads.
  void (*set_threads)(int threads) = nullptr;
  /// openblas_get_config: "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64".
  const char* (*config)() = nullptr;
};

inline constexpr int kBlasPluginVersion = 1;

/// The loaded library's table, loading it on the first call (thread-safe). Throws PlanError saying
/// why when it cannot be loaded.
[[nodiscard]] const BlasPlugin& blas_plugin();

}  // namespace parasim::exec
