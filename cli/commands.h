// Subcommand registry of the memplan binary. Each subcommand lives in its own cli/cmd_*.cpp and exposes one
// `register_*` function that adds itself to the CLI11 app. Handlers throw memplan::InputError for bad input;
// run_cli() maps it to exit code 2 with one line on stderr.
#pragma once
#include <CLI/CLI.hpp>
#include <istream>
#include <ostream>

namespace memplan::cli {

struct RunFlags;
struct DeviceBudget;
DeviceBudget device_budget(const RunFlags& f);

// What a handler may touch besides its flags; it must outlive the app's parse().
//   in:       stdin text (explain-oom's message, `--model -`, `validate -`)
//   out:      the answer (exactly one JSON document with --json)
//   err:      one line, only with a non-zero exit_code (run_cli writes the exit-2 line itself)
//   progress: a terminal for progress lines, or nullptr (not a terminal, library use); handlers also keep it
//             silent under --json and --quiet
//   exit_code: 0 unless a handler answered with a documented non-zero code (validate: 4 = cases refused)
struct Context {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  std::ostream* progress = nullptr;
  int exit_code = 0;
};

void register_models(CLI::App& app, Context& ctx);
void register_estimate(CLI::App& app, Context& ctx);
void register_validate(CLI::App& app, Context& ctx);
void register_explain_oom(CLI::App& app, Context& ctx);
void register_calibrate(CLI::App& app, Context& ctx);
void register_plan(CLI::App& app, Context& ctx);
void register_fit(CLI::App& app, Context& ctx);
void register_dynamic(CLI::App& app, Context& ctx);
void register_serve(CLI::App& app, Context& ctx);

}  // namespace memplan::cli
