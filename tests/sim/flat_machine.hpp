#pragma once
/// A machine for hand-derived tests: every efficiency 1 at every size, no kernel launch overhead, a
/// memory bandwidth so high that no kernel is memory-bound, so an operator's time is exactly
/// FLOPs / peak; links whose bandwidth and latency the test chooses (by default so fast that a message
/// rounds to zero picoseconds).
#include <cstdint>
#include <string>

#include "sim/cluster.hpp"
#include "sim/profile.hpp"

namespace parasim::testing {

/// Efficiency 1 at every size.
inline sim::EfficiencyCurve flat_curve() { return sim::EfficiencyCurve{{{1.0, 1.0}}}; }

/// Device "chip": `gemm_peak` FLOP/s for fp16/bf16 GEMMs, `vector_peak` FLOP/s for fp32 (the
/// element-wise kernels and the optimizer step run there), `memory_bandwidth` B/s (by default so high
/// that no kernel is memory-bound), 1 PB of memory.
inline sim::Profile flat_profile(double gemm_peak, double vector_peak, double memory_bandwidth = 1e30) {
  sim::DeviceProfile chip;
  chip.name = "chip";
  chip.peak_flops_per_s = {{models::DType::F16, gemm_peak}, {models::DType::BF16, gemm_peak}, {models::DType::F32, vector_peak}};
  chip.memory_bandwidth_bytes_per_s = memory_bandwidth;
  chip.memory_capacity_bytes = 1e15;
  chip.gemm_efficiency = flat_curve();
  chip.memory_efficiency = flat_curve();
  chip.kernel_launch_overhead_s = 0;
  sim::Profile p;
  p.name = "flat";
  p.origin = "tests/sim/flat_machine.hpp";
  p.devices["chip"] = chip;
  return p;
}

/// `devices` chips in one node, every link `bandwidth` B/s with `latency` s per message.
inline sim::Cluster flat_cluster(std::int64_t devices, double bandwidth = 1e30, double latency = 0) {
  sim::Cluster c;
  c.nodes = 1;
  c.devices_per_node = devices;
  for (std::int64_t id = 0; id < devices; ++id) c.devices.push_back(sim::Device{id, 0, "chip", 1, ""});
  c.intra = sim::Link{"wire", bandwidth, latency, flat_curve(), {}, {}};
  c.inter = c.intra;
  c.nics_per_node = devices;
  return c;
}

}  // namespace parasim::testing
