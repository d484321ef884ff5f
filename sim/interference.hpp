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
#include "sim/efficiency_curve.hpp"

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
  /// Per class, where it was measured at several sizes: the same two rates by the collective's
  /// bytes (the size convention of sim/collectives.hpp, nccl-tests' size), piecewise linear in
  /// log2(bytes) and constant beyond the end points. A class with no points has `compute[cls]` and
  /// `communication[cls]` at every size. On this project's 2-core host a polled all-reduce kept
  /// 0.54–0.66 of its speed beside compute at 16 MiB and 0.47–0.50 at 40 MiB (docs/validation.md).
  std::array<EfficiencyCurve, kInterferenceClassCount> compute_by_size, communication_by_size;
  /// The channels NCCL runs a collective inside one node with (0: not known; node-spanning
  /// collectives then interfere as much as in-node ones).
  double nccl_channels_in_node = 0;
  bool operator==(const InterferenceRates&) const = default;
  /// No rate below 1, at any size.
  [[nodiscard]] bool none() const;
  /// Some class has rates by size.
  [[nodiscard]] bool by_size() const;
  /// No collective is slowed by compute, at any size.
  [[nodiscard]] bool communication_free() const;
  /// What compute keeps beside a collective of `cls` and `bytes`, and what the collective keeps
  /// beside compute: the class's curve at `bytes` where it has one, else its one rate.
  [[nodiscard]] double compute_at(std::size_t cls, double bytes) const;
  [[nodiscard]] double communication_at(std::size_t cls, double bytes) const;
  /// What compute keeps beside a collective of `cls` whose own rate is `rate` (compute_at) and that
  /// takes `share` of the in-node channels: 1 − (1 − rate) · share.
  [[nodiscard]] static double beside(double rate, double share) { return 1 - (1 - rate) * share; }
};

/// The rates of every device of a TaskGraph: a few distinct sets (one per device kind) and, per
/// device, which one; and per collective of the graph the share of the in-node SM cost it takes.
struct Interference {
  std::vector<InterferenceRates> rates;
  std::vector<std::uint32_t> of_device;  ///< per device: index into rates
  /// Per TaskGraph collective, in [0, 1]: its NCCL channels over the in-node channel count (1 for a
  /// collective inside a node and for userbuffers' kernels, whose rates are their own). Empty: all 1.
  std::vector<double> channel_share;
  /// Per rate set (`rates`), then per TaskGraph collective, where some set has rates by size: the
  /// collective's compute and communication rates at its bytes (InterferenceRates::compute_at and
  /// communication_at, before the channel share). Empty: each class's one rate.
  struct Sized {
    double compute = 1, communication = 1;
    bool operator==(const Sized&) const = default;
  };
  std::vector<std::vector<Sized>> at_size;
  /// Compute beside the host's other devices' compute (DeviceProfile::shared_host): the devices of a
  /// host share its memory bandwidth and last level cache, so a compute task keeps `together[t]` of
  /// its speed (its duration priced by the host's figures alone over its duration priced by the
  /// figures measured with the host's ranks running at once, at most 1) while another device of its
  /// host (`host_of`, per device: the same number for the devices of one host, −1 for a device alone
  /// on its host) runs a compute task, and all of it while none does. Both empty: no such coupling.
  /// `host_weight`, per device: how many devices of its host it stands for (itself, and under the
  /// data-parallel replica shortcut the unsimulated replicas on its host, which compute when it
  /// does); empty: 1 each.
  ///
  /// `together` is measured with the host's devices running the same kernels at the same moment
  /// (calibrate --backend mpi runs its sweep in step), so their memory traffic comes at the same
  /// instants: it is the slowdown beside a twin, a device running the same work (data- and
  /// tensor-parallel ranks of one stage, and the replicas a device stands for). Beside different
  /// work (another pipeline stage) the two tasks' memory phases meet only by chance: if the task's
  /// slowdown comes from the time both move memory, and the other task moves memory for a share
  /// `memory_duty[k]` of its time, independently of this one, the slowdown is that share of the
  /// twin's: the task keeps 1 − (1 − together[t]) · memory_duty[k], at the largest duty beside it.
  /// `memory_duty`, per task with `together`: its kernels' memory time (bytes over the host's
  /// bandwidth alone, sim/cost_model.hpp) over its duration alone, at most 1; empty: every other
  /// task counts as a twin.
  std::vector<std::int64_t> host_of;
  std::vector<float> together;
  std::vector<std::int64_t> host_weight;
  std::vector<float> memory_duty;
  bool operator==(const Interference&) const = default;
  /// Some compute is slowed beside its host's other devices' compute.
  [[nodiscard]] bool hosts_shared() const { return !together.empty(); }
  /// No rate below 1 (or no devices) and no host shared: overlap is free and simulate_fifo gives the
  /// timeline.
  [[nodiscard]] bool none() const;
  /// The least rate of any device and class (1 where none is below), at least 1e-6: a task slowed by
  /// interference takes at most 1 / this of its time.
  [[nodiscard]] double slowest_rate() const;
  [[nodiscard]] const InterferenceRates& of(std::int64_t device) const { return rates[of_device[static_cast<std::size_t>(device)]]; }
  [[nodiscard]] double share_of(std::uint32_t collective) const { return channel_share.empty() ? 1.0 : channel_share[collective]; }
  /// What compute on `device` keeps beside `collective` (of interference class `cls`), its channel
  /// share and size counted; and what the collective keeps while `device` computes.
  [[nodiscard]] double compute_beside(std::int64_t device, std::uint32_t collective, std::size_t cls) const {
    const std::uint32_t set = of_device[static_cast<std::size_t>(device)];
    const double rate = at_size.empty() ? rates[set].compute[cls] : at_size[set][collective].compute;
    return InterferenceRates::beside(rate, share_of(collective));
  }
  [[nodiscard]] double communication_beside(std::int64_t device, std::uint32_t collective, std::size_t cls) const {
    const std::uint32_t set = of_device[static_cast<std::size_t>(device)];
    return at_size.empty() ? rates[set].communication[cls] : at_size[set][collective].communication;
  }
};


}  // namespace parasim::sim
