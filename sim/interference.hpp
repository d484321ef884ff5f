#pragma once
/// Interference rates: what a compute kernel keeps of its speed while a collective runs beside it on
/// its device, and what the collective keeps while the device computes, per device kind and
/// collective kind. The engines take them as a parameter (sim/engine/interference_engine.hpp for
/// the analytical backend, sim/engine/simgrid_engine.hpp for SimGrid); the profile holds them
/// (sim/profile.hpp, DeviceProfile::interference).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collectives/names.hpp"

namespace parasim::sim {

/// The classes a collective's interference is looked up by: NCCL's kernels by collective kind
/// (CollectiveKind's six), then Transformer Engine's two userbuffers methods (CommKernel).
inline constexpr std::size_t kInterferenceClassCount = 8;
[[nodiscard]] std::size_t interference_class(CollectiveKind kind, CommKernel kernel);
/// The classes' names as profiles write them: "all-reduce", ..., "send-recv",
/// "userbuffers-ring-exchange", "userbuffers-pipeline".
[[nodiscard]] const std::vector<std::string>& interference_class_names();

/// One device kind's interference rates, by class. Each is a fraction of full speed in (0, 1].
///
/// NCCL's kernels take their SMs one per channel (a CTA each, not shared with compute: NVIDIA/nccl
/// issue #689), and a communicator uses all its channels inside a node but two per NIC its ring
/// leaves a node through (the same issue: 16 SMs on a DGX with 8 NICs, 2 with one NIC). So the
/// `compute` rates of NCCL's classes are those beside a collective inside one node, and a collective
/// whose group spans nodes takes the share of them its channels are of the node's: see
/// Interference::channel_share.
struct InterferenceRates {
  /// What a compute kernel keeps of its speed while a collective of the class is in flight beside it.
  std::array<double, kInterferenceClassCount> compute{1, 1, 1, 1, 1, 1, 1, 1};
  /// What a collective of the class keeps of its speed while its device runs a compute kernel.
  std::array<double, kInterferenceClassCount> communication{1, 1, 1, 1, 1, 1, 1, 1};
  /// The channels NCCL runs a collective inside one node with (0: not known; node-spanning
  /// collectives then interfere as much as in-node ones).
  double nccl_channels_in_node = 0;
  bool operator==(const InterferenceRates&) const = default;
  [[nodiscard]] bool none() const;
  /// What compute keeps beside a collective of `cls` that takes `share` of the in-node channels:
  /// 1 − (1 − compute[cls]) · share.
  [[nodiscard]] double compute_beside(std::size_t cls, double share) const { return 1 - (1 - compute[cls]) * share; }
};

/// The rates of every device of a TaskGraph: a few distinct sets (one per device kind) and, per
/// device, which one; and per collective of the graph the share of the in-node SM cost it takes.
struct Interference {
  std::vector<InterferenceRates> rates;
  std::vector<std::uint32_t> of_device;  ///< per device: index into rates
  /// Per TaskGraph collective, in [0, 1]: its NCCL channels over the in-node channel count (1 for a
  /// collective inside a node and for userbuffers' kernels, whose rates are their own). Empty: all 1.
  std::vector<double> channel_share;
  bool operator==(const Interference&) const = default;
  /// No rate below 1 (or no devices): overlap is free and simulate_fifo gives the timeline.
  [[nodiscard]] bool none() const;
  /// The least rate of any device and class (1 where none is below), at least 1e-6: a task slowed by
  /// interference takes at most 1 / this of its time.
  [[nodiscard]] double slowest_rate() const;
  [[nodiscard]] const InterferenceRates& of(std::int64_t device) const { return rates[of_device[static_cast<std::size_t>(device)]]; }
  [[nodiscard]] double share_of(std::uint32_t collective) const { return channel_share.empty() ? 1.0 : channel_share[collective]; }
};

}  // namespace parasim::sim
