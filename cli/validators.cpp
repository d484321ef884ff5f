#include "cli/validators.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace parasim::cli {
namespace {

std::optional<std::int64_t> integer_of(const std::string& text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const auto [at, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || at != end || begin == end) return std::nullopt;
  return v;
}

std::optional<double> number_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// "0", or "\"abc\"" for what is not a number.
std::string found(const std::string& text, bool number) { return number ? text : "\"" + text + "\""; }

std::string bound_text(double b) {
  std::string s = std::to_string(b);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

CLI::Validator integer_at_least(std::int64_t min) {
  const std::string expected = "an integer >= " + std::to_string(min);
  return CLI::Validator(
      [min, expected](std::string& text) -> std::string {
        const auto v = integer_of(text);
        if (v && *v >= min) return "";
        return "found " + found(text, v.has_value()) + ", expected " + expected;
      },
      expected);
}

CLI::Validator integer_from_to(std::int64_t low, std::int64_t high) {
  const std::string expected = "an integer from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [low, high, expected](std::string& text) -> std::string {
        const auto v = integer_of(text);
        if (v && *v >= low && *v <= high) return "";
        return "found " + found(text, v.has_value()) + ", expected " + expected;
      },
      expected);
}

CLI::Validator number_above(double bound) {
  const std::string expected = "a number > " + bound_text(bound);
  return CLI::Validator(
      [bound, expected](std::string& text) -> std::string {
        const auto v = number_of(text);
        if (v && *v > bound) return "";
        return "found " + found(text, v.has_value()) + ", expected " + expected;
      },
      expected);
}

CLI::Validator number_at_least(double bound) {
  const std::string expected = "a number >= " + bound_text(bound);
  return CLI::Validator(
      [bound, expected](std::string& text) -> std::string {
        const auto v = number_of(text);
        if (v && *v >= bound) return "";
        return "found " + found(text, v.has_value()) + ", expected " + expected;
      },
      expected);
}

}  // namespace parasim::cli
