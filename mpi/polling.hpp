#pragma once
// Internal to mpi/ (built where MPI is): waiting for a non-blocking MPI operation as `parasim
// execute`'s stream threads wait, so that `parasim calibrate --backend mpi` measures collectives the
// way the executor runs them.
#ifdef PARASIM_HAVE_MPI
#include <mpi.h>

namespace parasim::mpi {

/// Waits for `request`: MPI_Test in a tight loop for the first 20 µs (short messages finish there),
/// then sleeping between tests, 10 µs at first and twice as long each time up to 2 ms (the
/// thread's timer slack lowered to 1 µs so short sleeps are that short: Linux's default is 50 µs).
/// A long wait (a pipeline stage waiting for its input, its receiving thread posted a step ahead)
/// then wakes 500 times a second: every wake-up preempts the compute stream sharing the rank's
/// core, and at 5,000 a second (a 200 µs cap) they took a fifth of its speed.
void wait_polling(MPI_Request& request);

}  // namespace parasim::mpi
#endif
