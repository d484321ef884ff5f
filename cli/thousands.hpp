#pragma once
/// Whole numbers with thousands separators, for what the command prints: 1234567 → "1,234,567".
#include <cstdint>
#include <string>

namespace parasim::cli {

/// `v` with a comma every three digits from the right: 1234567 → "1,234,567", -1234 → "-1,234".
[[nodiscard]] std::string with_commas(std::int64_t v);
[[nodiscard]] std::string with_commas(std::uint64_t v);
/// `v` rounded to a whole number (reports::fixed(v, 0)), with commas: 1234567.5 → "1,234,568";
/// "n/a" when `v` is not finite.
[[nodiscard]] std::string with_commas(double v);

}  // namespace parasim::cli
