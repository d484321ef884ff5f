#include "strategies/search/executor.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace parasim::strategies::search {

std::vector<std::byte> ThreadExecutor::map(std::size_t n, std::size_t record_bytes, const RecordTask& task,
                                           const ProgressFn& progress) const {
  std::vector<std::byte> records(n * record_bytes);
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex failure_mutex;
  std::size_t failed_index = n;
  std::exception_ptr failure;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(i, records.data() + i * record_bytes);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (i < failed_index) {
          failed_index = i;
          failure = std::current_exception();
        }
      }
      const std::size_t finished = ++done;
      if (progress) progress(finished, n);
    }
  };
  const auto workers = static_cast<std::size_t>(threads_) < n ? static_cast<std::size_t>(threads_) : n;
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  return records;
}

}  // namespace parasim::strategies::search
