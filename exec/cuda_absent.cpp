// This build has no CUDA executor (CMake found no CUDA toolkit with cuDNN and a CUDA compiler):
// `parasim execute --backend cuda` says so and exits 3.
#include "common/error.hpp"
#include "exec/cuda_kernels.hpp"

namespace parasim::exec {

std::string cuda_unavailable() {
  return "this build of parasim has no CUDA executor: no CUDA toolkit with cuDNN and a CUDA compiler was found when it was configured";
}

std::unique_ptr<Kernels> make_cuda_kernels(const models::Graph&, const sim::StepWork&, const strategies::Plan&, int) {
  PARASIM_CHECK(false, "the CUDA executor is built");
  return nullptr;
}

}  // namespace parasim::exec
