#pragma once
/// GPU microbenchmarks and the device and link profiles they calibrate. Built against the CUDA
/// toolkit and NCCL where they were found at configure time (PARASIM_HAVE_CUDA): half-precision
/// cuBLAS GEMMs and device-to-device copies on one GPU, and an all-reduce sweep over this node's GPUs
/// through NCCL in one process. Elsewhere, or where no GPU is present, they say why instead.
///
/// The profile side is plain C++ and builds everywhere: a GPU keeps its datasheet peak and
/// bandwidth (physical figures), and the measurement sets the efficiency curves against them.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "calibrate/nccl_tests.hpp"
#include "calibrate/sweep.hpp"
#include "sim/profile.hpp"

namespace parasim::calibrate {

/// Why a GPU measurement did not run: the build has no CUDA support, no device was found, too few
/// devices for a collective, or a CUDA, cuBLAS or NCCL call failed (with its error string).
struct Unavailable {
  std::string reason;
};

struct CudaOptions {
  int device = 0;
  /// n of fp16 n³ GEMMs, by factors of 1.5 and 4/3 (a GEMM's efficiency climbs steeply between 2³⁰
  /// and 2³⁸ FLOPs, and the curve is a straight line in log-FLOPs between points), each a multiple of
  /// 128 as a model's dims are: on an H100, 5793³ ran at a sixth of 4096³'s rate.
  std::vector<std::int64_t> gemm_sizes{256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
  /// Thin fp16 GEMMs: one of m, n and k at each of these, the other two `thin_other`, each of the
  /// three orientations timed (a convolution's implicit GEMM has a thin channel dim, a layer's
  /// weight gradient a thin batch).
  std::vector<std::int64_t> thin_dims{32, 64, 128, 256, 512, 1024, 2048, 4096};
  std::int64_t thin_other = 8192;
  std::vector<double> copy_bytes{1 << 20, 1 << 24, 1 << 28, double(1) * (1 << 30)};  ///< device-to-device copies
  /// Bytes moved (read + written) by the executor's memory-bound kernel, in bf16 elements; passes
  /// that fit in the GPU's L2 run from there, up to (counted at most at) the datasheet bandwidth.
  std::vector<double> memory_bytes{1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, double(1) * (1 << 30)};
  double softmax_elements = 1 << 25;     ///< the executor's softmax, bf16, in rows of softmax_row
  double softmax_row = 2048;
  double softmax_flops_per_element = 5;  ///< as the model counts a softmax's (calibrate/cpu.hpp)
  double min_seconds_per_size = 0.05;
};

struct CudaMeasurement {
  std::string device_name;          ///< as CUDA names it ("NVIDIA A100-SXM4-80GB")
  std::vector<Sample> gemm;         ///< fp16 GEMM FLOPs (2n³) → FLOP/s
  std::vector<ThinGemm> thin;       ///< thin fp16 GEMMs' times (CudaOptions::thin_dims)
  std::int64_t thin_other = 0;
  std::vector<Sample> copy;         ///< bytes moved by a copy (read + written) → bytes/s
  /// Bytes moved by the executor's memory-bound kernel (read + written) → bytes/s, and its softmax's
  /// rate; empty and 0 in a build without the CUDA executor.
  std::vector<Sample> memory;
  double softmax_flops_per_s = 0;
  double launch_overhead_s = 0;     ///< a one-element kernel's time among others: the fixed cost of a kernel
  double memory_capacity_bytes = 0;
};

[[nodiscard]] std::variant<CudaMeasurement, Unavailable> measure_cuda(const CudaOptions& options = {});

struct NcclOptions {
  std::vector<double> bytes;  ///< all-reduce sizes; empty: 8 B to 1 GiB by factors of 4
  int warmup = 5, iterations = 20;
};

/// An all-reduce sweep over every GPU of this node through NCCL (one communicator per device, one
/// process), reported as nccl-tests reports it, so calibrated_link fits it the same way.
[[nodiscard]] std::variant<NcclTestsLog, Unavailable> measure_nccl(const NcclOptions& options = {});

/// Compute–communication interference on this node: an fp16 cuBLAS GEMM of n³ on every GPU's
/// compute stream, timed alone and beside an NCCL all-reduce over every GPU on another stream, and
/// the all-reduce timed alone and beside the GEMMs (CUDA events on each stream; the all-reduces
/// beside are as many as last about as long as the GEMMs).
struct InterferenceOptions {
  std::int64_t gemm_n = 8192;
  double collective_bytes = double(1 << 28);
  int gemms = 20;
};
struct InterferenceMeasurement {
  std::string device_name;
  int ranks = 0;
  std::int64_t gemm_n = 0;
  NcclTest collective = NcclTest::AllReduce;  ///< the collective timed beside the GEMMs
  double collective_bytes = 0;
  double gemm_alone_s = 0, gemm_beside_s = 0;              ///< per GEMM
  double collective_alone_s = 0, collective_beside_s = 0;  ///< per collective
  /// How it was measured, for the profile's source: the GEMM ("... of N^3 on every device"), the
  /// collective, and the command.
  std::string gemm_text = "an fp16 cublasGemmEx of";
  std::string collective_text = "ncclAllReduce over all of them";
  std::string command = "parasim calibrate --backend nccl";
};
[[nodiscard]] std::variant<InterferenceMeasurement, Unavailable> measure_interference(const InterferenceOptions& options = {});

/// How far apart the ranks run the same work at once (`parasim calibrate --backend mpi`): each round
/// every rank times the same block of the executor's kernels, started together; `slowest_over_mean`
/// is the rounds' summed slowest time over their summed mean time (at least 1).
struct RankSpreadMeasurement {
  int ranks = 0, rounds = 0;
  double block_s = 0;  ///< the mean time of one rank's block
  double slowest_over_mean = 1;
  std::string block_text;  ///< what the block runs, for the profile's source
};

/// One rank's mean times in an interference measurement (InterferenceMeasurement's four).
struct RankInterference {
  double gemm_alone_s = 0, gemm_beside_s = 0, collective_alone_s = 0, collective_beside_s = 0;
};
/// The measurement's times from every rank's: each side the slowest rank's, the rank whose GEMM kept
/// least of its speed (gemm_alone / gemm_beside) and the rank whose collective kept least. A step's
/// collectives wait for their last rank, and the model's data-parallel replicas stand for each
/// other, so the slowest rank's rates are the ones a step pays. Precondition: at least one rank.
[[nodiscard]] RankInterference slowest_rank(const std::vector<RankInterference>& ranks);

/// `base` with the measured interference: compute keeps gemm_alone / gemm_beside of its speed beside
/// the measured collective's class, the collective keeps collective_alone / collective_beside while
/// its device computes; each at most 1, with its source. The NCCL classes no measurement names take
/// the all-reduce's rates (the first measurement's where none is an all-reduce). Transformer
/// Engine's userbuffers rates and the channel count stay the base's. Throws InputError (naming
/// `what`) on a measurement with a non-positive time, or on none.
[[nodiscard]] sim::DeviceProfile calibrated_interference(const sim::DeviceProfile& base, const std::vector<InterferenceMeasurement>& measured, const std::string& what);

/// The profile device a CUDA device name is ("NVIDIA A100-SXM4-80GB" → "a100-80gb"), if parasim has it.
[[nodiscard]] std::optional<std::string> profile_device_for(const std::string& cuda_name);

/// `base` with the measured GEMM and copy efficiencies over its datasheet fp16 peak and memory
/// bandwidth, the measured launch overhead and capacity, each with a source. Throws InputError
/// (naming `what`) when a measured rate is above the datasheet figure: the device is not `base`.
[[nodiscard]] sim::DeviceProfile calibrated_gpu(const sim::DeviceProfile& base, const CudaMeasurement& m, const std::string& what);

}  // namespace parasim::calibrate
