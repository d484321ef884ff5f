#pragma once
/// Number and text formatting shared by the human-readable reports (the stdout table, report.md):
/// fixed notation, locale-independent (std::to_chars), never "-0", so the same Result always prints
/// the same characters.
#include <string>
#include <string_view>

namespace parasim::reports {

/// `x` in fixed notation with `decimals` digits after the point (0 ≤ decimals ≤ 17); "n/a" when
/// `x` is not finite. A value that rounds to zero prints without a minus sign.
[[nodiscard]] std::string fixed(double x, int decimals);

/// `x` with `digits` significant digits in fixed notation, no exponent: 12.345 → "12.35",
/// 0.012345 → "0.01235", 123456.7 → "123457" (large values keep all their integer digits).
[[nodiscard]] std::string significant(double x, int digits = 4);

/// A fraction as a percentage with one decimal: 0.1234 → "12.3".
[[nodiscard]] std::string percent(double fraction);

/// A measured or predicted duration with its unit: "1.234 s", "85.536 ms", "136.6 us".
[[nodiscard]] std::string duration_text(double seconds);

/// Bytes in GiB (2^30 bytes) with 4 significant digits: 1.5 · 2^30 → "1.500".
[[nodiscard]] std::string gib(double bytes);

/// The change of `value` against `base` in percent of `base`, signed with one decimal: "+12.3%",
/// "-4.0%", "0.0%"; "n/a" when `base` is 0 and `value` is not.
[[nodiscard]] std::string change_percent(double value, double base);

/// `text` safe to print on a terminal: control characters (newline, tab, escape, ...) become the
/// C escapes `\n`, `\t`, `\x1b`, so a name from a scenario file cannot break a table or send
/// terminal escape sequences.
[[nodiscard]] std::string terminal_safe(std::string_view text);

/// Display width of UTF-8 text on a terminal, counted in code points (wide CJK characters are
/// counted as one).
[[nodiscard]] std::size_t display_width(std::string_view text);

}  // namespace parasim::reports
