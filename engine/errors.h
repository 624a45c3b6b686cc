// Error kinds of the engine.
//
// Contract: bad user input is an expected failure and is thrown as InputError, whose message is one line
// naming the field and the offending value. The CLI turns it into exit code 2. "Does not fit" is a normal
// result and never an error. Broken internal invariants are asserts, not exceptions.
#pragma once
#include <stdexcept>
#include <string>

namespace memplan {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& field, const std::string& value, const std::string& why)
      : std::runtime_error(field + ": " + why + " (got " + value + ")"), field_(field) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace memplan
