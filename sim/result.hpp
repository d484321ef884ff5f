#pragma once
/// The Result of simulating one training step: time, throughput, utilisation, where the time goes,
/// memory by kind and whether it fits, communication volume. A plain value; sim/result_json writes
/// it in the versioned schema "parasim.result/1".
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/task_graph.hpp"
#include "strategies/memory.hpp"

namespace parasim::sim {

inline constexpr const char* kResultSchema = "parasim.result/1";

/// How one device spends the step, in seconds; the parts sum to the step time. Compute categories
/// count time the compute stream is busy; a communication category counts time it alone is in
/// flight while the compute stream idles (exposed communication); data loading counts time the
/// compute stream idles while only the input pipeline is at work (its loads, copies and broadcasts:
/// the exposed input wait); idle is the rest (pipeline bubble and waiting).
struct TimeBreakdown {
  std::array<double, kCategoryCount> seconds{};  ///< indexed by Category
  double idle_s = 0;
  bool operator==(const TimeBreakdown&) const = default;
  [[nodiscard]] double compute_s() const;
  [[nodiscard]] double exposed_comm_s() const;  ///< the communication categories (not data loading)
};

struct DeviceTimes {
  std::int64_t device = 0;
  std::int64_t stage = 0;
  TimeBreakdown breakdown;
  double comm_busy_s = 0;  ///< time any communication stream of the device is busy (overlapped or not)
  bool operator==(const DeviceTimes&) const = default;
};

/// The traffic of one class of links in the step (sim/links.hpp: the same accounting for both
/// backends).
struct LinkClassFigures {
  std::string link_class;  ///< "device port", "PCIe uplink", "NIC", "leaf uplink", "torus link", "WAN"
  std::int64_t links = 0;       ///< in the topology, each direction counted
  std::int64_t links_used = 0;  ///< of which some traffic crossed
  double bytes = 0;             ///< payload over all its links
  double max_load_s = 0;        ///< the most loaded link's wire bytes / bandwidth
  double max_busy_s = 0;        ///< the busiest link's time with a collective crossing it in flight
  double mean_busy_s = 0;       ///< the same, averaged over the links used
  std::int64_t bottleneck_phases = 0;  ///< collective phases run whose most loaded link is of this class
  bool operator==(const LinkClassFigures&) const = default;
};

/// One of the most loaded links of the step.
struct LinkFigures {
  std::string name;        ///< "node3/nic5 up", "leaf4 uplink down", ...
  std::string link_class;  ///< as in LinkClassFigures
  double bandwidth_bytes_per_s = 0;  ///< raw, per direction
  double bytes = 0;
  double load_s = 0;
  double busy_s = 0;
  bool operator==(const LinkFigures&) const = default;
};

/// Local-update training (strategies/local_update.hpp, sim/local_update.hpp): the outer step and what
/// it costs the WAN, beside synchronous data parallelism on the same devices. The Result's own step
/// figures are then one replica's inner step.
struct LocalUpdateFigures {
  std::string algorithm;  ///< "diloco", "streaming-diloco"
  std::int64_t replicas = 0;
  std::int64_t inner_steps = 0;
  std::int64_t fragments = 1;
  std::int64_t overlap_steps = 0;
  std::string compression;  ///< "none", "fp16", "int8", "top-k"
  std::string outer_optimizer;
  double inner_step_s = 0;   ///< the slowest replica's simulated inner step
  double outer_step_s = 0;   ///< H inner steps and the synchronisations, steady state
  double time_per_inner_step_s = 0;  ///< outer_step_s / H
  double samples_per_s = 0;  ///< over every replica
  double tokens_per_s = 0;
  double compute_utilisation = 0;    ///< inner-step compute over the outer step, mean over replicas
  double wan_utilisation = 0;        ///< the busiest WAN link's time in flight over the simulated span
  double wan_bytes_per_inner_step = 0;  ///< every WAN link, both directions, per inner step
  double pseudo_gradient_bytes = 0;     ///< one replica's whole pseudo-gradient on the wire
  /// The least WAN bandwidth per site (bytes/s, one direction) for 95% compute utilisation; 0 when
  /// no bandwidth reaches it.
  double wan_bandwidth_for_95_bytes_per_s = 0;
  double outer_state_bytes = 0;  ///< per device: the outer optimizer's anchor and momentum (in memory)
  double target_tokens = 0;      ///< asked for (0: not asked)
  double time_to_target_s = 0;
  /// Synchronous data parallelism on the same devices (the plan's data-parallel degree × replicas,
  /// one optimizer step per step): its step time and WAN bytes per step, simulated.
  double sync_step_s = 0;
  double sync_wan_bytes_per_step = 0;
  std::int64_t outer_tasks = 0;  ///< tasks of the outer simulation
  bool operator==(const LocalUpdateFigures&) const = default;
};

/// Federated training across devices (strategies/federated.hpp, sim/federated.hpp): the rounds over
/// the sampled clients. The Result's own step figures are then one client's local step.
struct FederatedFigures {
  std::string algorithm;         ///< "fedavg", "fedopt"
  std::string server_optimizer;  ///< "mean", "sgd-momentum", "adam", "yogi"
  std::int64_t population = 0;
  std::int64_t per_round = 0;
  std::int64_t local_steps = 0;
  std::int64_t rounds = 0;
  std::uint64_t seed = 0;
  std::string speed, upload_mbps, download_mbps, availability;  ///< the distributions, described
  double server_gbps = 0;
  double deadline_s = 0;  ///< 0: none
  double client_step_s = 0;  ///< one client's simulated local step at speed 1
  double model_bytes = 0;    ///< sent to a client and back each round
  double round_mean_s = 0, round_p50_s = 0, round_p90_s = 0, round_p99_s = 0;
  double unavailable_fraction = 0;  ///< of the sampled clients: did not respond
  double late_fraction = 0;         ///< of the sampled clients: missed the deadline
  double samples_per_round = 0;     ///< aggregated, mean
  double samples_per_s = 0;
  double server_bytes_per_round = 0;
  double server_link_utilisation = 0;
  double target_samples = 0;
  double time_to_target_s = 0;
  bool operator==(const FederatedFigures&) const = default;
};

/// The input pipeline (present when the scenario has "data"; sim/input_pipeline.hpp): what its
/// loaders read and move in a step, how long they take, and whether the step waits on them.
struct InputFigures {
  std::string placement;              ///< "naive", "per_device", "sharded"
  std::int64_t threads_per_host = 0;  ///< the threads each loading host runs (naive: 1)
  std::int64_t prefetch = 0;          ///< micro-batches the queue holds
  std::int64_t hosts_loading = 0;     ///< hosts that read samples
  std::int64_t samples_read = 0;      ///< read and decoded in a step, over every host
  double read_bytes = 0;              ///< from storage, every host
  double host_to_device_bytes = 0;    ///< copied from hosts' memory to devices
  double device_to_device_bytes = 0;  ///< broadcast inside tensor-parallel groups
  double network_bytes = 0;           ///< sent by the naive loader's host to other hosts' devices
  double loader_step_s = 0;           ///< the slowest host's loaders, for one step's samples
  bool storage_bound = false;         ///< that host's loaders wait on its storage's bandwidth, not on threads
  /// The verdict (sim/input_verdict.hpp), when it was asked for: the same step with loaders that
  /// take no time, whether the step is input-bound (longer by more than kInputBoundTolerance), and
  /// the fewest threads per host that make it not (0: none up to kMaxLoaderThreads helps).
  bool verdict = false;
  double unbounded_step_s = 0;
  bool input_bound = false;
  std::int64_t fewest_threads = 0;
  double step_at_fewest_s = 0;
  bool operator==(const InputFigures&) const = default;
};

struct Result {
  std::string scenario;
  std::string variant;        ///< "base" or the what-if's name
  std::string model;
  std::string plan;           ///< the plan's description
  std::string backend;        ///< "analytical" or "simgrid": which engine produced every time figure
  std::string profile;        ///< profile name
  std::string profile_origin; ///< datasheet or calibrated, and from where
  /// The fused attention implementation whose curves timed the attention ("cudnn", ...; "gemm curve"
  /// on a device without attention curves); empty for a model without fused attention.
  std::string attention_kernel;
  /// The framework whose gathers and gradient buckets the prediction assumes
  /// (strategies/implementation.hpp: "megatron-core", ...), and what that means in a line.
  std::string implementation;
  std::string implementation_detail;
  std::string device_kind;
  std::int64_t devices = 0;
  std::int64_t tasks = 0;
  /// The data-parallel replica shortcut: one replica was simulated and stands for all;
  /// per-device figures cover the simulated devices, whole-step figures the whole cluster.
  bool replica_shortcut = false;
  std::int64_t simulated_devices = 0;

