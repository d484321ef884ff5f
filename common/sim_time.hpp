#pragma once
/// Simulated time as an integer count of picoseconds, so event order never depends on rounding.
/// int64 picoseconds cover ±106 days of simulated time.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace parasim {

struct Picoseconds {
  std::int64_t count = 0;

  constexpr Picoseconds() = default;
  constexpr explicit Picoseconds(std::int64_t c) : count(c) {}

  /// Rounds seconds to the nearest picosecond. Precondition: finite and within ±9.2e6 s.
  static Picoseconds from_seconds(double s) { return Picoseconds(static_cast<std::int64_t>(std::llround(s * 1e12))); }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(count) * 1e-12; }

  constexpr auto operator<=>(const Picoseconds&) const = default;
  constexpr Picoseconds operator+(Picoseconds o) const { return Picoseconds(count + o.count); }
  constexpr Picoseconds operator-(Picoseconds o) const { return Picoseconds(count - o.count); }
  constexpr Picoseconds& operator+=(Picoseconds o) { count += o.count; return *this; }
  constexpr Picoseconds& operator-=(Picoseconds o) { count -= o.count; return *this; }
  static constexpr Picoseconds max() { return Picoseconds(std::numeric_limits<std::int64_t>::max()); }
};

}  // namespace parasim
