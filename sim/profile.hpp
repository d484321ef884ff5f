#pragma once
/// Profiles: the speeds the cost model uses, per device kind and per link class. A profile is either
/// the built-in datasheet profile (figures from vendor datasheets and public microbenchmarks, each
/// with its source, shipped as JSON in sim/profiles/) or one written by `parasim calibrate`.
/// Efficiency curves are data in the profile, never constants in code.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/dtype.hpp"
#include "sim/efficiency_curve.hpp"
#include "sim/interference.hpp"

namespace parasim::sim {

/// Fraction of the dtype's dense peak a fused attention kernel reaches, counting the FLOPs it executes
/// (a causal kernel executes about half the score blocks; backward 2.5 × forward), for one head dim and
/// mask, by sequence length (keys per query row), forward and backward apart, for one implementation
/// ("cudnn", "flash-attention-2", ...): the same GPU runs attention at rates that differ by 1.6× between
/// kernels of one generation, so a training stack's choice is part of the prediction.
struct AttentionEfficiency {
  std::string implementation;  ///< the kernel library the curves were measured with
  models::DType dtype = models::DType::BF16;
  std::int64_t head_dim = 128;
  bool causal = true;
  EfficiencyCurve forward, backward;
  bool operator==(const AttentionEfficiency&) const = default;
};

/// The calibrated curves checked on a kernel shape the calibration's sweep did not measure: the
/// shape's median time as measured, and the cost model's prediction for it from the calibrated
/// figures (fit quality on held-out sizes, written by `parasim calibrate --backend cpu`).
struct HeldOutCheck {
  std::string kernel;  ///< "gemm" or "memory"
  std::string shape;   ///< "512x1536x512" (m x n x k) or the bytes a memory pass moves
  double measured_s = 0, predicted_s = 0;
  bool operator==(const HeldOutCheck&) const = default;
};

struct DeviceProfile {
  std::string name;  ///< "a100-80gb", "h100-sxm", "tpu-v4", ...
  std::string description;
  std::map<models::DType, double> peak_flops_per_s;  ///< dense peak by compute dtype
  double memory_bandwidth_bytes_per_s = 0;
  double memory_capacity_bytes = 0;
  /// Memory the runtime keeps for itself (CUDA context, allocator reserve); not available to the plan.
  double memory_reserved_bytes = 0;
  /// Fraction of peak FLOP/s a GEMM-class kernel reaches, by its FLOP count (2·batch·m·n·k).
  EfficiencyCurve gemm_efficiency;
  /// A factor on the GEMM curve by the smallest of a GEMM's m, n and k (a thin GEMM reaches less of
  /// the peak than a square one of equal FLOPs); empty: 1 at every size. Measured by `parasim
  /// calibrate --backend cpu`; no datasheet gives it.
  EfficiencyCurve gemm_thin_efficiency;
  /// The same factor for an untransposed GEMM (a layer's forward) by which of its dims is the
  /// smallest: [0] m, [1] n, [2] k. The three differ by up to a fifth on one CPU (a thin m streams
  /// the whole of B for few rows of A); empty curves: the average above serves. Measured by `parasim
  /// calibrate --backend cpu`.
  std::array<EfficiencyCurve, 3> gemm_thin_efficiency_by_dim;
  /// The same factor for a layer's backward pair as the executor runs it (dX = dY·Wᵀ, dW = Xᵀ·dY,
  /// each transposing an operand), by the forward's m where m is the thin dim (a batch of few rows:
  /// a late convolution's pixels at a small micro-batch): the square curve's time for the pair's
  /// FLOPs over the pair's measured time. On one 2-core EPYC host the pair of an 8-row GEMM over a
  /// 1024 × 1024 weight took 1.5–1.7 times its forward, where the orientations' average factor
  /// priced it at 1.2 times. Empty: the average above serves. Measured by `parasim calibrate --backend cpu`.
  EfficiencyCurve gemm_thin_backward_efficiency;
  /// A dtype's own GEMM curve where one was measured (an fp8 GEMM reaches a different fraction of its
  /// peak than a bf16 one); `gemm_efficiency` serves the others.
  std::map<models::DType, EfficiencyCurve> gemm_efficiency_by_dtype;
  /// Fused attention curves (may be empty: the kernel then runs as its two matmuls would on the GEMM
  /// curve, see sim/cost_model.hpp). The implementation of the first entry is the device's default.
  std::vector<AttentionEfficiency> attention_efficiency;
  /// Fraction of peak memory bandwidth a memory-bound kernel reaches, by the bytes it moves.
  EfficiencyCurve memory_efficiency;
  double kernel_launch_overhead_s = 0;
  /// The rate of a softmax's or cross-entropy's forward (its exponentials), in FLOP/s as the model
  /// counts them (models/ops.hpp: 5 an element); 0: the fp32 peak, as a GPU's vector units run them
  /// beside their loads. A CPU runs exponentials far below its GEMM peak, so `parasim calibrate
  /// --backend cpu` measures it (sim/cost_model.hpp, op_cost).
  double softmax_flops_per_s = 0;
  /// The rate of an Adam or AdamW step's arithmetic, in FLOP/s as the model counts it (12 a parameter,
  /// sim/work/work_cost.cpp); 0: the fp32 peak. Other optimizers' steps stay memory-bound. On a GPU the step is memory-bound; a CPU core's
  /// square roots and divisions make it compute-bound, so `parasim calibrate --backend cpu` measures it.
  double optimizer_flops_per_s = 0;
  /// The optimizer's in-place update where one was measured (`parasim calibrate --backend cpu` times
  /// the executor's SGD-with-momentum update): its fastest rate in bytes moved a second, as the model
  /// counts an update's bytes (sim/cost_model.hpp, optimizer_bytes_per_parameter), and its fraction
  /// of that by the bytes it keeps in play. An in-place update reads and writes back the same arrays
  /// and ran 1.5 to 1.9 times as fast per byte moved as the out-of-place pass the memory curve is
  /// measured with, on this project's 2-core host. 0 and empty: the memory curve prices the update.
  double optimizer_bytes_per_s = 0;
  EfficiencyCurve optimizer_memory_efficiency;
  /// Weights read again after other work has pushed them out of cache (sim/weight_reuse.hpp). A
  /// weight-streaming GEMM timed warm, then after N bytes of other memory were touched between
  /// calls: `weight_reuse_bytes_per_s` is its weight bytes over its warm time, and
  /// `weight_reuse_efficiency` its warm time over its time, by N. A pass over W weight bytes last
  /// touched N bytes ago then costs W / weight_reuse_bytes_per_s · (1 / efficiency(N) − 1) more than
  /// the (warm) curves price it. Measured by `parasim calibrate --backend cpu`; 0 and empty: no cost
  /// (a GPU streams its weights from HBM at every pass, as its GEMM curves were measured).
  double weight_reuse_bytes_per_s = 0;
  EfficiencyCurve weight_reuse_efficiency;
  /// The same for a backward's two GEMMs on that weight (dX = dY·Wᵀ reads it, dW = Xᵀ·dY writes its
  /// gradient): the weight's bytes over their warm time, and their warm time over their time by N.
  /// 0 and empty: a backward pays the forward's price on twice its weight bytes.
  double weight_reuse_backward_bytes_per_s = 0;
  EfficiencyCurve weight_reuse_backward_efficiency;
  /// Activations read or written again out of cache by a memory-bound pass (sim/weight_reuse.hpp),
  /// which has no arithmetic to hide a miss behind: the executor's memory-bound kernel over a few
  /// hundred KiB timed warm, then after N bytes of other memory were written between calls, one
  /// operand cold and the other touched just before. `memory_reuse_bytes_per_s` is its bytes moved
  /// over its warm time; `memory_reuse_efficiency` its warm time over its time by N with the output
  /// cold, `memory_reuse_read_efficiency` with the input cold. An element-wise pass's operand of B
  /// bytes, written (or read) N bytes after it was last touched, is priced as that pass over 2B
  /// bytes with it cold. 0 and empty: its operands are priced as a weight's (weight_reuse_*).
  double memory_reuse_bytes_per_s = 0;
  EfficiencyCurve memory_reuse_efficiency, memory_reuse_read_efficiency;
  /// How the device's convolution library runs a convolution: "winograd" (cuDNN's and oneDNN's
  /// choice: implicit GEMM, and Winograd F(2×2, 3×3) for an fp32 3×3 stride-1 convolution, where no
  /// tensor core takes fp32) or "im2col-gemm" (the patch matrix written to memory, then one GEMM:
  /// parasim execute's CPU convolution). See sim/cost_model.cpp, op_cost.
  std::string convolution = "winograd";
  /// What compute and collectives keep of their speed while they overlap on this device, by
  /// collective kind (sim/interference.hpp); 1 where the profile says nothing (overlap is free).
  InterferenceRates interference;
  /// How far apart `ranks` devices of this kind run the same work at once: the slowest one's time
  /// over the mean of their times, averaged over rounds (`parasim calibrate --backend mpi` times a
  /// block of the executor's kernels on every rank at once, round after round). A step whose ranks
  /// wait for each other (every collective, every send) runs at the slower rank's pace, so
  /// build_cluster slows every device of a cluster of two or more by this factor (sim/cluster.hpp).
  /// ranks 0: not measured (a GPU's datasheet profile), no slowdown.
  struct RankSpread {
    std::int64_t ranks = 0;
    double slowest_over_mean = 1;
    bool operator==(const RankSpread&) const = default;
  } rank_spread;
  /// The profile's device entry that prices this device where its host runs two of its ranks or
  /// more: the same kernels measured with `ranks` ranks of one host each running them at the same
  /// moment (`parasim calibrate --backend mpi`, calibrate/cpu.hpp: CpuOptions::in_step). The ranks of
  /// a host share its memory bandwidth and last level cache: on this project's 2-core host a pass
  /// over 4 or 64 MiB moved 17.4 and 11.8 GB/s alone and 7.3 and 6.9 GB/s on each of two ranks at
  /// once, and the backward pair of an 8-row GEMM on a 1024 × 1024 weight ran at 21 GFLOP/s alone
  /// and 12 beside its twin, where a 512³ sgemm kept 85–100% of its speed. build_cluster prices a
  /// device of this kind on a host of two devices or more with that entry (Device::priced_as).
  /// ranks 0: not measured, the device's own figures serve.
  struct SharedHost {
    std::int64_t ranks = 0;
    std::string device;
    bool operator==(const SharedHost&) const = default;
  } shared_host;
  std::string default_intra_link;  ///< link profile used inside a node unless the scenario says otherwise
  std::string default_inter_link;
  std::map<std::string, std::string> sources;  ///< figure name → where it comes from
  /// How well the calibrated figures predict shapes the calibration did not fit (empty for
  /// datasheet profiles): provenance, not used by the cost model.
  std::vector<HeldOutCheck> held_out;
  bool operator==(const DeviceProfile&) const = default;

