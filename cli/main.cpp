// Thin entry point; the command line lives in run_cli (cli/run_cli.h) with its exit codes:
//   0: answered (including "does not fit"), 2: bad input (one line on stderr naming field and value),
//   3: internal error, 4: validate refused some cases.
// Progress lines of long commands go to stderr only when it is a terminal.
#include <unistd.h>

#include <iostream>

#include "cli/run_cli.h"

int main(int argc, char** argv) {
  return memplan::cli::run_cli(argc, argv, std::cin, std::cout, std::cerr, isatty(2) ? &std::cerr : nullptr);
}
