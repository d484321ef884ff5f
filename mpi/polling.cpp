#include "mpi/polling.hpp"

#ifdef PARASIM_HAVE_MPI
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace parasim::mpi {

void wait_polling(MPI_Request& request) {
  static thread_local bool slack_set = false;
  if (!slack_set) {
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    slack_set = true;
  }
  const auto begin = std::chrono::steady_clock::now();
  int flag = 0;
  auto pause = std::chrono::microseconds(10);
  while (true) {
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    if (std::chrono::steady_clock::now() - begin > std::chrono::microseconds(20)) {
      std::this_thread::sleep_for(pause);
      pause = std::min(2 * pause, std::chrono::microseconds(200));
    }
  }
}

}  // namespace parasim::mpi
#endif
