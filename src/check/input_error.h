#pragma once
// The one error the offline checkers throw when their input cannot be read:
// a file that is missing, truncated or malformed, or beyond what a checker
// indexes. It is not a verdict on the data, so `abyss check` exits 2 on it
// and keeps exit 1 for "the data violates the property" (docs/formats.md).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace abyss::check {

class InputError : public std::runtime_error {
 public:
  // `line` 0: the error is about the whole input (it cannot be opened, say).
  // what() reads "<source>:<line>: <message>" like a compiler diagnostic, or
  // "<source>: <message>" for line 0; it is always one line.
  InputError(const std::string& source, uint64_t line, const std::string& message)
      : std::runtime_error(source + (line == 0 ? "" : ":" + std::to_string(line)) + ": " + message),
        source_(source),
        line_(line),
        message_(message) {}

  [[nodiscard]] const std::string& source() const { return source_; }
  [[nodiscard]] uint64_t line() const { return line_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string source_;
  uint64_t line_;
  std::string message_;
};

}  // namespace abyss::check
