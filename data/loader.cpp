#include "data/loader.hpp"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/error.hpp"
#include "data/augment.hpp"

namespace parasim::data {
namespace {

InputError option_error(const std::string& what) { return InputError("<loader options>", 0, 0, "", what); }

}  // namespace

void copy_to_device(float* dst, const float* src, std::size_t count) {
#if defined(__SSE__)
  std::size_t i = 0;
  // Up to a 16-byte boundary of the destination one float at a time, then four at a time.
  for (; i < count && reinterpret_cast<std::uintptr_t>(dst + i) % 16 != 0; ++i) dst[i] = src[i];
  for (; i + 4 <= count; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
  for (; i < count; ++i) dst[i] = src[i];
  _mm_sfence();
#else
  std::memcpy(dst, src, count * sizeof(float));
#endif
}

void pin_loader_thread(std::int64_t t) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cores.push_back(c);
  if (cores.empty()) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cores[static_cast<std::size_t>(t) % cores.size()], &one);
  (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(sample_seed(seed, epoch, -1 - i) % static_cast<std::uint64_t>(i + 1));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

bool fix_buffer_placement() {
  // glibc's malloc puts a buffer at an offset within its page that follows what the process
  // allocated and freed before, and takes buffers below a threshold (which it raises as large
  // ones are freed) from its heap. The loader's time per sample follows those offsets: about 77 or
  // about 112 µs a sample on one thread of an AMD EPYC VM, 109 to 149 µs on a Xeon VM, from run to
  // run of the same binary on the same data, each run keeping its state (docs/validation.md, the
  // data loader). Aligning the loader's own buffers in code did not remove it: the rest of the
  // heap's layout (libjpeg-turbo's per-image pool, 16,000 bytes and more from malloc, among it)
  // takes part. A fixed threshold (mallopt(3), M_MMAP_THRESHOLD; fixing it also stops the raising)
  // gives each buffer of 16 KiB or more that the heap's free space cannot hold a page-aligned
  // mapping of its own — about seven a loader (strace: a thread's sample and pixels, the devices'
  // batches) — and leaves the heap one layout from loader to loader: eight calibrations on the
  // Xeon put all 24 points within 10% (22 within 4.6%, the worst −9.4%), where eight without it,
  // interleaved with them, put 9 of 24 outside 15% (−22.6% to +26.0%). 16 KiB: the smallest
  // threshold measured (64 KiB left runs in either state). Process-wide, set once (a function's
  // static is initialised once, thread-safely), by the first loader; true when glibc took it.
  static const bool taken = mallopt(M_MMAP_THRESHOLD, 16 * 1024) == 1;
  return taken;
}

DataLoader::DataLoader(const std::string& path, const strategies::Plan& plan, LoaderOptions options)
    : dataset_(Dataset::open(path)), plan_(plan), options_(options) {
  fix_buffer_placement();
  if (options_.threads < 1) throw option_error("found " + std::to_string(options_.threads) + " loader threads; expected at least 1");
  if (options_.prefetch < 1) throw option_error("found a prefetch depth of " + std::to_string(options_.prefetch) + "; expected at least 1 micro-batch");
  if (options_.image_size < 1) throw option_error("found an image side of " + std::to_string(options_.image_size) + "; expected at least 1");
  if (options_.devices_per_host < 1) throw option_error("found " + std::to_string(options_.devices_per_host) + " devices a host; expected at least 1");
  if (dataset_.size() < plan_.global_batch)
    throw InputError(path, 0, 0, "", "the dataset holds " + std::to_string(dataset_.size()) + " samples, fewer than a step's global batch of " +
                                         std::to_string(plan_.global_batch));
  steps_per_epoch_ = dataset_.size() / plan_.global_batch;
  sample_floats_ = 3 * options_.image_size * options_.image_size;
  const double sample_bytes = static_cast<double>(sample_floats_) * sizeof(float) + sizeof(std::int64_t);
  load_ = plan_loading(plan_, options_.devices_per_host, SampleBytes{0, sample_bytes - sizeof(std::int64_t), sizeof(std::int64_t)}, options_.placement);
  for (std::int64_t d = 0; d < plan_.mesh.device_count(); ++d) {
    const DeviceFeed& f = load_.devices[static_cast<std::size_t>(d)];
    if (d / options_.devices_per_host == options_.host && (f.host_bytes > 0 || f.peer_bytes > 0)) served_.push_back(d);
  }
  const std::int64_t threads = options_.placement == Placement::Naive ? 1 : options_.threads;
  for (std::int64_t t = 0; t < threads; ++t) threads_.emplace_back([this, t] {
    pin_loader_thread(t);
    run_worker();
  });
}

DataLoader::~DataLoader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void DataLoader::open_unit() {
  const std::int64_t m = plan_.micro_batches, mb = plan_.micro_batch;
  const std::int64_t u = next_unit_++;
  Unit& unit = open_.emplace_back();
  if (!spare_.empty()) {
    unit.set = std::move(spare_.back());
    spare_.pop_back();
  }
  unit.set.epoch = u / (steps_per_epoch_ * m);
  unit.set.step = u / m % steps_per_epoch_;
  unit.set.micro_batch = u % m;
  if (permutation_epoch_ != unit.set.epoch) {
    permutation_ = epoch_permutation(dataset_.size(), options_.seed, unit.set.epoch);
    permutation_epoch_ = unit.set.epoch;
  }
  unit.set.devices.resize(static_cast<std::size_t>(plan_.mesh.device_count()));
  for (DeviceBatch& b : unit.set.devices) b.samples.clear();
  // Each served device's micro-batch: its replica's positions j·mb … (j + 1)·mb − 1 of the step.
  std::vector<std::pair<std::int64_t, Target>> wanted;  // (position in the step, where it goes)
  for (const std::int64_t d : served_) {
    const DeviceFeed& f = load_.devices[static_cast<std::size_t>(d)];
    DeviceBatch& b = unit.set.devices[static_cast<std::size_t>(d)];
    b.inputs = f.inputs;
    b.labels = f.labels;
    for (std::int64_t k = 0; k < mb; ++k) {
      const std::int64_t position = f.samples[static_cast<std::size_t>(unit.set.micro_batch * mb + k)];
      b.samples.push_back(permutation_[static_cast<std::size_t>(unit.set.step * plan_.global_batch + position)]);
      wanted.push_back({position, Target{d, k}});
    }
    if (b.inputs) b.images.resize(static_cast<std::size_t>(mb * sample_floats_));
    if (b.labels) b.classes.resize(static_cast<std::size_t>(mb));
  }
  std::stable_sort(wanted.begin(), wanted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  switch (options_.placement) {
    case Placement::PerDevice:
      // Every device decodes its own samples.
      for (const auto& [position, target] : wanted) unit.jobs.push_back({position, {target}});
      break;
    case Placement::Sharded:
      // Each sample once, to every device that takes it.
      for (const auto& [position, target] : wanted) {
        if (unit.jobs.empty() || unit.jobs.back().position != position) unit.jobs.push_back({position, {}});
        unit.jobs.back().targets.push_back(target);
      }
      break;
    case Placement::Naive: {
      // Every sample of the micro-batch (every replica's) to every device; each keeps its own.
      std::vector<std::int64_t> positions;
      for (std::int64_t r = 0; r < plan_.dp(); ++r) {
        const std::vector<std::int64_t> mine = replica_samples(plan_.global_batch, mb, plan_.dp(), r);
        positions.insert(positions.end(), mine.begin() + unit.set.micro_batch * mb, mine.begin() + (unit.set.micro_batch + 1) * mb);
      }
      std::sort(positions.begin(), positions.end());
      std::vector<std::int64_t> discarded(static_cast<std::size_t>(plan_.mesh.device_count()), 0);
      for (const std::int64_t position : positions) {
        Job job{position, {}};
        for (const std::int64_t d : served_) {
          Target t{d, 0, true};
          for (const auto& [p, target] : wanted)
            if (p == position && target.device == d) t = target;
          if (t.discarded) t.slot = discarded[static_cast<std::size_t>(d)]++;
          job.targets.push_back(t);
        }
        unit.jobs.push_back(std::move(job));
      }
      for (const std::int64_t d : served_)
        unit.set.devices[static_cast<std::size_t>(d)].received.resize(static_cast<std::size_t>(discarded[static_cast<std::size_t>(d)] * sample_floats_));
      break;
    }
  }
  for (const Job& job : unit.jobs) unit.dataset_index.push_back(permutation_[static_cast<std::size_t>(unit.set.step * plan_.global_batch + job.position)]);
  unit.remaining = unit.jobs.size();
}

void DataLoader::run_worker() {
  std::vector<float> scratch_store(static_cast<std::size_t>(sample_floats_));
  float* scratch = scratch_store.data();
  RawSample raw;
  Image image;
  std::unique_lock lock(mutex_);
  while (!stop_) {
    Unit* unit = nullptr;
    for (Unit& u : open_)
      if (u.next_job < u.jobs.size()) {
        unit = &u;
        break;
      }
    if (!unit) {
      const bool may_open = options_.on_demand ? next_unit_ < requested_ : static_cast<std::int64_t>(open_.size()) < options_.prefetch;
      if (may_open) {
        open_unit();
        if (open_.back().jobs.empty()) done_cv_.notify_all();  // a micro-batch with nothing to load is ready at once
        work_cv_.notify_all();                                  // its jobs are for every thread
        continue;
      }
      work_cv_.wait(lock);
      continue;
    }
    const std::size_t job = unit->next_job++;
    lock.unlock();
    try {
      run_job(*unit, job, scratch, raw, image);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      stop_ = true;
      done_cv_.notify_all();
      work_cv_.notify_all();
      return;
    }
    lock.lock();
    if (--unit->remaining == 0) done_cv_.notify_all();
  }
}

void DataLoader::run_job(Unit& unit, std::size_t job, float* scratch, RawSample& raw, Image& image) {
  const Job& j = unit.jobs[job];
  const std::int64_t index = unit.dataset_index[job];
  dataset_.read(index, raw);
  dataset_.decode(index, raw, image);
  augment(image, options_.image_size, sample_seed(options_.seed, unit.set.epoch, index), scratch);
  decoded_.fetch_add(1, std::memory_order_relaxed);
  read_bytes_.fetch_add(static_cast<std::int64_t>(dataset_.stored_bytes(index)), std::memory_order_relaxed);
  const auto floats = static_cast<std::size_t>(sample_floats_);
  std::int64_t copied = 0;
  for (const Target& t : j.targets) {
    DeviceBatch& b = unit.set.devices[static_cast<std::size_t>(t.device)];
    if (t.discarded) {
      // A naive copy the device does not keep: it still crosses into the device's memory.
      copy_to_device(b.received.data() + static_cast<std::size_t>(t.slot) * floats, scratch, floats);
      copied += static_cast<std::int64_t>(floats * sizeof(float));
      continue;
    }
    if (b.inputs) {
      copy_to_device(b.images.data() + static_cast<std::size_t>(t.slot) * floats, scratch, floats);
      copied += static_cast<std::int64_t>(floats * sizeof(float));
    }
    if (b.labels) {
      b.classes[static_cast<std::size_t>(t.slot)] = raw.label;
      copied += static_cast<std::int64_t>(sizeof(std::int64_t));
    }
  }
  copied_bytes_.fetch_add(copied, std::memory_order_relaxed);
}

const MicroBatchSet& DataLoader::next() {
  std::unique_lock lock(mutex_);
  // The last one's buffers go back before a thread can start the next micro-batch.
  if (has_current_) spare_.push_back(std::move(current_));
  has_current_ = false;
  done_cv_.wait(lock, [&] { return error_ || (!open_.empty() && open_.front().remaining == 0 && open_.front().next_job == open_.front().jobs.size()); });
  if (error_) std::rethrow_exception(error_);
  current_ = std::move(open_.front().set);
  has_current_ = true;
  open_.pop_front();
  ++taken_;
  lock.unlock();
  work_cv_.notify_all();
  return current_;
}

void DataLoader::request_and_wait() {
  std::unique_lock lock(mutex_);
  std::int64_t unit = taken_;  // the oldest not yet taken
  if (options_.on_demand) {
    unit = requested_++;
    work_cv_.notify_all();
  }
  // Micro-batch `unit` is open_[unit − taken_] once opened; it is made when its jobs are all done.
  done_cv_.wait(lock, [&] {
    if (error_) return true;
    const std::int64_t at = unit - taken_;
    if (at < 0) return true;  // already taken
    if (at >= static_cast<std::int64_t>(open_.size())) return false;
    const Unit& u = open_[static_cast<std::size_t>(at)];
    return u.remaining == 0 && u.next_job == u.jobs.size();
  });
  if (error_) std::rethrow_exception(error_);
}

LoaderStats DataLoader::stats() const {
  return {decoded_.load(), static_cast<double>(read_bytes_.load()), static_cast<double>(copied_bytes_.load())};
}

}  // namespace parasim::data
