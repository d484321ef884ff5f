// common/format: numbers as decimal text — the notation of a number quoted in a message, and rounding
// to significant digits through std::to_chars.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "common/format.hpp"

using parasim::format_number;
using parasim::round_significant;
using parasim::round_to_digits;

TEST_CASE("format_number writes a number as a stream does, 6 significant digits", "[common][format]") {
  CHECK(format_number(0.5) == "0.5");
  CHECK(format_number(400) == "400");
  // 1234567 to 6 significant digits needs an exponent: 1.23457e+06.
  CHECK(format_number(1234567) == "1.23457e+06");
  CHECK(format_number(1e-7) == "1e-07");
}

TEST_CASE("round_significant keeps 9 significant digits and is idempotent", "[common][format]") {
  // 0.1234567891234 to 9 digits: 0.123456789.
  CHECK(round_significant(0.1234567891234, 9) == 0.123456789);
  // 123456789012 to 9 digits: 1.23456789e11.
  CHECK(round_significant(123456789012.0, 9) == 1.23456789e11);
  CHECK(round_significant(round_significant(2.0 / 3.0, 9), 9) == round_significant(2.0 / 3.0, 9));
  // -1e-300 rounds to itself; -0.0 is written as 0.
  CHECK(round_significant(-1e-300, 9) == -1e-300);
  CHECK(std::signbit(round_significant(-0.0, 9)) == false);
}

TEST_CASE("round_to_digits rounds as round_significant and passes signs and infinities through", "[common][format]") {
  // 0.1 + 2·0.1 = 0.30000000000000004, to 12 digits: 0.3.
  CHECK(round_to_digits(0.1 + 2 * 0.1, 12) == 0.3);
  CHECK(round_to_digits(2.0 / 3.0, 9) == round_significant(2.0 / 3.0, 9));
  CHECK(std::signbit(round_to_digits(-0.0, 12)));
  CHECK(round_to_digits(std::numeric_limits<double>::infinity(), 12) == std::numeric_limits<double>::infinity());
}
