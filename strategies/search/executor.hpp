#pragma once
/// How the search spreads independent work: an Executor runs n tasks, each writing a fixed-size
/// record, and hands back every record in index order. ThreadExecutor uses the cores of this
/// process; mpi/session.hpp's executor also spreads the indices over MPI ranks and gathers the records
/// on every rank, so every rank computes the same ranking from the same bytes.
#include <cstddef>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace parasim::strategies::search {

/// Called as tasks finish with (tasks done, tasks in all); from any thread, so it must be
/// thread-safe. May be empty.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;
/// Task i writes exactly the executor's record size in bytes at `out`.
using RecordTask = std::function<void(std::size_t i, std::byte* out)>;

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs task(i, out) for every i in [0, n) and returns the n records, record i at i × record_bytes.
  /// When tasks throw, every task still runs and the exception of the lowest index is rethrown.
  [[nodiscard]] virtual std::vector<std::byte> map(std::size_t n, std::size_t record_bytes, const RecordTask& task,
                                                   const ProgressFn& progress) const = 0;
};

/// The tasks on `threads` threads of this process (at least one; never more than tasks).
class ThreadExecutor final : public Executor {
 public:
  explicit ThreadExecutor(unsigned threads) : threads_(threads == 0 ? 1 : threads) {}
  [[nodiscard]] std::vector<std::byte> map(std::size_t n, std::size_t record_bytes, const RecordTask& task,
                                           const ProgressFn& progress) const override;
  [[nodiscard]] unsigned threads() const { return threads_; }

 private:
  unsigned threads_;
};

/// map() for records of a trivially copyable type T.
template <class T>
[[nodiscard]] std::vector<T> map_records(const Executor& executor, std::size_t n, const std::function<T(std::size_t)>& task,
                                         const ProgressFn& progress) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::vector<std::byte> bytes = executor.map(
      n, sizeof(T), [&task](std::size_t i, std::byte* out) {
        const T value = task(i);
        std::memcpy(out, &value, sizeof(T));
      },
      progress);
  std::vector<T> out(n);
  if (n > 0) std::memcpy(out.data(), bytes.data(), n * sizeof(T));
  return out;
}

}  // namespace parasim::strategies::search
