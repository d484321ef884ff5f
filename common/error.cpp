#include "common/error.hpp"

#include <sstream>

namespace parasim {
namespace {
std::string format_input_error(const std::string& file, int line, int column, const std::string& pointer,
                               const std::string& message) {
  std::ostringstream out;
  out << (file.empty() ? std::string("<input>") : file);
  if (line > 0) out << ':' << line << ':' << column;
  out << ": ";
  if (!pointer.empty()) out << "at " << pointer << ": ";
  out << message;
  return out.str();
}
}  // namespace

InputError::InputError(std::string file, int line, int column, std::string json_pointer, std::string message)
    : std::runtime_error(format_input_error(file, line, column, json_pointer, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      json_pointer_(std::move(json_pointer)),
      message_(std::move(message)) {}

void fail_check(const char* expr, const char* file, int line, const std::string& detail) {
  throw InternalError(std::string("internal error: check '") + expr + "' failed at " + file + ":" +
                      std::to_string(line) + (detail.empty() ? "" : ": " + detail));
}

}  // namespace parasim
