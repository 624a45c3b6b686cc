// Thin entry point; the command line lives in run_cli (cli/run_cli.h) with its exit codes:
//   0: answered (including "does not fit"), 2: bad input (one line on stderr naming field and value),
//   3: internal error.
#include <iostream>

#include "cli/run_cli.h"

int main(int argc, char** argv) { return memplan::cli::run_cli(argc, argv, std::cin, std::cout, std::cerr); }
