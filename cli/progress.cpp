#include "cli/progress.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include <unistd.h>

namespace parasim::cli {
namespace {

/// Bar redraws at most this often: a terminal needs no more, and a thousand threads' updates a
/// second must not turn into a thousand writes.
constexpr double kRedrawInterval_s = 0.1;
constexpr int kBarWidth = 24;

}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::ostream& out, bool bar, Clock clock) : out_(out), bar_(bar), clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [origin = std::chrono::steady_clock::now()] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
    };
  }
}

std::string Progress::duration_text(double seconds) {
  std::ostringstream s;
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    s << std::fixed << std::setprecision(1) << seconds << " s";
  } else if (seconds < 3600) {
    const auto whole = static_cast<long long>(std::llround(seconds));
    s << whole / 60 << " min " << std::setw(2) << std::setfill('0') << whole % 60 << " s";
  } else {
    const auto minutes = static_cast<long long>(std::llround(seconds / 60));
    s << minutes / 60 << " h " << std::setw(2) << std::setfill('0') << minutes % 60 << " min";
  }
  return s.str();
}

std::string Progress::rate_text(double per_second) {
  std::ostringstream s;
  if (!std::isfinite(per_second) || per_second <= 0) return "?/s";
  if (per_second >= 100) s << std::fixed << std::setprecision(0) << per_second;
  else if (per_second >= 10) s << std::fixed << std::setprecision(1) << per_second;
  else s << std::fixed << std::setprecision(2) << per_second;
  return s.str() + "/s";
}

void Progress::begin(std::string_view phase, std::size_t total) {
  const std::lock_guard lock(mutex_);
  phase_ = std::string(phase);
  total_ = total;
  done_ = 0;
  next_tenth_ = 1;
  start_ = clock_();
  last_draw_ = -1;
  active_ = true;
  if (!bar_) {
    out_ << phase_;
    if (total_ > 0) out_ << ": " << total_ << " to do";
    out_ << "\n" << std::flush;
  } else {
    draw(0, start_);
  }
}

void Progress::update(std::size_t done) {
  const std::lock_guard lock(mutex_);
  if (!active_ || done <= done_) return;
  done_ = done;
  const double now = clock_();
  if (bar_) {
    if (now - last_draw_ >= kRedrawInterval_s || done == total_) draw(done, now);
    return;
  }
  if (total_ == 0) return;
  // Plain lines at each tenth crossed (the last tenth is the end line's).
  const std::size_t tenth = done * 10 / total_;
  if (tenth >= next_tenth_ && tenth < 10) {
    next_tenth_ = tenth + 1;
    const double elapsed = now - start_;
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    out_ << phase_ << ": " << done << "/" << total_ << " (" << done * 100 / total_ << "%), " << rate_text(rate) << ", "
         << duration_text(rate > 0 ? static_cast<double>(total_ - done) / rate : NAN) << " left\n"
         << std::flush;
  }
}

void Progress::end() {
  const std::lock_guard lock(mutex_);
  if (!active_) return;
  active_ = false;
  const double elapsed = clock_() - start_;
  std::ostringstream line;
  line << phase_ << ": ";
  if (total_ > 0) line << done_ << "/" << total_ << " done in " << duration_text(elapsed) << " ("
                       << rate_text(elapsed > 0 ? static_cast<double>(done_) / elapsed : 0) << ")";
  else line << "done in " << duration_text(elapsed);
  if (bar_) out_ << "\r\x1b[K";  // clear the bar: the summary takes its place
  out_ << line.str() << "\n" << std::flush;
}

void Progress::draw(std::size_t done, double now) {
  last_draw_ = now;
  std::ostringstream line;
  line << "\r\x1b[K" << phase_;
  if (total_ > 0) {
    const auto filled = static_cast<int>(done * kBarWidth / total_);
    line << " [" << std::string(static_cast<std::size_t>(filled), '#') << std::string(static_cast<std::size_t>(kBarWidth - filled), '.')
         << "] " << done << "/" << total_;
    const double elapsed = now - start_;
    if (done > 0 && elapsed > 0) {
      const double rate = static_cast<double>(done) / elapsed;
      line << "  " << rate_text(rate) << "  ETA " << duration_text(static_cast<double>(total_ - done) / rate);
    }
  }
  out_ << line.str() << std::flush;
}

}  // namespace parasim::cli
