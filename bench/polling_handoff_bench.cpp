// Benchmark (issue 16): how a rank's waiting thread hands its core to the rank's compute thread and
// gets it back, under each way it can wait while the rank computes nothing (mpi/polling.cpp). The
// executor binds a rank's threads to one core; a waiting thread that finishes what the compute
// thread waits for must let it run at once, and must itself run again soon after to post the next
// operation and test it.
//
// Two threads on one core (the last core of the process's affinity), 60 rounds each way:
//   compute: waits on a futex until woken, then computes 8 ms (marking itself as computing);
//   waiter:  while compute waits, polls for 4 ms the way under test; then wakes compute and keeps
//            polling the same way until compute has marked itself; then, as after posting the next
//            collective, sleeps 200 us and wakes.
// Printed per way (median and 90th percentile over the rounds):
//   start:  from the wake-up call to compute's first instruction;
//   back:   from compute's first instruction to the waiter's next instruction after it saw compute
//           (how long the waiter, which has a collective to post, goes without the core);
//   wake:   how late the waiter's 200 us sleep ends while compute runs.
// The ways: `flat-out` (test, test, ...), `yield` (sched_yield between tests), `sleep 3 us` and
// `sleep 10 us` between tests (the latter mpi/polling.cpp's kIdlePause), the timer slack at 1 us as
// the executor sets it.
//
//   ./build/bench/polling_handoff_bench
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void busy_for(double micros) {
  const auto t0 = Clock::now();
  volatile double x = 0;
  while (us(t0, Clock::now()) < micros)
    for (int i = 0; i < 200; ++i) x = x + i;
}

enum class Way { FlatOut, Yield, Sleep3, Sleep10 };
const char* name(Way w) { return w == Way::FlatOut ? "flat-out" : w == Way::Yield ? "yield" : w == Way::Sleep3 ? "sleep 3 us" : "sleep 10 us"; }

void poll_once(Way w) {
  if (w == Way::Yield) ::sched_yield();
  if (w == Way::Sleep3) std::this_thread::sleep_for(std::chrono::microseconds(3));
  if (w == Way::Sleep10) std::this_thread::sleep_for(std::chrono::microseconds(10));
}

struct Result {
  std::vector<double> start, back, wake;
};

Result run(Way way, int cpu) {
  constexpr int kRounds = 60;
  std::atomic<std::uint32_t> bell{0};
  std::atomic<bool> computing{false};
  Clock::time_point rung, began;
  Result r;
  std::thread compute([&] {
    pin(cpu);
    for (int k = 0; k < kRounds; ++k) {
      const std::uint32_t seen = bell.load();
      while (bell.load() == seen)
        ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&bell), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
      began = Clock::now();
      r.start.push_back(us(rung, began));
      computing = true;
      busy_for(8000);
      computing = false;
    }
  });
  std::thread waiter([&] {
    pin(cpu);
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    for (int k = 0; k < kRounds; ++k) {
      while (computing) std::this_thread::sleep_for(std::chrono::microseconds(500));
      const auto t0 = Clock::now();
      while (us(t0, Clock::now()) < 4000) poll_once(way);
      rung = Clock::now();
      bell.fetch_add(1);
      ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&bell), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
      while (!computing) poll_once(way);
      r.back.push_back(us(began, Clock::now()));
      const auto asleep = Clock::now();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      r.wake.push_back(us(asleep, Clock::now()) - 200);
    }
  });
  waiter.join();
  compute.join();
  return r;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}
}  // namespace

int main() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  sched_getaffinity(0, sizeof mine, &mine);
  int cpu = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpu = c;
  std::printf("two threads on cpu %d, 60 rounds each way; median / 90th percentile in us\n", cpu);
  std::printf("%-12s %18s %18s %18s\n", "way", "start", "back", "wake");
  for (const Way w : {Way::FlatOut, Way::Yield, Way::Sleep3, Way::Sleep10}) {
    const Result r = run(w, cpu);
    std::printf("%-12s %8.0f / %7.0f %8.0f / %7.0f %8.0f / %7.0f\n", name(w), quantile(r.start, 0.5), quantile(r.start, 0.9), quantile(r.back, 0.5),
                quantile(r.back, 0.9), quantile(r.wake, 0.5), quantile(r.wake, 0.9));
  }
}
