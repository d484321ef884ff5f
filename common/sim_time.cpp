#include "common/sim_time.hpp"

#include <cstdio>
#include <string>

#include "common/error.hpp"

namespace parasim {

void simulated_time_out_of_range(double seconds, const char* what) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3g", seconds);
  throw PlanError(std::string(what) + ": " + text +
                  " s of simulated time, beyond the 9.2e6 s (106 days) that parasim's picosecond clock holds; a link or device figure of the "
                  "scenario or profile is far outside any real one (a latency, bandwidth or rate)");
}

}  // namespace parasim
