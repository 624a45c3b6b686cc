// The whole memplan command line as a function, so tests and the CLI fuzz target run it in-process.
//
// Contract: returns the process exit code and never throws.
//   0: answered (including "does not fit"; --help),
//   2: bad input: exactly one line on `err`, "memplan: <field>: <why> (got <value>)" (memplan::one_line),
//   3: internal error (a bug: an exception other than InputError / a CLI11 parse error escaped a handler).
// Answers go to `out`; explain-oom reads its text from `in` when given none on the command line.
#pragma once
#include <istream>
#include <ostream>

namespace memplan::cli {

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace memplan::cli
