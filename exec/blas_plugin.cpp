#include "exec/blas_plugin.hpp"

#include "common/plugin.hpp"

namespace parasim::exec {

const BlasPlugin& blas_plugin() {
  return plugin_table<BlasPlugin>("libparasim_blas.so", "parasim_blas_plugin", kBlasPluginVersion, false, "OpenBLAS");
}

}  // namespace parasim::exec
