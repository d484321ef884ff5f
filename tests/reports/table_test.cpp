// reports/table: the readable table `parasim SCENARIO` prints.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hand_result.hpp"
#include "reports/table.hpp"
#include "tiny_simulation.hpp"

using namespace parasim;

namespace {

/// The first line of `text` that starts with `prefix` (empty when none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    if (line.rfind(prefix, 0) == 0) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("table: base and a what-if, every figure with its unit and the change against the base", "[reports][table]") {
  const std::vector<sim::Result> rs{testing::hand_result(), testing::hand_result("faster", 1.5)};
  // The base takes 2 s, the what-if 1.5 s, for the same 8 samples of 1024 tokens and 1e15 model FLOPs on 2 devices:
  //   samples/s   8 / 2 = 4.000          8 / 1.5 = 5.333         (+33.3 %)
  //   tokens/s    8192 / 2 = 4096        8192 / 1.5 = 5461
  //   TFLOP/s     1e15 / 2 / 2 / 1e12 = 250.0;   1e15 / 1.5 / 2 / 1e12 = 333.3
  //   exposed communication (pipeline sends, 1/8 of the step): 0.2500 s and 0.1875 s (−25 %)
  //   peak memory 20.5e9 B / 2^30 = 19.09 GiB; usable 78e9 B / 2^30 = 72.64 GiB
  //   breakdown of the base: forward 1/4 · 2 s, backward 1/2 · 2 s, pipeline 1/8, idle 1/8.
  const std::string expected = R"TABLE(parasim: scenario "hand", model toy
plan (base): pp 2, 1f1b
Figures from the analytical backend with profile "datasheet" (built-in datasheet figures).

figure                    unit                             base                      faster  vs base
------------------------  ---------  --------------------------  --------------------------  -------
backend                                              analytical                  analytical
profile                                               datasheet                   datasheet
profile origin                       built-in datasheet figures  built-in datasheet figures
devices                                           2 × a100-80gb               2 × a100-80gb
step time                 s                               2.000                       1.500   -25.0%
throughput                samples/s                       4.000                       5.333   +33.3%
throughput                tokens/s                         4096                        5461   +33.3%
model TFLOP/s per device  TFLOP/s                         250.0                       333.3   +33.3%
MFU                       %                                40.0                        40.0     0.0%
HFU                       %                                50.0                        50.0     0.0%
pipeline bubble (idle)    % of step                        12.5                        12.5     0.0%
exposed communication     s                              0.2500                      0.1875   -25.0%
peak memory per device    GiB                             19.09                       19.09     0.0%
usable memory per device  GiB                             72.64                       72.64     0.0%
memory                                                     FITS                        FITS
"vs base": each what-if's change against the base, in percent of the base's value.

Where the time goes in base (mean over 2 devices):
part                            s  % of step
-------------------------  ------  ---------
forward                    0.5000       25.0
backward                    1.000       50.0
pipeline comm              0.2500       12.5
idle (bubble and waiting)  0.2500       12.5
total (step time)           2.000      100.0
)TABLE";
  CHECK(reports::render_table(rs) == expected);
}

TEST_CASE("table: a plan that does not fit says so", "[reports][table]") {
  std::vector<sim::Result> rs{testing::hand_result()};
  rs[0].fits = false;
  const std::string table = reports::render_table(rs);
  CHECK(ends_with(line_starting(table, "memory "), "  DOES NOT FIT"));
  // One result: no change column and no line explaining it.
  CHECK(table.find("vs base") == std::string::npos);
}

TEST_CASE("table: results from different profiles name each one", "[reports][table]") {
  std::vector<sim::Result> rs{testing::hand_result(), testing::hand_result("calibrated", 1.5)};
  rs[1].profile = "lab-a100";
  rs[1].profile_origin = "calibrated from lab.json";
  const std::string table = reports::render_table(rs);
  CHECK(table.find("Figures from:\n"
                   "  base: the analytical backend with profile \"datasheet\" (built-in datasheet figures)\n"
                   "  calibrated: the analytical backend with profile \"lab-a100\" (calibrated from lab.json)\n") !=
        std::string::npos);
}

TEST_CASE("table: names from the scenario cannot break lines or send terminal escapes", "[reports][table]") {
  std::vector<sim::Result> rs{testing::hand_result(), testing::hand_result("two\nlines \x1b[2J", 1.5)};
  rs[0].scenario = rs[1].scenario = "a\tb";  // one scenario's base and what-if
  const std::string table = reports::render_table(rs);
  CHECK(table.find('\x1b') == std::string::npos);
  CHECK(table.find('\t') == std::string::npos);
  CHECK(table.find("parasim: scenario \"a\\tb\"") == 0);
  CHECK(table.find("two\\nlines \\x1b[2J  vs base\n") != std::string::npos);
}

TEST_CASE("table: a simulated step names its backend and profile", "[reports][table]") {
  const sim::Simulation s = testing::tiny_simulation();
  const std::vector<sim::Result> rs{s.result};
  const std::string table = reports::render_table(rs);
  INFO(table);
  CHECK(table.find("Figures from the analytical backend with profile \"datasheet\" (built-in datasheet figures).") !=
        std::string::npos);
  CHECK(ends_with(line_starting(table, "devices "), "  8 × a100-80gb"));
  CHECK(ends_with(line_starting(table, "backend "), "  analytical"));
  CHECK(ends_with(line_starting(table, "profile "), "  datasheet"));
  CHECK(table == reports::render_table(rs));
}
