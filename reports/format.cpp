#include "reports/format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace parasim::reports {

std::string fixed(double x, int decimals) {
  if (!std::isfinite(x)) return "n/a";
  decimals = std::clamp(decimals, 0, 17);
  char buf[400];  // the largest double in fixed notation has 309 integer digits
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, decimals);
  std::string s(buf, r.ptr);
  if (s.front() == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string significant(double x, int digits) {
  if (!std::isfinite(x)) return "n/a";
  if (x == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(x))));
  return fixed(x, std::max(0, digits - 1 - magnitude));
}

std::string percent(double fraction) { return fixed(100 * fraction, 1); }

std::string gib(double bytes) { return significant(bytes / (1024.0 * 1024.0 * 1024.0), 4); }

std::string change_percent(double value, double base) {
  if (!std::isfinite(value) || !std::isfinite(base)) return "n/a";
  if (base == 0) return value == 0 ? "0.0%" : "n/a";
  const std::string s = fixed(100 * (value - base) / std::fabs(base), 1);
  return (s != "0.0" && s.front() != '-' ? "+" : "") + s + "%";
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::size_t display_width(std::string_view text) {
  // Every byte that is not a UTF-8 continuation byte (10xxxxxx) starts a code point.
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

std::string duration_text(double seconds) {
  if (seconds >= 1) return fixed(seconds, 3) + " s";
  if (seconds >= 1e-3) return fixed(seconds * 1e3, 3) + " ms";
  return fixed(seconds * 1e6, 1) + " us";
}

}  // namespace parasim::reports
