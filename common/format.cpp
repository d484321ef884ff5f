#include "common/format.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>

#include "common/error.hpp"

namespace parasim {

std::string format_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

double round_to_digits(double x, int digits) {
  PARASIM_CHECK(digits >= 1 && digits <= 17, "round_to_digits needs 1..17 digits");
  // to_chars/from_chars: exact decimal conversion that ignores the C locale.
  char buf[64];
  const auto written = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, digits);
  PARASIM_CHECK(written.ec == std::errc(), "to_chars of a double fits 64 characters");
  double out = x;
  std::from_chars(buf, written.ptr, out);  // "inf" and "nan" read back too; on failure `out` stays x
  return out;
}

double round_significant(double x, int digits) {
  PARASIM_CHECK(std::isfinite(x) && digits >= 1 && digits <= 17, "round_significant needs a finite value and 1..17 digits");
  const double out = round_to_digits(x, digits);
  return out == 0 ? 0.0 : out;  // no negative zero in the files
}

}  // namespace parasim
