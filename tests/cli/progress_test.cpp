// cli::Progress as plain lines (not a terminal), on a clock the test sets: what a log of a sweep or
// a long simulation shows.
#include <sstream>

#include <catch2/catch.hpp>

#include "cli/progress.hpp"

using parasim::cli::Progress;

TEST_CASE("progress: plain lines at each tenth crossed, with the rate and the time left", "[cli][progress]") {
  double now = 0;
  std::ostringstream out;
  Progress p(out, false, [&now] { return now; });
  p.begin("simulating", 10);
  now = 1.5;
  p.update(3);  // 3 done in 1.5 s: 2.00/s; 7 left at that rate: 3.5 s
  now = 2.0;
  p.update(3);  // no progress, no line
  p.update(2);  // a smaller count (another thread's late report) is ignored
  now = 4.0;
  p.update(8);  // 8 in 4 s: 2.00/s, 2 left: 1.0 s
  now = 5.0;
  p.update(10);  // the last tenth is the end line's
  p.end();       // 10 in 5 s: 2.00/s
  CHECK(out.str() ==
        "simulating: 10 to do\n"
        "simulating: 3/10 (30%), 2.00/s, 3.5 s left\n"
        "simulating: 8/10 (80%), 2.00/s, 1.0 s left\n"
        "simulating: 10/10 done in 5.0 s (2.00/s)\n");
}

TEST_CASE("progress: a phase without a count shows where it begins and how long it took", "[cli][progress]") {
  double now = 10;
  std::ostringstream out;
  Progress p(out, false, [&now] { return now; });
  p.begin("lowering the plan to tasks", 0);
  p.update(5);  // no count to report against
  now = 11.3;
  p.end();
  p.end();  // a second end says nothing
  CHECK(out.str() == "lowering the plan to tasks\nlowering the plan to tasks: done in 1.3 s\n");
}

TEST_CASE("progress: durations and rates for people", "[cli][progress]") {
  CHECK(Progress::duration_text(59.94) == "59.9 s");
  CHECK(Progress::duration_text(185) == "3 min 05 s");
  CHECK(Progress::duration_text(3720) == "1 h 02 min");
  CHECK(Progress::rate_text(512.4) == "512/s");
  CHECK(Progress::rate_text(3.4) == "3.40/s");
  CHECK(Progress::rate_text(0) == "?/s");
}
