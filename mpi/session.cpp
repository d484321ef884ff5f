#include "mpi/session.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

#include "calibrate/source_text.hpp"
#include "common/error.hpp"

#ifdef PARASIM_HAVE_MPI
#include <mpi.h>
#endif

namespace parasim::mpi {
namespace {

#ifdef PARASIM_HAVE_MPI
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
#endif

}  // namespace

bool available() {
#ifdef PARASIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr; }

Session::Session(bool threads) {
  if (!launched_by_mpirun()) return;
#ifdef PARASIM_HAVE_MPI
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
  active_ = true;
#else
  (void)threads;
  note_ = "this build has no MPI (CMake found none): every rank runs the whole search alone";
#endif
}

Session::~Session() {
#ifdef PARASIM_HAVE_MPI
  if (active_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
#endif
}

std::unique_ptr<strategies::search::Executor> Session::executor(unsigned threads) const {
#ifdef PARASIM_HAVE_MPI
  if (active_ && size_ > 1) return std::make_unique<MpiExecutor>(rank_, size_, threads);
#endif
  return std::make_unique<strategies::search::ThreadExecutor>(threads);
}

calibrate::NcclTestsLog Session::all_reduce_sweep(const std::vector<double>& bytes, int warmup, int iterations) const {
  PARASIM_CHECK(active_ && iterations >= 1 && warmup >= 0, "an all-reduce sweep runs under MPI");
  calibrate::NcclTestsLog log;
  log.test = calibrate::NcclTest::AllReduce;
  log.ranks = size_;
#ifdef PARASIM_HAVE_MPI
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
  std::vector<float> buffer(static_cast<std::size_t>(largest / sizeof(float)) + 1, 1.0f);
  const double n = static_cast<double>(size_);
  for (const double b : bytes) {
    const auto count = static_cast<int>(b / sizeof(float));
    if (count == 0) continue;
    for (int k = 0; k < warmup; ++k) MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < iterations; ++k) MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - t0) / iterations, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double size = static_cast<double>(count) * sizeof(float);
    log.rows.push_back({size, slowest, 2 * (n - 1) / n * size / slowest, 0});
  }
#else
  (void)bytes;
  (void)warmup;
#endif
  return log;
}

}  // namespace parasim::mpi