  double step_time_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     ///< without recomputation (the numerator of MFU)
  double hardware_flops_per_step = 0;  ///< with recomputation (the numerator of HFU)
  double mfu = 0;  ///< model FLOPs / (step time × devices × peak)
  double hfu = 0;
  double model_tflops_per_device = 0;  ///< model FLOPs / step time / devices, in TFLOP/s
  double bubble_fraction = 0;          ///< mean idle time over the step time

  /// Compute–communication interference (sim/interference.hpp, at the profile's rates): the compute
  /// time the kernels lost to collectives running beside them, mean over the devices that computed,
  /// and what it cost the step: the step time less that of the same step with overlap free. Both 0
  /// when the profile gives no rates below 1.
  double interference_compute_s = 0;
  double interference_step_s = 0;

  TimeBreakdown breakdown;  ///< the mean over the simulated devices
  std::vector<DeviceTimes> per_device;  ///< the simulated devices

  std::vector<strategies::StageMemory> memory;  ///< peak per pipeline stage
  double memory_capacity_bytes = 0;  ///< usable per device (capacity − runtime reserve)
  bool fits = true;
  std::int64_t peak_memory_stage = 0;

  double intra_node_bytes = 0;  ///< sent over intra-node links per step, summed over devices
  double inter_node_bytes = 0;  ///< sent over the inter-node network per step, summed over devices

  std::vector<LinkClassFigures> link_classes;  ///< the classes the cluster's topology has
  std::vector<LinkFigures> busiest_links;      ///< the most loaded links, most loaded first
  /// Links on which collectives were in flight at the same time (the analytical backend does not
  /// model their contention: each collective gets the whole link; the simgrid backend shares it).
  std::int64_t shared_links = 0;
  /// Sentences about what the figures do not show: topology fields that have no effect on this
  /// scenario, contention the backend does not see.
  std::vector<std::string> notes;

  /// Local-update training: present when the scenario has "local_update".
  std::optional<LocalUpdateFigures> local_update;
  /// Federated training: present when the scenario has "federated".
  std::optional<FederatedFigures> federated;
  /// The input pipeline: present when the scenario has "data".
  std::optional<InputFigures> input;

  bool operator==(const Result&) const = default;
};

}  // namespace parasim::sim
