// The whole memplan command line as a function, so tests, the CLI fuzz target and the Python module
// (python/) run it in-process.
//
// Contract: returns the process exit code and never throws, never exits, and writes only to the streams given.
//   0: answered (including "does not fit"; --help),
//   2: bad input: exactly one line on `err`, "memplan: <field>: <why> (got <value>)" (memplan::one_line),
//   3: internal error (a bug: an exception other than InputError / a CLI11 parse error escaped a handler),
//   4: validate answered, but refused some cases (their rows carry the error; one summary line on `err`).
// Answers go to `out`; explain-oom, `--model -` and `validate -` read `in`. Progress lines of long commands
// (plan, dynamic) go to `progress` when it is given (main passes stderr when it is a terminal).
#pragma once
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace memplan::cli {

constexpr int kExitOk = 0, kExitBadInput = 2, kExitInternal = 3, kExitCasesRefused = 4;

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err,
            std::ostream* progress = nullptr);

// run_cli on an argument vector (without argv[0]) and a stdin text, everything captured.
struct CliOutput {
  int exit_code = 0;
  std::string out, err;
};
CliOutput run_cli_captured(const std::vector<std::string>& args, const std::string& stdin_text = "");

}  // namespace memplan::cli
