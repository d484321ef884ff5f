#pragma once
/// Simulated time as an integer count of picoseconds, so event order never depends on rounding.
/// int64 picoseconds cover ±106 days of simulated time.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace parasim {

/// The most simulated seconds a Picoseconds holds: int64 picoseconds, about 106 days.
inline constexpr double kMaxSimulatedSeconds = 9.2e6;

/// Throws PlanError (exit 3): `seconds` of simulated time (`what`) is outside what the clock holds.
[[noreturn]] void simulated_time_out_of_range(double seconds, const char* what);

struct Picoseconds {
  std::int64_t count = 0;

  constexpr Picoseconds() = default;
  constexpr explicit Picoseconds(std::int64_t c) : count(c) {}

  /// Rounds seconds to the nearest picosecond; a value that is not finite or beyond ±9.2e6 s (a link
  /// or device figure far outside any real one) throws PlanError rather than wrapping around.
  static Picoseconds from_seconds(double s) {
    if (!(std::abs(s) <= kMaxSimulatedSeconds)) simulated_time_out_of_range(s, "a task's duration");
    return Picoseconds(static_cast<std::int64_t>(std::llround(s * 1e12)));
  }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(count) * 1e-12; }

  constexpr auto operator<=>(const Picoseconds&) const = default;
  constexpr Picoseconds operator+(Picoseconds o) const { return Picoseconds(count + o.count); }
  constexpr Picoseconds operator-(Picoseconds o) const { return Picoseconds(count - o.count); }
  constexpr Picoseconds& operator+=(Picoseconds o) { count += o.count; return *this; }
  constexpr Picoseconds& operator-=(Picoseconds o) { count -= o.count; return *this; }
  static constexpr Picoseconds max() { return Picoseconds(std::numeric_limits<std::int64_t>::max()); }
};

}  // namespace parasim
