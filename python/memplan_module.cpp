// _memplan: the memplan command line in process, for the `memplan` Python package (memplan/__init__.py).
//
// One function, run(args, stdin) -> (exit_code, stdout bytes, stderr bytes): cli::run_cli_captured, the code
// path of the binary (same parsing, same errors, same --json), with nothing printed, no exit() and the GIL
// released while the engine works. Output is returned as bytes; the package decodes it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "cli/run_cli.h"

namespace py = pybind11;

PYBIND11_MODULE(_memplan, m) {
  m.doc() = "memplan's command line in process (use the memplan package, not this module)";
  m.def(
      "run",
      [](const std::vector<std::string>& args, const std::string& stdin_text) {
        memplan::cli::CliOutput r;
        {
          py::gil_scoped_release unlocked;
          r = memplan::cli::run_cli_captured(args, stdin_text);
        }
        return py::make_tuple(r.exit_code, py::bytes(r.out), py::bytes(r.err));
      },
      py::arg("args"), py::arg("stdin") = std::string(),
      "Runs `memplan ARGS...` with STDIN as its standard input; returns (exit_code, stdout, stderr).");
}
