#pragma once
/// The input pipeline of a simulated step (issue 18; the seed text on distributed data loading): the
/// loaders of each host read and decode the step's samples, a bounded queue holds the micro-batches
/// made ahead, each device copies its share from its host's memory, and under the sharded placement
/// a tensor-parallel group's first device broadcasts it to the others.
///
/// The lowering (sim/lower/unit_emitter.hpp) turns it into tasks on two more streams of every
/// device, `loader` and `h2d`:
///  - a Load task per micro-batch on the loader stream: the time the device's host takes to read and
///    decode one micro-batch's share of the samples the host reads in a step (data/placement.hpp:
///    every device that waits on the host waits for all of it, the host's threads working on every
///    device's share at once);
///  - a Copy task per micro-batch on the h2d stream, after its load and after the device's previous
///    kernel (PyTorch's `.cuda()` of a batch is issued on the compute stream as the forward starts);
///  - the forward of the micro-batch waits for its copy (and, sharded, for the broadcast).
/// The queue holds `prefetch` micro-batches: in the steady state of training the first `prefetch`
/// of a step were loaded during the step before, and the load of micro-batch j + prefetch starts once
/// micro-batch j has left the queue (its copy is done). The loads of the next step's first
/// micro-batches are made in this step, so a step whose loaders are slower than its compute lasts
/// as long as its loaders take for one step's samples: m loads one after the other.
#include <cstdint>
#include <optional>
#include <vector>

#include "common/sim_time.hpp"
#include "data/placement.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

struct Cluster;

/// A scenario's data section, resolved against its model (the bytes a sample decodes to).
struct InputPipeline {
  data::Placement placement = data::Placement::Sharded;
  data::SampleBytes bytes;  ///< per sample: stored, decoded inputs, decoded labels
  /// Loader threads per host (the naive placement has one, on the first host, whatever this says).
  std::int64_t threads_per_host = 1;
  std::int64_t prefetch = 2;          ///< micro-batches the queue holds
  double decode_s_per_sample = 0;     ///< one thread's decode and augment time for one sample
  /// Measured (`parasim calibrate --backend loader`): the time per sample of each thread while 1, 2,
  /// … threads decode at once (a host's cores share its memory and caches, and a virtual machine's
  /// cores its host's); a host loading on T threads takes entry min(T, size) − 1 in place of
  /// decode_s_per_sample. Empty: decode_s_per_sample at every thread count.
  std::vector<double> decode_s_at_threads;
  double storage_bytes_per_s = 0;     ///< a host's read bandwidth from its storage
  double file_latency_s = 0;          ///< before each sample's read (a thread waits it)
  double host_to_device_bytes_per_s = 0;  ///< one device's copy bandwidth from its host's memory
  /// When the devices' memory is the host's (a CPU cluster), the loader threads copy each tensor
  /// into every device buffer that takes it, at this rate each, as part of a sample's work; there is
  /// then no copy task and no broadcast. 0: the devices copy (DMA over PCIe, beside the loaders).
  double loader_copy_bytes_per_s = 0;
  bool operator==(const InputPipeline&) const = default;
};

/// What the loaders cost in one step: the bytes (data::LoadPlan) and each device's task durations
/// per micro-batch.
struct LoaderCosts {
  data::LoadPlan load;
  std::int64_t threads = 1;            ///< the threads each loading host runs (1 under naive)
  std::int64_t prefetch = 1;           ///< micro-batches the queue holds
  std::vector<double> host_step_s;     ///< per host: its loaders' time for one step's samples
  std::vector<bool> host_storage_bound;  ///< per host: its storage's bandwidth, not its threads, bounds it
  std::vector<Picoseconds> load_ps;    ///< per device: one micro-batch's Load task (0: it loads nothing)
  std::vector<Picoseconds> copy_ps;    ///< per device: one micro-batch's Copy task (0: no copy)
  std::vector<double> broadcast_bytes; ///< per device: a micro-batch's bytes it receives from its tensor-parallel group's first device
};

/// One thread's decode and augment time for a sample while `threads` threads decode at once.
[[nodiscard]] double decode_s(const InputPipeline& in, std::int64_t threads);

/// Seconds `threads` threads of one host take to read and decode `samples` samples: each thread waits
/// a file's latency and decodes one sample at a time while the host's storage streams every
/// sample's stored bytes; the slower of the two bounds the host.
[[nodiscard]] double host_load_s(const InputPipeline& in, double samples, std::int64_t threads);

/// The loader costs of one step of `plan` on `cluster` (hosts are its nodes). The naive placement's
/// first host sends each remote device its copy over its NICs, one after the other.
[[nodiscard]] LoaderCosts loader_costs(const InputPipeline& in, const strategies::Plan& plan, const Cluster& cluster);

}  // namespace parasim::sim
