#pragma once
/// The real data loader (issue 18; the seed text's `DataLoader(file_path, physical_mesh,
/// sharding_specs)`): an iterator over a plan's micro-batches, each one micro-batch of every device
/// of its host, holding exactly the samples the plan gives that device (data/placement.hpp) — read
/// from a dataset on disk (data/dataset.hpp), decoded, augmented (data/augment.hpp) and copied to the
/// device's buffer by several threads, a bounded number of micro-batches ahead of the consumer.
///
/// An epoch is a permutation of the dataset (seeded); step s of the epoch takes its positions
/// s·G … (s + 1)·G − 1, and each data-parallel replica its micro-batches of them as Megatron-LM's
/// sampler orders them; the last partial step of an epoch is dropped, so no sample is taken twice
/// in an epoch. Under each placement:
///  - naive: one thread reads and decodes every sample of the step and copies it to every device,
///    each keeping its own (the seed's baseline);
///  - per_device: each device's samples are read and decoded for it alone (a loader per rank);
///  - sharded: each sample the host's devices need is read and decoded once and copied to each
///    device that takes it (a tensor-parallel group's others from its first device's copy).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/dataset.hpp"
#include "data/placement.hpp"
#include "strategies/plan.hpp"

namespace parasim::data {

struct LoaderOptions {
  Placement placement = Placement::Sharded;
  std::int64_t threads = 1;         ///< decoding threads (naive: 1 whatever this says)
  std::int64_t prefetch = 2;        ///< micro-batches ready or in the making ahead of the consumer
  std::uint64_t seed = 1;           ///< the epochs' permutations and the augmentation
  std::int64_t image_size = 32;     ///< the side of the tensors delivered
  std::int64_t devices_per_host = 1;
  std::int64_t host = 0;            ///< the host whose devices this loader feeds
  /// The threads start a micro-batch only when asked (request()), not `prefetch` ahead: for a
  /// consumer that schedules the loads itself (the executor runs a step's load tasks, the lowering
  /// having placed them; exec/executor.hpp).
  bool on_demand = false;
};

/// One device's micro-batch: empty when the plan gives the device no input (a middle pipeline stage
/// under the sharded placement, or a device of another host).
struct DeviceBatch {
  bool inputs = false;  ///< it receives the images (the first pipeline stage)
  bool labels = false;  ///< it receives the classes (the last stage)
  std::vector<std::int64_t> samples;  ///< dataset indices, in the micro-batch's order
  std::vector<float> images;          ///< samples × 3 × side × side, when `inputs`
  std::vector<std::int64_t> classes;  ///< per sample, when `labels`
  /// Naive: the other replicas' samples of the micro-batch, which the loader sends the device too
  /// and the device does not keep (the broadcast's traffic into its memory).
  std::vector<float> received;
};

/// One micro-batch of every device of the plan.
struct MicroBatchSet {
  std::int64_t epoch = 0, step = 0, micro_batch = 0;
  std::vector<DeviceBatch> devices;  ///< indexed by device id
};

/// What the loader did so far.
struct LoaderStats {
  std::int64_t samples_decoded = 0;
  double read_bytes = 0;    ///< from storage
  double copied_bytes = 0;  ///< to devices' buffers, the copies a device discards (naive) included
};

class DataLoader {
 public:
  /// Opens the dataset at `path` and starts the threads. Throws InputError for a dataset that cannot
  /// be read (Dataset::open) or is smaller than one step, and for options out of range (zero
  /// threads, a prefetch of zero).
  DataLoader(const std::string& path, const strategies::Plan& plan, LoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  [[nodiscard]] const Dataset& dataset() const { return dataset_; }
  [[nodiscard]] std::int64_t steps_per_epoch() const { return steps_per_epoch_; }
  /// The next micro-batch, waiting for it; it stays valid until the next call, which hands its
  /// buffers back to be filled again (as a pinned-memory pool does: no fresh allocation, zero-fill
  /// or page faults per micro-batch, and no race between the consumer giving a buffer back and the
  /// threads starting the next micro-batch). Rethrows what a thread met (a corrupt sample, with its
  /// index and file).
  [[nodiscard]] const MicroBatchSet& next();
  /// On demand: asks the threads for the next micro-batch, and waits until it is made (the one after
  /// those asked for before). Without `on_demand`: waits for the oldest one not yet taken.
  void request_and_wait();
  [[nodiscard]] LoaderStats stats() const;

 private:
  struct Target {
    std::int64_t device = 0;
    std::int64_t slot = 0;  ///< in its micro-batch; or, when `discarded`, in its `received` buffer
    bool discarded = false;  ///< a naive copy the device does not keep
  };
  struct Job {
    std::int64_t position = 0;  ///< in the step
    std::vector<Target> targets;
  };
  struct Unit {
    MicroBatchSet set;
    std::vector<std::int64_t> dataset_index;  ///< per job
    std::vector<Job> jobs;
    std::size_t next_job = 0;
    std::size_t remaining = 0;
  };

  void open_unit();  ///< under mutex_
  void run_worker();
  void run_job(Unit& unit, std::size_t job, float* scratch, RawSample& raw, Image& image);

  Dataset dataset_;
  const strategies::Plan plan_;
  LoaderOptions options_;
  LoadPlan load_;
  std::int64_t steps_per_epoch_ = 0;
  std::int64_t sample_floats_ = 0;
  std::vector<std::int64_t> served_;  ///< the devices of this host that receive something

  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Unit> open_;
  std::vector<MicroBatchSet> spare_;  ///< buffers handed back, to fill again
  MicroBatchSet current_;             ///< what next() returned last
  bool has_current_ = false;
  std::int64_t next_unit_ = 0;
  std::int64_t requested_ = 0;  ///< on demand: micro-batches asked for
  std::int64_t taken_ = 0;      ///< micro-batches next() has returned
  std::int64_t permutation_epoch_ = -1;
  std::vector<std::int64_t> permutation_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<std::int64_t> decoded_{0};
  std::atomic<std::int64_t> read_bytes_{0}, copied_bytes_{0};
  std::vector<std::thread> threads_;
};

/// Copies `count` floats into a device's buffer the way a transfer to a device does: with
/// streaming (non-temporal) stores, which bypass the CPU's caches, so the copy costs the memory's
/// write bandwidth whatever else the thread's caches hold, and evicts nothing the decoder uses.
void copy_to_device(float* dst, const float* src, std::size_t count);

/// Keeps the calling thread, the loader's thread `t`, on one core: core t (modulo their count) of
/// those the process may run on. The scheduler then does not move a loader thread, and its warm
/// caches, each time the consumer wakes; and a measurement of the loader's threads
/// (calibrate/loader.hpp) runs on the cores the loader will.
void pin_loader_thread(std::int64_t t);

/// Fixes glibc's malloc threshold for a mapping of its own at 16 KiB (mallopt M_MMAP_THRESHOLD,
/// process-wide, once; true when glibc took it): the loader's time per sample otherwise follows
/// where its and its decoder's buffers fall within their pages, in states up to 45% apart from
/// run to run (loader.cpp says what was measured). Called by every DataLoader.
bool fix_buffer_placement();

/// The permutation of 0 … n − 1 that epoch `epoch` takes the samples in (Fisher–Yates over
/// SplitMix64 draws from the seed).
[[nodiscard]] std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

}  // namespace parasim::data
