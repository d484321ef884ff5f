#pragma once
// Internal to mpi/ (built where MPI is): waiting for a non-blocking MPI operation as `parasim
// execute`'s stream threads wait, so that `parasim calibrate --backend mpi` measures collectives the
// way the executor runs them.
#ifdef PARASIM_HAVE_MPI
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace parasim::mpi {

/// Waits for `request`, which this thread has just posted. First it rings the doorbells of the other
/// ranks on this host (a rank waiting for a peer to post looks at once), then calls MPI_Test in a
/// tight loop for 20 µs (short messages finish there). Past that, while this rank computes nothing
/// (exec/compute_activity.hpp) and idle polling is on (set_idle_polling), one waiting thread of the
/// rank goes on testing every 10 µs, sleeping between tests: an MPI collective progresses only when
/// a thread tests it, and the core is the rank's own; a thread that tested flat out would keep the
/// rank's compute thread waiting for the core once what it waits for is done (mpi/polling.cpp).
/// Otherwise the thread sleeps between tests: 10 µs at first and
/// twice as long each time up to 2 ms, or until its own doorbell rings, which starts the pauses
/// again at 10 µs (the thread's timer slack lowered to 1 µs so short sleeps are that short: Linux's
/// default is 50 µs). Every wake-up preempts the compute stream sharing the rank's core (Open MPI
/// binds a rank's threads to one core): at 5,000 a second, a 200 µs cap, they took a fifth of its
/// speed on a 2-core VM. A long wait (a pipeline stage's receiver, posted a step ahead) now wakes
/// 500 times a second, and one for a peer ends when the peer posts, not up to 2 ms later.
void wait_polling(MPI_Request& request);

/// Whether a rank's waiting thread may test every 10 µs while the rank computes nothing: only where each
/// rank of this host has a core of its own (World: the host's ranks at most its cores), so that the
/// wake-ups take no other rank's core. Off by default.
void set_idle_polling(bool on);

/// A rank's doorbell: a 32-bit counter in memory the ranks of a host share (an MPI shared-memory
/// window, World's), which other ranks increment and wake with futex(2) after they post.
using Doorbell = std::atomic<std::uint32_t>;
static_assert(Doorbell::is_always_lock_free, "a doorbell is a futex word in shared memory");

/// Makes wait_polling ring `others` and sleep on `mine` (null: timed sleeps alone, as for ranks on
/// another host). Called before any thread waits and again with null after they are done.
void use_doorbells(Doorbell* mine, std::vector<Doorbell*> others);

/// Increments and wakes the other ranks' doorbells on this host.
void ring_doorbells();

}  // namespace parasim::mpi
#endif
