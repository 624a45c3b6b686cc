// Subcommand registry of the memplan binary. Each subcommand lives in its own cli/cmd_*.cpp and exposes one
// `register_*` function that adds itself to the CLI11 app. Handlers throw memplan::InputError for bad input;
// main() maps it to exit code 2 with one line on stderr.
#pragma once
#include <CLI/CLI.hpp>

namespace memplan::cli {

struct RunFlags;
struct DeviceBudget;
DeviceBudget device_budget(const RunFlags& f);

void register_models(CLI::App& app);
void register_estimate(CLI::App& app);
void register_validate(CLI::App& app);
void register_explain_oom(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_plan(CLI::App& app);
void register_fit(CLI::App& app);
void register_dynamic(CLI::App& app);
void register_serve(CLI::App& app);

}  // namespace memplan::cli
