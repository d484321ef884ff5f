#pragma once
// Internal to mpi/ (built where MPI is): waiting for a non-blocking MPI operation as `parasim
// execute`'s stream threads wait, so that `parasim calibrate --backend mpi` measures collectives the
// way the executor runs them.
#ifdef PARASIM_HAVE_MPI
#include <mpi.h>

namespace parasim::mpi {

/// Waits for `request`: MPI_Test in a tight loop for the first 20 µs (short messages finish there),
/// then sleeping between tests, 10 µs at first and twice as long each time up to 200 µs (the
/// thread's timer slack lowered to 1 µs so short sleeps are that short: Linux's default is 50 µs).
/// A long wait (a pipeline stage waiting for its input) then wakes 5,000 times a second rather than
/// 100,000, which would take the core from the compute stream of the rank beside it.
void wait_polling(MPI_Request& request);

}  // namespace parasim::mpi
#endif
