// The command line, in process. The input is split into arguments at newlines (argv[0] is "memplan"); the
// part after the first NUL byte, if any, is stdin (explain-oom, `--model -`, `validate -` read it). run_cli must
// answer 0, 2 or 4 (validate refused a case); exit code 3 means an exception other than InputError escaped a
// handler, which is a bug: abort so libFuzzer keeps the input.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_cli.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = memplan::fuzz::as_text(data, size);
  const size_t nul = text.find('\0');
  const std::string_view args_text = text.substr(0, nul);
  std::istringstream in(nul == std::string_view::npos ? std::string() : std::string(text.substr(nul + 1)));

  std::vector<std::string> args{"memplan"};
  size_t start = 0;
  while (start <= args_text.size() && args.size() < 64) {
    size_t end = args_text.find('\n', start);
    if (end == std::string_view::npos) end = args_text.size();
    args.emplace_back(args_text.substr(start, end - start));
    start = end + 1;
  }
  // Arguments with side effects outside the process are not fuzzed: --timeline and calibrate --out write files
  // at fuzzer-chosen paths, calibrate runs a subprocess.
  for (const auto& a : args)
    if (a.find("--timeline") == 0 || a.find("--out") == 0 || a == "calibrate") return 0;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  std::ostringstream out, err;
  const int rc = memplan::cli::run_cli(static_cast<int>(args.size()), argv.data(), in, out, err);
  if (rc == 3) {
    std::fprintf(stderr, "run_cli exit 3: %s\n", err.str().c_str());
    std::abort();
  }
  if (rc == 2 && err.str().find('\n') + 1 != err.str().size()) {
    std::fprintf(stderr, "exit 2 without exactly one line on stderr: %s\n", err.str().c_str());
    std::abort();
  }
  return 0;
}
