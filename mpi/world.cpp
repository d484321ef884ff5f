// libparasim_mpi.so (mpi/backend.hpp): MPI's start and end, the search's executor over the ranks, and
// `parasim calibrate --backend mpi`'s measurements; `parasim execute`'s transports are in
// execute_transport.cpp. Compiled into the plugin only (cli/CMakeLists.txt).
#include "mpi/world.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <thread>
#include <vector>

#include "calibrate/source_text.hpp"
#include "common/error.hpp"
#include "exec/compute_activity.hpp"
#include "exec/host_memory.hpp"
#include "exec/kernels.hpp"
#include "mpi/polling.hpp"

namespace parasim::mpi {
namespace {

class MpiExecutor final : public strategies::search::Executor {
 public:
  MpiExecutor(int rank, int size, unsigned threads) : rank_(rank), size_(size), local_(threads) {}

  std::vector<std::byte> map(std::size_t n, std::size_t record_bytes, const strategies::search::RecordTask& task,
                             const strategies::search::ProgressFn& progress) const override {
    const auto ranks = static_cast<std::size_t>(size_), me = static_cast<std::size_t>(rank_);
    // Round-robin: rank r runs indices r, r + size, r + 2·size, … (neighbouring candidates cost
    // alike, so each rank gets a fair share of the expensive ones).
    const std::size_t mine = n > me ? (n - me + ranks - 1) / ranks : 0;
    std::vector<std::byte> local;
    std::exception_ptr failure;
    try {
      // Only rank 0 reports progress, scaled to the whole (its share is 1/size of the work).
      const strategies::search::ProgressFn scaled =
          progress && rank_ == 0 ? strategies::search::ProgressFn([&](std::size_t done, std::size_t) {
            progress(std::min(n, done * ranks), n);
          })
                                 : strategies::search::ProgressFn();
      local = local_.map(
          mine, record_bytes, [&](std::size_t k, std::byte* out) { task(me + k * ranks, out); }, scaled);
    } catch (...) {
      failure = std::current_exception();
      local.assign(mine * record_bytes, std::byte{0});
    }
    // Every rank learns whether any failed before the gather, so none waits for a rank that left.
    int failed = failure ? rank_ + 1 : 0, first_failed = 0;
    MPI_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failure) std::rethrow_exception(failure);
    if (first_failed != 0)
      throw PlanError("MPI rank " + std::to_string(first_failed - 1) + " failed while evaluating candidates; its message says why");

    std::vector<int> counts(ranks), displs(ranks);
    std::size_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::size_t share = n > r ? (n - r + ranks - 1) / ranks : 0;
      PARASIM_CHECK(share * record_bytes <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "MPI gather fits in an int count");
      counts[r] = static_cast<int>(share * record_bytes);
      displs[r] = static_cast<int>(total);
      total += share * record_bytes;
    }
    std::vector<std::byte> gathered(total);
    MPI_Allgatherv(local.data(), counts[me], MPI_BYTE, gathered.data(), counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::byte> records(n * record_bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = i % ranks, k = i / ranks;
      std::memcpy(records.data() + i * record_bytes, gathered.data() + static_cast<std::size_t>(displs[r]) + k * record_bytes, record_bytes);
    }
    if (progress && rank_ == 0) progress(n, n);
    return records;
  }