  /// The attention implementations the curves cover, in the order they first appear (the first is the
  /// default); empty when there are no curves.
  [[nodiscard]] std::vector<std::string> attention_kernels() const;

  /// Dense peak FLOP/s for `dtype`, or nothing when the device has no such compute path (V100: bf16).
  [[nodiscard]] std::optional<double> peak_for(models::DType dtype) const;
  /// The GEMM curve for `dtype`: its own where the profile has one, else gemm_efficiency.
  [[nodiscard]] const EfficiencyCurve& gemm_curve(models::DType dtype) const;
  /// Capacity less the runtime's reserve: what a plan may use.
  [[nodiscard]] double usable_memory_bytes() const { return memory_capacity_bytes - memory_reserved_bytes; }
};

/// The names of the figures of a device profile, as keys of `sources` (and of its JSON form):
/// "peak_flops_per_s.<dtype>" for each dtype it lists, "memory_bandwidth_bytes_per_s",
/// "memory_capacity_bytes", "memory_reserved_bytes", "gemm_efficiency", "gemm_efficiency_by_dtype.<dtype>"
/// for each dtype with its own curve, "attention_efficiency" when it has curves, "memory_efficiency",
/// "kernel_launch_overhead_s", and "interference" when some rate is below 1.
[[nodiscard]] std::vector<std::string> figure_names(const DeviceProfile& device);

/// One of a collective library's protocols over a link class (NCCL's LL, LL128 and Simple): the
/// latency it adds per algorithm step crossing the link, the fraction of the link's collective
/// bandwidth it reaches, and its per-collective launch and synchronisation cost. NCCL predicts each
/// protocol's time and runs the fastest (src/graph/tuning.cc); so do the ring and tree algorithms
/// here (sim/collectives/).
struct Protocol {
  std::string name;
  double hop_latency_s = 0;
  double bandwidth_fraction = 1;
  double base_latency_s = 0;
  bool operator==(const Protocol&) const = default;
};

struct LinkProfile {
  std::string name;  ///< "nvlink3", "pcie4", "ib-hdr", "ici-v4", ...
  std::string description;
  double bandwidth_bytes_per_s = 0;  ///< per device (or NIC / torus link), per direction
  double latency_s = 0;              ///< per message / per algorithm step (alpha)
  /// Fraction of bandwidth a collective reaches, by message bytes (NCCL bus bandwidth over line rate).
  EfficiencyCurve efficiency;
  /// A collective kind's own curve where it was measured apart from the all-reduce (`calibrate
  /// --backend mpi` measures all-gather, reduce-scatter and send-recv as the executor runs them):
  /// libraries run each kind with its own algorithm and copies, so one curve does not fit them all.
  /// A kind without one uses `efficiency`. Never the all-reduce's.
  std::map<CollectiveKind, EfficiencyCurve> collective_efficiency;
  /// The collective library's protocols over this link; empty: one protocol of `latency_s` per step,
  /// full bandwidth and no per-collective cost.
  std::vector<Protocol> protocols;
  std::map<std::string, std::string> sources;  ///< figure name → where it comes from
  bool operator==(const LinkProfile&) const = default;
};

/// The names of the figures of a link profile: "bandwidth_bytes_per_s", "latency_s", "efficiency",
/// "protocols" when it has some, and "collective_efficiency.KIND" for each kind's own curve.
[[nodiscard]] std::vector<std::string> figure_names(const LinkProfile& link);

/// A loader's speed on one dataset format, measured by `parasim calibrate --backend loader`: one
/// thread's time to read a sample (from the page cache), decode it and augment it into a tensor of
/// `image_size`, and the rate at which a loader thread copies a tensor into a device's buffer
/// (host memory: the devices of a CPU cluster). `checks`: the loader run for real against the
/// prediction from these figures, per placement and thread count.
struct LoaderCheck {
  std::string placement;
  std::int64_t threads = 1;
  double measured_s_per_sample = 0;
  double predicted_s_per_sample = 0;
  bool operator==(const LoaderCheck&) const = default;
};
struct LoaderProfile {
  double decode_s_per_sample = 0;
  /// Per thread count 1, 2, …: each thread's time per sample while that many decode at once.
  std::vector<double> decode_s_at_threads;
  double copy_bytes_per_s = 0;
  std::int64_t image_size = 0;
  std::vector<LoaderCheck> checks;
  std::string source;  ///< host, library versions, date and command
  bool operator==(const LoaderProfile&) const = default;
};

struct Profile {
  std::string name;    ///< "datasheet" or the calibrated profile's name
  std::string origin;  ///< where it came from: "built-in datasheet figures" or the calibration file and date
  std::map<std::string, DeviceProfile> devices;
  std::map<std::string, LinkProfile> links;
  /// Per dataset format ("jpeg-tar", "cifar-bin"): the loader measured on this machine (none in the
  /// datasheet profile).
  std::map<std::string, LoaderProfile> loaders;
  bool operator==(const Profile&) const = default;

  /// Precondition: present (check with devices.count first).
  [[nodiscard]] const DeviceProfile& device(const std::string& name) const;
  [[nodiscard]] const LinkProfile& link(const std::string& name) const;
};

/// The built-in datasheet profile (parsed once from the embedded sim/profiles/*.json; defined in
/// sim/profile_json.cpp). Immutable, so sharing it between threads is safe.
[[nodiscard]] const Profile& datasheet_profile();

}  // namespace parasim::sim
