// Runs the built memplan binary (MEMPLAN_BIN) without a shell, so arguments may hold any bytes.
#pragma once
#include <string>
#include <vector>

namespace memplan::test {

struct BinaryResult {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string out, err;
};

// `args` excludes argv[0]; stdin is `stdin_path` ("" = /dev/null); `env` entries ("LC_ALL=...") are added to
// the inherited environment.
BinaryResult run_binary(const std::vector<std::string>& args, const std::string& stdin_path = "",
                        const std::vector<std::string>& env = {});

}  // namespace memplan::test
