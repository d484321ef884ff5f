// The thread executor (strategies/search/executor.hpp): records in index order whatever the
// thread timing, every task run once, the lowest failing index's exception.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

#include "strategies/search/executor.hpp"

namespace search = parasim::strategies::search;

TEST_CASE("thread executor: every record in index order, on any number of threads", "[strategies][search]") {
  const unsigned threads = GENERATE(1u, 2u, 7u);
  const search::ThreadExecutor executor(threads);
  // The progress callback runs on the workers, several at once: it keeps its own tallies atomically
  // (a read-then-store max loses a larger count to a smaller one written after it, and Catch's
  // assertions are not for other threads), and the checks follow the run.
  std::atomic<std::size_t> calls{0}, last_done{0}, wrong_totals{0};
  const auto squares = search::map_records<std::int64_t>(
      executor, 1000,
      [&](std::size_t i) {
        ++calls;
        return static_cast<std::int64_t>(i * i);
      },
      [&](std::size_t done, std::size_t total) {
        if (total != 1000) ++wrong_totals;
        std::size_t seen = last_done.load();
        while (done > seen && !last_done.compare_exchange_weak(seen, done)) {
        }
      });
  CHECK(wrong_totals == 0);
  REQUIRE(squares.size() == 1000);
  for (std::size_t i = 0; i < squares.size(); ++i) CHECK(squares[i] == static_cast<std::int64_t>(i * i));
  CHECK(calls == 1000);
  CHECK(last_done == 1000);
  CHECK(search::map_records<int>(executor, 0, [](std::size_t) { return 1; }, {}).empty());
}

TEST_CASE("thread executor: the lowest failing index's exception, after every task ran", "[strategies][search]") {
  const search::ThreadExecutor executor(3);
  std::atomic<std::size_t> calls{0};
  const auto task = [&](std::size_t i) {
    ++calls;
    if (i == 10 || i == 50) throw std::runtime_error("task " + std::to_string(i));
    return static_cast<int>(i);
  };
  CHECK_THROWS_WITH(search::map_records<int>(executor, 100, task, {}), "task 10");
  CHECK(calls == 100);
}
