#pragma once
/// Checks of command-line numbers whose faults read as a scenario's do — "--seq-len: found 0,
/// expected an integer >= 1" — where CLI11's own range checks print the whole range of a double
/// (a 309-digit bound) and say nothing of the kind of number expected.
#include <cstdint>

#include <CLI/CLI.hpp>

namespace parasim::cli {

/// An integer (decimal digits, an optional sign) of at least `min`.
[[nodiscard]] CLI::Validator integer_at_least(std::int64_t min);
/// An integer from `low` to `high`, both included.
[[nodiscard]] CLI::Validator integer_from_to(std::int64_t low, std::int64_t high);
/// A finite number above `bound` (exclusive), or at least `bound` (inclusive).
[[nodiscard]] CLI::Validator number_above(double bound);
[[nodiscard]] CLI::Validator number_at_least(double bound);

}  // namespace parasim::cli
