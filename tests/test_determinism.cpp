// Determinism of the CLI's --json answers: the same input gives byte-identical output across runs and
// locales, and every number in it is an integer (bytes, counts) or a MiB figure with at most one decimal.
//
// Locale: memplan never calls setlocale, so printf/iostreams stay in the "C" locale whatever LC_ALL says; the
// test runs each command once more under LC_ALL=de_DE.UTF-8 (decimal comma) to keep it that way. Where that
// locale is not installed (this CI image has only C, C.UTF-8, POSIX) the run still passes the variable, so a
// future setlocale(LC_ALL, "") would be caught on a machine that has it. The engine is single-threaded, so
// there are no thread counts to vary.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/run_binary.h"
#include "data_dir.h"

namespace {

const std::string kData = MEMPLAN_DATA_DIR;

// Integers anywhere; non-integers only as fixed one-decimal MiB values (as dumped: no exponent, <= 1 decimal).
void check_numbers(const nlohmann::json& j, const std::string& where) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) check_numbers(it.value(), where + "." + it.key());
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) check_numbers(j[i], where + "[" + std::to_string(i) + "]");
  } else if (j.is_number_float()) {
    const std::string s = j.dump();
    INFO(where << " = " << s);
    CHECK(s.find_first_of("eE") == std::string::npos);
    const size_t dot = s.find('.');
    CHECK((dot == std::string::npos || s.size() - dot - 1 <= 1));
  }
}

}  // namespace

TEST_CASE("JSON output (--json) is byte-identical across runs and locales, numbers locale-free", "[determinism]") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"estimate", {"estimate", "--model", "gpt2", "--batch-size", "2", "--seq-len", "256", "--gpu", "h200", "--json"}},
      {"estimate vision", {"estimate", "--model", "resnet18", "--precision", "amp_bf16", "--json"}},
      {"validate", {"validate", kData + "/validation/h200-public-cases.jsonl", "--only", "gpt2s-fp32-adamw-b8s1024", "--json"}},
      {"models", {"models", "--json"}},
      {"explain-oom",
       {"explain-oom", "--json",
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.06 GiB "
        "is free. Of the allocated memory 20.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch "
        "but unallocated."}},
  };
  for (const auto& [name, args] : commands) {
    DYNAMIC_SECTION(name) {
      const auto a = memplan::test::run_binary(args);
      const auto b = memplan::test::run_binary(args);
      const auto c = memplan::test::run_binary(args, "", {"LC_ALL=de_DE.UTF-8", "LC_NUMERIC=de_DE.UTF-8"});
      INFO("stderr: " << a.err);
      REQUIRE(a.exit_code == 0);
      REQUIRE(!a.out.empty());
      CHECK(a.out == b.out);
      CHECK(a.out == c.out);
      check_numbers(nlohmann::json::parse(a.out), name);
    }
  }
}