 private:
  int rank_, size_;
  strategies::search::ThreadExecutor local_;
};

/// One collective of `test` over MPI_COMM_WORLD on `count` floats (for the gathers and scatters a
/// whole share per rank), as `parasim execute` runs it: the non-blocking call polled to completion
/// (mpi/polling.hpp), in place where the executor's is (mpi/execute_transport.cpp: the all-gather
/// into `out`, each rank's share already in it; the reduce-scatter over `in`): out of place, a rank
/// would also copy its own share. sendrecv sends to the next rank while receiving from the previous.
/// `in` holds `count` floats, `out` as many.
void run_polled(calibrate::NcclTest test, int count, float* in, float* out, int rank, int size) {
  MPI_Request requests[2];
  int active = 1;
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  switch (test) {
    case calibrate::NcclTest::AllReduce:
      MPI_Iallreduce(MPI_IN_PLACE, in, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
      break;
    case calibrate::NcclTest::AllGather:
      MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, count / size, MPI_FLOAT, MPI_COMM_WORLD, &requests[0]);
      break;
    case calibrate::NcclTest::ReduceScatter:
      MPI_Ireduce_scatter_block(MPI_IN_PLACE, in, count / size, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
      break;
    case calibrate::NcclTest::SendRecv:
      MPI_Irecv(out, count, MPI_FLOAT, previous, 0, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(in, count, MPI_FLOAT, next, 0, MPI_COMM_WORLD, &requests[1]);
      active = 2;
      break;
  }
  for (int i = 0; i < active; ++i) wait_polling(requests[i]);
}

/// The MPI call run_polled makes for `test`, for the profile's source.
const char* mpi_call(calibrate::NcclTest test) {
  switch (test) {
    case calibrate::NcclTest::AllReduce: return "MPI_Iallreduce";
    case calibrate::NcclTest::AllGather: return "MPI_Iallgather in place";
    case calibrate::NcclTest::ReduceScatter: return "MPI_Ireduce_scatter_block in place";
    case calibrate::NcclTest::SendRecv: return "MPI_Isend and MPI_Irecv";
  }
  return "MPI_Iallreduce";
}

double mean_of(const std::vector<double>& v) {
  PARASIM_CHECK(!v.empty(), "a mean of at least one time");
  double sum = 0;
  for (const double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

World::World(bool threads) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(nullptr, nullptr, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    if (threads && provided < MPI_THREAD_MULTIPLE) {
      MPI_Finalize();
      throw PlanError("this MPI library gives thread level " + std::to_string(provided) + ", and `parasim execute` needs MPI_THREAD_MULTIPLE (" +
                      std::to_string(MPI_THREAD_MULTIPLE) + "): its stream threads call MPI at once");
    }
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // A doorbell a rank, in a window the ranks of each host share: a rank that posts an operation
  // wakes the others' waiting threads, which otherwise sleep up to 2 ms (mpi/polling.hpp). A cache
  // line each, so that ringing one rank's bell does not move the line another's waiter reads.
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host_);
  int host_size = 1, host_rank = 0;
  MPI_Comm_size(host_, &host_size);
  MPI_Comm_rank(host_, &host_rank);
  // Each rank of this host a core of its own: a waiting thread may then poll every 10 us while its
  // rank computes nothing (mpi/polling.hpp). More ranks than cores (a federated server beside its
  // clients on 2 cores) would wake on cores others compute on.
  set_idle_polling(static_cast<unsigned>(host_size) <= std::max(1u, std::thread::hardware_concurrency()));
  if (host_size < 2) {
    MPI_Comm_free(&host_);
    return;
  }
  constexpr MPI_Aint kLine = 64;
  void* mine = nullptr;
  MPI_Win_allocate_shared(kLine, 1, MPI_INFO_NULL, host_, &mine, &doorbells_);
  new (mine) Doorbell(0);
  MPI_Barrier(host_);  // every bell constructed before any is rung
  std::vector<Doorbell*> others;
  for (int r = 0; r < host_size; ++r) {
    if (r == host_rank) continue;
    MPI_Aint bytes = 0;
    int unit = 0;
    void* bell = nullptr;
    MPI_Win_shared_query(doorbells_, r, &bytes, &unit, &bell);
    PARASIM_CHECK(bell != nullptr && bytes >= static_cast<MPI_Aint>(sizeof(Doorbell)), "each rank of a host has its doorbell");
    others.push_back(static_cast<Doorbell*>(bell));
  }
  use_doorbells(static_cast<Doorbell*>(mine), std::move(others));
}

World::~World() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  use_doorbells(nullptr, {});
  if (doorbells_ != MPI_WIN_NULL) MPI_Win_free(&doorbells_);
  if (host_ != MPI_COMM_NULL) MPI_Comm_free(&host_);
  MPI_Finalize();
}

std::unique_ptr<strategies::search::Executor> World::executor(unsigned threads) const {
  if (size_ > 1) return std::make_unique<MpiExecutor>(rank_, size_, threads);
  return std::make_unique<strategies::search::ThreadExecutor>(threads);
}

calibrate::NcclTestsLog World::collective_sweep(calibrate::NcclTest test, const std::vector<double>& bytes, int warmup, int iterations) const {
  PARASIM_CHECK(iterations >= 1 && warmup >= 0, "a collective sweep runs under MPI");
  calibrate::NcclTestsLog log;
  log.test = test;
  log.ranks = size_;
  log.latency_from_fastest_row = true;  // polled waits: small sizes noisier than their differences
  // How late a rank arrives at each call of the sweep (below), said once in the log's timing.
  constexpr double kLateBy = 200e-6;
  // Each call on a region of a pool no call has touched for at least kColdPool bytes of others, so
  // that its data comes from memory, not cache, as a step's do: a step's collectives run on buffers
  // its compute has since pushed out of cache (the executor's lane buffers are touched only by
  // them). Timed on one buffer, the sweep ran from cache: on this project's 2-core VM a polled
  // 11.1 MB all-reduce took 5.1-5.2 ms call after call, 8.3-8.5 ms after 256 MiB of other memory
  // had been touched, and 4 MiB 1.8 and 2.9-3.0 ms; 33.8 MB, past the cache, 21.0-22.0 and 23.0-24.0
  // ms. In a ResNet-18 DP 2 step the last 11.1 MB gradient bucket took 12.1-12.3 ms against the
  // warm sweep's 6.8 ms (docs/validation.md).
  constexpr double kColdPool = double(256 << 20);
  log.timing = "each call timed on a rank arriving " + std::to_string(static_cast<int>(std::lround(kLateBy * 1e6))) +
               " us after the others, on buffers out of cache (a region untouched for " + std::to_string(static_cast<int>(kColdPool) >> 20) +
               " MiB of other calls)";
  // Every rank's processor name, fixed-size, to count the hosts.
  std::vector<char> name(MPI_MAX_PROCESSOR_NAME, '\0'), names(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME, '\0');
  int length = 0;
  MPI_Get_processor_name(name.data(), &length);
  MPI_Allgather(name.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < size_; ++r) {
    std::string h(names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
    if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  }
  log.hosts = static_cast<std::int64_t>(hosts.size());
  log.device = calibrate::source_text("MPI ranks on " + hosts.front());
  double largest = 0;
  for (double b : bytes) largest = std::max(largest, b);
  // The pool: the cold span and two of the largest regions (the last region, and the rounding of the
  // region count, below).
  const auto floats = static_cast<std::size_t>((2 * largest + kColdPool) / sizeof(float)) + 64;
  exec::HostVector<float> in(floats, 1.0f / 1024), out(floats, 0.0f);
  const double n = static_cast<double>(size_);
  for (const double b : bytes) {
    // Whole floats, and for the gathers and scatters a whole share per rank.
    const int per_rank = test == calibrate::NcclTest::AllGather || test == calibrate::NcclTest::ReduceScatter ? size_ : 1;
    const auto count = static_cast<int>(std::floor(b / sizeof(float) / per_rank)) * per_rank;
    if (count == 0) continue;
    // Regions of the pool a call each, in turn: ceil(kColdPool / size) + 1 of them, each 64 B-aligned.
    const auto region = (static_cast<std::size_t>(count) + 15) / 16 * 16;
    const auto regions = static_cast<std::size_t>(std::ceil(kColdPool / (static_cast<double>(region) * sizeof(float)))) + 1;
    PARASIM_CHECK(regions * region <= floats, "the cold pool holds every region");
    std::size_t next = 0;
    auto once = [&] {
      float* const at_in = in.data() + next * region;
      float* const at_out = out.data() + next * region;
      next = (next + 1) % regions;
      run_polled(test, count, at_in, at_out, rank_, size_);
      at_in[0] = 1.0f / 1024;  // an in-place sum would otherwise grow every call
    };
    for (int k = 0; k < warmup; ++k) once();
    // Each call as the executor meets it: one rank arrives while the others already wait. A step's
    // collective is released on each rank by its own compute, and the ranks' compute never ends at
    // once. When waits slept whatever the rank did, the first to arrive slept when the last posted
    // and had to wake before the collective could progress: on this project's 2-core VM a 64 KiB
    // all-gather took 10 us with both ranks arriving together and 63 us with one 300 us late
    // (docs/validation.md). A rank that computes nothing now waits testing every 10 us
    // (mpi/polling.hpp), as the early ranks here do; what compute beside a wait costs it is the
    // interference measurement's. So the ranks take turns arriving 200 us late (a busy wait, as
    // compute is), and each call's time is the late rank's, from its post to its completion. Calls
    // until the late ranks' times sum to 50 ms, at least 2·`iterations` and at most
    // 100·`iterations`, so that a small size's mean settles.
    double total = 0;
    int calls = 0;
    while (calls < 100 * iterations && (calls < 2 * iterations || total < 0.05)) {
      double late_s = 0;
      for (int k = 0; k < iterations; ++k, ++calls) {
        MPI_Barrier(MPI_COMM_WORLD);
        const bool late = calls % size_ == rank_;
        if (late)
          for (const double w = MPI_Wtime(); MPI_Wtime() - w < kLateBy;) {
          }
        const double t0 = MPI_Wtime();
        once();
        if (late) late_s += MPI_Wtime() - t0;
      }
      double round_s = 0;
      MPI_Allreduce(&late_s, &round_s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      total += round_s;
    }
    const double per_call = total / calls;
    const double size = static_cast<double>(count) * sizeof(float);
    // nccl-tests' bus bandwidth factors (its doc/PERFORMANCE.md): 2(n-1)/n for all_reduce, (n-1)/n
    // for all_gather and reduce_scatter, 1 for sendrecv.
    const double factor = test == calibrate::NcclTest::AllReduce ? 2 * (n - 1) / n : test == calibrate::NcclTest::SendRecv ? 1.0 : (n - 1) / n;
    log.rows.push_back({size, per_call, 0, factor * size / per_call, 0});
  }
  return log;
}

calibrate::InterferenceMeasurement World::interference(calibrate::NcclTest test, std::int64_t gemm_n, double bytes, int blas_threads) const {
  PARASIM_CHECK(gemm_n >= 1 && bytes >= sizeof(float), "an interference measurement runs under MPI");
  calibrate::InterferenceMeasurement m;
  m.ranks = size_;
  m.gemm_n = gemm_n;
  m.collective_bytes = bytes;
  m.gemm_text = "an fp32 cblas_sgemm on " + std::to_string(blas_threads) + (blas_threads == 1 ? " thread" : " threads") + " of";
  m.collective = test;
  m.collective_text = std::string(mpi_call(test)) + " polled by a second thread as parasim execute runs it, " + exec::freed_memory();
  m.command = "parasim calibrate --backend mpi";
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  m.device_name = calibrate::source_text("MPI ranks on " + std::string(name));
  const auto n = static_cast<std::size_t>(gemm_n);
  exec::HostVector<float> a(n * n, 1.0f / 64), b(n * n, 1.0f / 64), c(n * n, 0.0f);
  // Whole floats, and for the gathers and scatters a whole share per rank (as collective_sweep).
  const int per_rank = test == calibrate::NcclTest::AllGather || test == calibrate::NcclTest::ReduceScatter ? size_ : 1;
  const auto count = std::max(per_rank, static_cast<int>(std::min(bytes / sizeof(float), 2147483647.0)) / per_rank * per_rank);
  exec::HostVector<float> buffer(static_cast<std::size_t>(count), 1.0f), out(static_cast<std::size_t>(count), 0.0f);
  auto gemm = [&] {
    const double t0 = MPI_Wtime();
    exec::sgemm(false, false, gemm_n, gemm_n, gemm_n, a.data(), b.data(), c.data());
    return MPI_Wtime() - t0;
  };
  auto collective = [&] {
    const double t0 = MPI_Wtime();
    run_polled(test, count, buffer.data(), out.data(), rank_, size_);
    // Keep the values from growing: an in-place sum of `size_` ones would double every call.
    buffer[0] = 1.0f;
    return MPI_Wtime() - t0;
  };
  // Means, not medians: a step pays every collective's time, its slow tail included. Beside compute a
  // polled collective's thread is now and then preempted for a whole time slice: on this project's
  // 2-core machine a 16 MiB all-gather's median beside a GEMM was 1.6x its time alone and its mean
  // 2.4x (41 runs each). 41 runs keep the mean's spread from run to run within a few per cent.
  // Above 16 MiB a collective spans many time slices, and fewer runs keep the mean as steady: as
  // many as keep the collective's bytes moved those of 41 runs at 16 MiB, at least 11.
  const int kRuns = bytes > double(16 << 20) ? std::max(11, static_cast<int>(41 * double(16 << 20) / bytes)) : 41;
  exec::set_blas_threads(blas_threads);
  (void)gemm();
  (void)collective();
  std::vector<double> gemm_alone, reduce_alone, gemm_beside;
  long long calls_beside = 0;  // the collectives the GEMMs ran beside (the message says how many)
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < kRuns; ++k) gemm_alone.push_back(gemm());
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < kRuns; ++k) reduce_alone.push_back(collective());
  // Beside each other: GEMMs on a second thread for as long as this one all-reduces (only this
  // thread calls MPI); the GEMMs that started before the last all-reduce ended count. Enough
  // collectives to span 6 GEMMs alone on every rank (the ranks agree on the count, as a collective
  // needs): 41 one-MiB send-recvs take less time than one 512^3 GEMM, which then ran mostly alone
  // (kept "1.000") or not at all.
  double spans = std::ceil(6 * mean_of(gemm_alone) / mean_of(reduce_alone)), most = 0;
  MPI_Allreduce(&spans, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int runs_beside = std::max(kRuns, static_cast<int>(std::min(most, 100000.0)));
  MPI_Barrier(MPI_COMM_WORLD);
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  // GEMMs on a thread of their own until `stop`, each one's time handed to `done`.
  auto gemms_until_stopped = [&](auto done) {
    return std::thread([&, done] {
      exec::set_blas_threads(blas_threads);
      const exec::Computing busy;  // as the executor's compute stream marks its tasks (mpi/polling.hpp)
      while (!stop.load()) done(gemm());
    });
  };
  std::thread compute = gemms_until_stopped([&](double s) {
    gemm_beside.push_back(s);
    finished.fetch_add(1);
  });
  // Until every rank has finished 3 GEMMs beside its collectives (the last, which runs past them, is
  // dropped below), in rounds of runs_beside collectives, at most kRounds: a GEMM thread started late
  // or slowed far beyond its time alone could otherwise finish none (a profile on this project's
  // 2-core VM once priced compute at 0.984 beside a 1 MiB send-recv, its GEMMs having run mostly
  // after the collectives).
  constexpr int kRounds = 20;
  int fewest = 0;
  for (int round = 0; round < kRounds && fewest < 3; ++round) {
    for (int k = 0; k < runs_beside; ++k, ++calls_beside) (void)collective();
    const int mine_done = finished.load();
    MPI_Allreduce(&mine_done, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  stop = true;
  compute.join();
  if (fewest < 3)
    throw PlanError("--backend mpi: a rank's GEMMs finished " + std::to_string(fewest) + " times beside " + std::to_string(calls_beside) + " " +
                    mpi_call(test) + " calls of " + std::to_string(static_cast<long long>(bytes)) + " B: the host is too loaded to measure interference");
  gemm_beside.pop_back();  // the one that ran past the last collective
  // The collective's side again, as a step meets its collectives: each after a pause of 5 ms in which
  // the rank only computes, its waiting thread off the core (a rank's collectives come between its
  // compute tasks: ResNet-18's gradient buckets came 2-20 ms apart on this project's 2-core host).
  // There the four kinds at 1 MiB kept 0.31-0.55 of their speed back to back
  // (two calibrations) and 0.12-0.38 after such pauses (three), and at 16 MiB and above about the
  // same either way; in a ResNet-18 ZeRO-3 step a 4.7 MB reduce-scatter beside compute took 3.8-4.1
  // times its time alone (docs/validation.md).
  // The compute side stays the one above, where a collective was always in flight: with pauses the
  // GEMMs run mostly alone, and their slowdown beside the collectives is lost in the pauses' noise.
  constexpr auto kPause = std::chrono::milliseconds(5);
  std::vector<double> paused_beside;
  MPI_Barrier(MPI_COMM_WORLD);
  stop = false;
  std::thread paused_compute = gemms_until_stopped([](double) {});
  for (int k = 0; k < kRuns; ++k) {
    std::this_thread::sleep_for(kPause);
    paused_beside.push_back(collective());
  }
  stop = true;
  paused_compute.join();
  // The slowest rank's, each side apart: a step's collectives wait for their last rank, and the
  // model's replicas stand for each other. Open MPI's algorithms need not load the ranks alike: on
  // this project's 2-core host rank 0's GEMMs kept 0.71 of their speed beside a 16 MiB
  // reduce-scatter and rank 1's 0.86, and under ZeRO-3 rank 0's compute ran 10-14 ms a ResNet-18
  // step longer than rank 1's (docs/validation.md): the ranks' mean priced rank 0 faster than it ran.
  const double mine[4] = {mean_of(gemm_alone), mean_of(gemm_beside), mean_of(reduce_alone), mean_of(paused_beside)};
  std::vector<double> all(4 * static_cast<std::size_t>(size_));
  MPI_Allgather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, MPI_COMM_WORLD);
  std::vector<calibrate::RankInterference> ranks;
  for (std::size_t r = 0; r < static_cast<std::size_t>(size_); ++r) ranks.push_back({all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]});
  const calibrate::RankInterference slowest = calibrate::slowest_rank(ranks);
  m.gemm_alone_s = slowest.gemm_alone_s;
  m.gemm_beside_s = slowest.gemm_beside_s;
  m.collective_alone_s = slowest.collective_alone_s;
  m.collective_beside_s = slowest.collective_beside_s;
  m.collective_text += " (the GEMMs timed beside calls back to back, the calls beside the GEMMs each after 5 ms of them alone), the slowest rank's times for each side";
  return m;
}

calibrate::RankSpreadMeasurement World::rank_spread(int blas_threads) const {
  // A block of a step's kinds of work, as the executor runs them: sgemms of 512³ and memory-bound
  // passes over 64 MiB buffers (exec/kernels.hpp), about 40 ms on one core of this project's 2-core
  // host, the scale of a ResNet-18 rank's compute between its gradient buckets. Every round starts
  // on every rank at once (a barrier) and each rank times its own block; a step's collectives wait
  // for the slowest rank, so the rounds' summed slowest time over their summed mean is what a step
  // of ranks in step pays over one rank's speed.
  constexpr std::int64_t kGemmN = 512;
  constexpr int kGemms = 6, kPasses = 2, kRounds = 21;
  constexpr std::size_t kPassFloats = std::size_t{16} << 20;  // 64 MiB
  calibrate::RankSpreadMeasurement m;
  m.ranks = size_;
  m.rounds = kRounds;
  m.block_text = std::to_string(kGemms) + " fp32 cblas_sgemm of " + std::to_string(kGemmN) + "^3 on " + std::to_string(blas_threads) +
                 (blas_threads == 1 ? " thread" : " threads") + " and " + std::to_string(kPasses) + " memory-bound passes over 64 MiB";
  const auto n = static_cast<std::size_t>(kGemmN);
  exec::HostVector<float> a(n * n, 1.0f / 64), b(n * n, 1.0f / 64), c(n * n, 0.0f), x(kPassFloats, 1.0f / 64), y(kPassFloats, 0.0f);
  exec::set_blas_threads(blas_threads);
  auto block = [&] {
    const double t0 = MPI_Wtime();
    for (int k = 0; k < kGemms; ++k) exec::sgemm(false, false, kGemmN, kGemmN, kGemmN, a.data(), b.data(), c.data());
    for (int k = 0; k < kPasses; ++k) exec::stream_pass(k % 2 == 0 ? x.data() : y.data(), k % 2 == 0 ? y.data() : x.data(), kPassFloats);
    return MPI_Wtime() - t0;
  };
  MPI_Barrier(MPI_COMM_WORLD);
  (void)block();  // pages touched, the BLAS warmed
  double slowest_sum = 0, mean_sum = 0;
  std::vector<double> all(static_cast<std::size_t>(size_));
  for (int round = 0; round < kRounds; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double mine = block();
    MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
    slowest_sum += *std::max_element(all.begin(), all.end());
    mean_sum += mean_of(all);
  }
  m.block_s = mean_sum / kRounds;
  m.slowest_over_mean = std::max(1.0, slowest_sum / mean_sum);
  return m;
}

void World::barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

}  // namespace parasim::mpi

namespace {
std::unique_ptr<parasim::mpi::Backend> start(bool threads) { return std::make_unique<parasim::mpi::World>(threads); }
}  // namespace

extern "C" __attribute__((visibility("default"))) const parasim::mpi::MpiPlugin* parasim_mpi_plugin() {
  static const parasim::mpi::MpiPlugin table{parasim::mpi::kMpiPluginVersion, &start};
  return &table;
}
