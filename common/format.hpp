#pragma once
/// Numbers as decimal text, written once for every layer: the default notation of a number quoted in
/// an error message, and rounding to significant digits through the exact, locale-independent text of
/// std::to_chars (so that figures written to files do not change with noise in their last bits).
/// Human-readable report formats (fixed decimals, GiB, percentages) are in reports/format.hpp.
#include <string>

namespace parasim {

/// `x` as `std::ostream << x` writes it (6 significant digits, exponent when long): 0.5 → "0.5",
/// 1e-07 → "1e-07". For a user's number quoted in an error message.
[[nodiscard]] std::string format_number(double x);

/// `x` rounded to `digits` significant decimal digits (the nearest double to that decimal), read
/// back from the text std::to_chars writes. Idempotent. A negative zero stays negative; a value that
/// is not finite comes back unchanged. Precondition: 1 ≤ digits ≤ 17.
[[nodiscard]] double round_to_digits(double x, int digits);

/// round_to_digits for figures written to files, where "-0" must not appear: a negative zero becomes
/// 0. Precondition: finite, 1 ≤ digits ≤ 17.
[[nodiscard]] double round_significant(double x, int digits);

}  // namespace parasim
