#include "cli/run_cli.h"

#include "cli/commands.h"
#include "engine/errors.h"

namespace memplan::cli {

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  try {
    CLI::App app{"memplan: will this fit on my GPU, and if not, what should I change?"};
    app.require_subcommand(1);
    register_models(app, out);
    register_estimate(app, out);
    register_validate(app, out);
    register_explain_oom(app, in, out);
    register_calibrate(app, out);
    register_plan(app, out);
    register_fit(app, out);
    register_dynamic(app, out);
    register_serve(app, out);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e, out, err);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
      err << "memplan: " << one_line(e.what()) << "\n";
      return 2;
    }
  } catch (const InputError& e) {
    err << "memplan: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "memplan: internal error: " << one_line(e.what()) << "\n";
    return 3;
  } catch (...) {
    err << "memplan: internal error: unknown exception\n";
    return 3;
  }
  return 0;
}

}  // namespace memplan::cli
