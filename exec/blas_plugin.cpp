#include "exec/blas_plugin.hpp"

#include <mutex>

#include "common/error.hpp"
#include "common/plugin.hpp"

namespace parasim::exec {

const BlasPlugin& blas_plugin() {
  static std::once_flag once;
  static const BlasPlugin* loaded = nullptr;
  static std::string why;
  std::call_once(once, [] { loaded = static_cast<const BlasPlugin*>(load_plugin("libparasim_blas.so", "parasim_blas_plugin", kBlasPluginVersion, false, why)); });
  if (!loaded) throw PlanError("OpenBLAS is not available: " + why);
  return *loaded;
}

}  // namespace parasim::exec
