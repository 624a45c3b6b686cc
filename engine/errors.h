// Error kinds of the engine.
//
// Contract: bad user input is an expected failure and is thrown as InputError, whose message is one line
// naming the field and the offending value. The CLI turns it into exit code 2. "Does not fit" is a normal
// result and never an error. Broken internal invariants are asserts, not exceptions.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace memplan {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& field, const std::string& value, const std::string& why)
      : std::runtime_error(field + ": " + why + " (got " + value + ")"), field_(field) {}
  const std::string& field() const { return field_; }
  // The same error seen from an enclosing context, e.g. the case id of a validation line.
  static InputError prefixed(const std::string& prefix, const InputError& inner) {
    return InputError(prefix + inner.field(), prefix + inner.what());
  }

 private:
  InputError(std::string field, const std::string& message) : std::runtime_error(message), field_(std::move(field)) {}
  std::string field_;
};

}  // namespace memplan
