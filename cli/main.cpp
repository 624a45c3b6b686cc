// Thin entry point: parse arguments, dispatch, map error kinds to exit codes.
//   0: answered (including "does not fit"), 2: bad input (one line on stderr naming field and value).
#include <iostream>

#include "cli/commands.h"
#include "engine/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"memplan: will this fit on my GPU, and if not, what should I change?"};
  app.require_subcommand(1);
  memplan::cli::register_models(app);
  memplan::cli::register_estimate(app);
  memplan::cli::register_validate(app);
  memplan::cli::register_explain_oom(app);
  memplan::cli::register_calibrate(app);
  memplan::cli::register_plan(app);
  memplan::cli::register_fit(app);
  memplan::cli::register_dynamic(app);
  memplan::cli::register_serve(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "memplan: " << e.what() << "\n";
    return 2;
  } catch (const memplan::InputError& e) {
    std::cerr << "memplan: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "memplan: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
