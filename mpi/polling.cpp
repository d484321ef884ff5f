#include "mpi/polling.hpp"

#include "exec/compute_activity.hpp"

#ifdef PARASIM_HAVE_MPI
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <ctime>
#include <thread>

namespace parasim::mpi {

namespace {
// Each wake-up of a sleeping waiter preempts the compute stream on its rank's core: about 40 us
// a wake-up on a 2-core VM, where a 512^3 sgemm loop on each core ran 23% slower beside one
// waiter capped at 200 us, 4.5% slower at 1 ms and within noise at 2 ms (exec/README.md). A 2 ms
// cap takes at most 2% of the core; the doorbells end a wait for a peer as soon as it posts.
constexpr std::chrono::microseconds kLongestPause{2000};
constexpr std::chrono::microseconds kFirstPause{10};
constexpr std::chrono::microseconds kSpin{20};
// While the rank computes nothing, its polling thread tests every 10 us and sleeps between tests
// rather than testing flat out. A thread that never sleeps owes the scheduler the core time it
// took: Linux 6.6+ (EEVDF) runs the compute thread it has just made ready only once that debt is
// paid, and once compute runs, gives the waiter the core back only as late. On one core of this
// project's 2-core VM (Linux 6.18, bench/polling_handoff_bench, medians): a waiter that had tested
// flat out for 4 ms got compute running 3.6 ms after waking it, and the core back 4.0 ms after
// compute started; one that yielded between tests, 12-22 us and 3.1-3.2 ms; one that slept 3 us,
// 0.3-0.4 ms and 2.9-3.0 ms; one that slept 10 us, 34-39 us and 13-32 us. In ResNet-18 and GPT
// ZeRO-3 steps the flat-out waiter cost a rank 18-62 ms a step of compute tasks whose inputs were
// ready (docs/validation.md). The price: a test every ~18 us rather than back to back makes an
// idle rank's 1-4 MiB all-gather about a quarter slower; the calibration sweep polls the same
// way, so the profile has it.
constexpr std::chrono::microseconds kIdlePause{10};

// Close polling while idle (set_idle_polling), and which of the rank's waiting threads polls so: one
// at a time, so that two waiters (a collective lane and a pipeline receiver) do not share the core
// waking every 10 us.
std::atomic<bool> g_idle_polling{false};
std::atomic<bool> g_close_poller{false};

// Set by use_doorbells before any thread waits, cleared after they are joined (World's lifetime).
Doorbell* g_mine = nullptr;
std::vector<Doorbell*> g_others;

// futex(2) on a word of memory the host's ranks share (not FUTEX_PRIVATE: another process rings it).
long futex(Doorbell* word, int op, std::uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}
}  // namespace

void use_doorbells(Doorbell* mine, std::vector<Doorbell*> others) {
  g_mine = mine;
  g_others = std::move(others);
}

void ring_doorbells() {
  for (Doorbell* bell : g_others) {
    bell->fetch_add(1, std::memory_order_release);
    futex(bell, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

void set_idle_polling(bool on) { g_idle_polling = on; }

void wait_polling(MPI_Request& request) {
  static thread_local bool slack_set = false;
  if (!slack_set) {
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    slack_set = true;
  }
  ring_doorbells();  // `request` was just posted: a rank waiting for it looks now
  const auto begin = std::chrono::steady_clock::now();
  int flag = 0;
  auto pause = kFirstPause;
  // This thread holds g_close_poller while it polls every 10 us, and gives it back when compute
  // starts or it returns.
  struct FastPoll {
    bool held = false;
    void release() {
      if (held) g_close_poller.store(false, std::memory_order_release);
      held = false;
    }
    ~FastPoll() { release(); }
  } fast_poll;
  while (true) {
    // Read before the test: a ring between the test and the wait makes the wait return at once.
    const std::uint32_t seen = g_mine ? g_mine->load(std::memory_order_acquire) : 0;
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    if (std::chrono::steady_clock::now() - begin <= kSpin) continue;
    if (g_idle_polling.load(std::memory_order_relaxed) && !exec::computing()) {
      if (fast_poll.held || !g_close_poller.exchange(true, std::memory_order_acquire)) {
        fast_poll.held = true;
        pause = kIdlePause;
      }
    } else if (fast_poll.held) {
      fast_poll.release();  // compute started: back off from here, pausing briefly at first
      pause = kFirstPause;
    }
    if (g_mine) {
      const timespec timeout{0, static_cast<long>(std::chrono::nanoseconds(pause).count())};
      futex(g_mine, FUTEX_WAIT, seen, &timeout);
      if (g_mine->load(std::memory_order_acquire) != seen) {
        pause = kFirstPause;  // a peer posted: what it posted may be what this waits for
        continue;
      }
    } else {
      std::this_thread::sleep_for(pause);
    }
    if (!fast_poll.held) pause = std::min(2 * pause, kLongestPause);
  }
}

}  // namespace parasim::mpi
#endif
