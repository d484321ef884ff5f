#pragma once
/// The text of a calibrated profile's sources, description and origin: text from outside parasim
/// made safe, and the fixed number formats its figures are written in (the same on every machine).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace parasim::calibrate {

/// Text from outside parasim (a device name read from a log, a file name): bytes outside printable
/// ASCII become '?', so the profile is valid UTF-8 JSON whatever the log or the file system held.
[[nodiscard]] inline std::string source_text(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

/// Today's date in UTC, "2026-11-26": when a profile's figures were measured.
[[nodiscard]] inline std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

/// One line of a text file and its 1-based number (calibrate's readers locate their errors by it).
struct Line {
  int number = 0;
  std::string_view text;  ///< without its '\n'
};

/// The lines of `text`: one more than its '\n's, so an empty text is one empty line.
[[nodiscard]] inline std::vector<Line> lines_of(std::string_view text) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    lines.push_back({static_cast<int>(lines.size()) + 1, text.substr(pos, end - pos)});
    pos = end + 1;
  }
  return lines;
}

/// `s` read as a number, whole (no sign, space or text after it) and finite; nullopt otherwise. Locale-free.
[[nodiscard]] inline std::optional<double> finite_number(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// `v` with `digits` decimals: fixed(3.14159, 2) is "3.14".
[[nodiscard]] inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// Bytes in binary units, one decimal unless whole: "8 B", "7.6 MiB", "1 GiB".
[[nodiscard]] inline std::string bytes_text(double b) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && b >= 1024) b /= 1024, ++u;
  return fixed(b, b == std::floor(b) ? 0 : 1) + " " + units[u];
}

}  // namespace parasim::calibrate
