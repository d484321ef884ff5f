#pragma once
/// Errors that cross layers. User input fails with InputError (exit 2), a plan that cannot run with
/// PlanError (exit 3), an output that cannot be written with OutputError (exit 4); a broken internal
/// invariant with InternalError (exit 1). Library code throws;
/// only cli/main turns an error into an exit code.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace parasim {

/// Bad user input: where it is (file, 1-based line and column, RFC 6901 JSON pointer) and what is wrong.
/// Any location part may be empty/zero when unknown (e.g. a model name given on the command line).
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, std::string json_pointer, std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& json_pointer() const { return json_pointer_; }
  /// The message without the location prefix.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string json_pointer_;
  std::string message_;
};

/// A valid scenario whose plan cannot run: it does not fit memory, or the plan is impossible on the
/// cluster. Exit code 3.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An output that could not be written — a folder that cannot be created, a file that cannot be
/// opened or filled (a full disk, a file-size limit, no permission) — with the system's reason.
/// Not bad input: the input was fine. Exit code 4.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A broken internal invariant: a parasim bug, never the user's fault. Exit code 1.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* expr, const char* file, int line, const std::string& detail);

}  // namespace parasim

/// Checks an internal invariant in every build type; throws InternalError naming the expression.
#define PARASIM_CHECK(expr, detail)                                      \
  do {                                                                   \
    if (!(expr)) ::parasim::fail_check(#expr, __FILE__, __LINE__, detail); \
  } while (false)
