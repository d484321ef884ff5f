// reports/format: fixed, locale-independent number formatting for the readable reports.
#include <limits>

#include <catch2/catch.hpp>

#include "reports/format.hpp"

using namespace parasim::reports;

TEST_CASE("format: fixed, significant, percent, GiB", "[reports][format]") {
  CHECK(fixed(1.25, 1) == "1.2");  // round-half-to-even of the exact binary value 1.25
  CHECK(fixed(-0.0001, 2) == "0.00");
  CHECK(fixed(std::numeric_limits<double>::infinity(), 2) == "n/a");
  // 4 significant digits: 12.345 has 2 integer digits → 2 decimals.
  CHECK(significant(12.345678, 4) == "12.35");
  // 0.012345: first significant digit at 10^-2 → 4 − 1 + 2 = 5 decimals.
  CHECK(significant(0.012345, 4) == "0.01235");
  // Large values keep every integer digit, no exponent.
  CHECK(significant(123456.7, 4) == "123457");
  CHECK(significant(0, 4) == "0");
  CHECK(percent(0.1234) == "12.3");
  // 1.5 · 2^30 bytes = 1.5 GiB, to 4 significant digits.
  CHECK(gib(1.5 * 1024 * 1024 * 1024) == "1.500");
}

TEST_CASE("format: change against the base in percent", "[reports][format]") {
  // (1.5 − 2) / 2 = −25 %.
  CHECK(change_percent(1.5, 2.0) == "-25.0%");
  // (3 − 2) / 2 = +50 %.
  CHECK(change_percent(3.0, 2.0) == "+50.0%");
  CHECK(change_percent(2.0, 2.0) == "0.0%");
  // (1.0000001 − 1) / 1 = 0.00001 % rounds to 0.0, without a sign.
  CHECK(change_percent(1.0000001, 1.0) == "0.0%");
  CHECK(change_percent(0, 0) == "0.0%");
  CHECK(change_percent(1, 0) == "n/a");
}

TEST_CASE("format: names are terminal-safe and measured in code points", "[reports][format]") {
  CHECK(terminal_safe("a\nb\tc\x1b[31m") == "a\\nb\\tc\\x1b[31m");
  CHECK(terminal_safe("plain") == "plain");
  // "×" is two bytes of UTF-8, one code point.
  CHECK(display_width("8 \xc3\x97 a100") == 8);
}
