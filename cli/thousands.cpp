#include "cli/thousands.hpp"

#include "reports/format.hpp"

namespace parasim::cli {
namespace {

/// `digits` (a run of digits after an optional '-') with a comma before every group of three
/// counted from the right; other text comes back as it is.
std::string grouped(const std::string& digits) {
  std::string out;
  const std::size_t start = !digits.empty() && digits[0] == '-' ? 1 : 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string with_commas(std::int64_t v) { return grouped(std::to_string(v)); }

std::string with_commas(std::uint64_t v) { return grouped(std::to_string(v)); }

std::string with_commas(double v) { return grouped(reports::fixed(v, 0)); }

}  // namespace parasim::cli
