#include "cli/commands.h"

namespace memplan::cli {

void register_models(CLI::App& app) {
  (void)app;  // placeholder until the command lands
}

}  // namespace memplan::cli
