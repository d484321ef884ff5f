#pragma once
/// Progress of long work (a search's phases, a sweep's points, a long simulation): on a terminal a
/// bar redrawn in place with the count, the rate and the time left; elsewhere (a log, a pipe, a
/// test) plain lines — one when a phase begins, one at each tenth done, one when it ends — so a log
/// stays readable. Progress goes to its own stream (stderr), never into the results on stdout.
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

#include "common/progress_sink.hpp"

namespace parasim::cli {

/// Whether standard error is a terminal (isatty).
[[nodiscard]] bool stderr_is_terminal();

class Progress final : public ProgressSink {
 public:
  /// Seconds since some fixed start; the default reads std::chrono::steady_clock. Tests pass their own.
  using Clock = std::function<double()>;
  /// `bar`: draw a bar redrawn in place (for a terminal); otherwise plain lines.
  Progress(std::ostream& out, bool bar, Clock clock = {});
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Starts a phase of `total` tasks (0: a phase without a count, shown as a single line).
  void begin(std::string_view phase, std::size_t total) override;
  /// `done` of the phase's tasks have finished. Thread-safe; cheap when nothing is redrawn.
  void update(std::size_t done) override;
  /// Ends the phase: a last line with its count, time and rate.
  void end() override;

  /// "1.2 s", "3 min 05 s", "1 h 02 min": a duration for people.
  [[nodiscard]] static std::string duration_text(double seconds);
  /// "512/s", "3.4/s", "0.25/s": a rate with two or three significant digits.
  [[nodiscard]] static std::string rate_text(double per_second);

 private:
  void draw(std::size_t done, double now);

  std::ostream& out_;
  bool bar_;
  Clock clock_;
  std::mutex mutex_;
  std::string phase_;
  std::size_t total_ = 0;
  std::size_t done_ = 0;
  std::size_t next_tenth_ = 1;  ///< plain lines: the next tenth of the total to report
  double start_ = 0;
  double last_draw_ = -1;
  bool active_ = false;
};

}  // namespace parasim::cli
