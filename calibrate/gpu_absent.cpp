// This build has no CUDA toolkit with NCCL (CMake found none): the GPU measurements say so.
#include "calibrate/gpu.hpp"

namespace parasim::calibrate {

namespace {
const char* const kNoCuda = "this build of parasim has no CUDA support: no CUDA toolkit with NCCL was found when it was configured";
}

std::variant<CudaMeasurement, Unavailable> measure_cuda(const CudaOptions&) { return Unavailable{kNoCuda}; }
std::variant<NcclTestsLog, Unavailable> measure_nccl(const NcclOptions&) { return Unavailable{kNoCuda}; }
std::variant<InterferenceMeasurement, Unavailable> measure_interference(const InterferenceOptions&) { return Unavailable{kNoCuda}; }

}  // namespace parasim::calibrate
