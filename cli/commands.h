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

// Handlers write their answer to `out` (and explain-oom reads stdin text from `in`); the streams must outlive
// the app's parse().
void register_models(CLI::App& app, std::ostream& out);
void register_estimate(CLI::App& app, std::ostream& out);
void register_validate(CLI::App& app, std::ostream& out);
void register_explain_oom(CLI::App& app, std::istream& in, std::ostream& out);
void register_calibrate(CLI::App& app, std::ostream& out);
void register_plan(CLI::App& app, std::ostream& out);
void register_fit(CLI::App& app, std::ostream& out);
void register_dynamic(CLI::App& app, std::ostream& out);
void register_serve(CLI::App& app, std::ostream& out);

}  // namespace memplan::cli
