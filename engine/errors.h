// Error kinds of the engine.
//
// Contract: bad user input is an expected failure and is thrown as InputError, whose message is one line
// naming the field and the offending value. The CLI turns it into exit code 2. "Does not fit" is a normal
// result and never an error. Broken internal invariants are asserts, not exceptions.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace memplan {

// `message` as one printable line: control characters (newlines from pasted values, escape sequences) are
// written as \n, \r, \t or \xNN, so a diagnostic never spans lines or drives the terminal.
inline std::string one_line(const std::string& message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(message.size());
  for (unsigned char c : message) {
    if (c == '\n') s += "\\n";
    else if (c == '\r') s += "\\r";
    else if (c == '\t') s += "\\t";
    else if (c < 0x20 || c == 0x7f) s += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    else s.push_back(static_cast<char>(c));
  }
  return s;
}

class InputError : public std::runtime_error {
 public:
  // `value` is quoted as given, cut to kMaxValueChars; control characters anywhere in the message are escaped
  // (\n, \t, \xNN) so the message stays one line whatever the input held.
  InputError(const std::string& field, const std::string& value, const std::string& why)
      : std::runtime_error(one_line(field + ": " + why + " (got " + cut(value) + ")")), field_(field) {}
  const std::string& field() const { return field_; }
  // The same error seen from an enclosing context, e.g. the case id of a validation line.
  static InputError prefixed(const std::string& prefix, const InputError& inner) {
    return InputError(prefix + inner.field(), one_line(cut(prefix)) + inner.what());
  }

  static constexpr size_t kMaxValueChars = 120;

 private:
  static std::string cut(const std::string& value) {
    return value.size() > kMaxValueChars ? value.substr(0, kMaxValueChars - 3) + "..." : value;
  }
  InputError(std::string field, const std::string& message) : std::runtime_error(message), field_(std::move(field)) {}
  std::string field_;
};

}  // namespace memplan
