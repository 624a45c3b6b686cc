#include "cli/run_cli.h"

#include <sstream>

#include "cli/commands.h"
#include "engine/errors.h"

namespace memplan::cli {

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err,
            std::ostream* progress) {
  Context ctx{in, out, err, progress};
  try {
    CLI::App app{"memplan: will this fit on my GPU, and if not, what should I change?"};
    app.require_subcommand(1);
    register_models(app, ctx);
    register_estimate(app, ctx);
    register_validate(app, ctx);
    register_explain_oom(app, ctx);
    register_calibrate(app, ctx);
    register_plan(app, ctx);
    register_fit(app, ctx);
    register_dynamic(app, ctx);
    register_serve(app, ctx);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e, out, err);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e, out, err);
    } catch (const CLI::ParseError& e) {
      err << "memplan: " << one_line(e.what()) << "\n";
      return kExitBadInput;
    }
  } catch (const InputError& e) {
    err << "memplan: " << one_line(e.what()) << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "memplan: internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  } catch (...) {
    err << "memplan: internal error: unknown exception\n";
    return kExitInternal;
  }
  return ctx.exit_code;
}

CliOutput run_cli_captured(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::vector<const char*> argv{"memplan"};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  CliOutput r;
  r.exit_code = run_cli(static_cast<int>(args.size() + 1), argv.data(), in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace memplan::cli
