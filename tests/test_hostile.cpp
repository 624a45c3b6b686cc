// The hostile-input corpus (tests/hostile/MANIFEST.tsv): every file must make memplan exit with code 2 and
// exactly one line on stderr that names the expected field (validate: code 4, the case refused as a row, when
// the file itself is usable). GPU spec documents have no CLI command (the table is
// embedded at build time); they are parsed in process and must throw one InputError naming the field.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "models/gpu_specs.h"
#include "tests/run_binary.h"

namespace {

struct Entry {
  std::string file, command, field, error_class;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream ss(s);
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Entry> manifest() {
  std::vector<Entry> out;
  std::ifstream in(std::string(MEMPLAN_HOSTILE_DIR) + "/MANIFEST.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto cols = split(line, '\t');
    if (cols.size() != 4) FAIL("malformed MANIFEST.tsv line: " << line);
    out.push_back({cols[0], cols[1], cols[2], cols[3]});
  }
  return out;
}

// The command column: "{}" is the file's path; "@args" reads the arguments from the file, one per line.
std::vector<std::string> arguments(const Entry& e, const std::string& path) {
  if (e.command == "@args") {
    std::string text = slurp(path);
    return split(text, '\n');
  }
  std::vector<std::string> args;
  for (auto& a : split(e.command, ' ')) args.push_back(a == "{}" ? path : a);
  return args;
}

}  // namespace

TEST_CASE("hostile corpus: every file is refused with exit 2 and one line naming the field", "[hostile]") {
  const auto entries = manifest();
  REQUIRE(entries.size() >= 100);
  for (const auto& e : entries) {
    const std::string path = std::string(MEMPLAN_HOSTILE_DIR) + "/" + e.file;
    DYNAMIC_SECTION(e.file << " [" << e.error_class << "]") {
      if (e.command.rfind("@parse ", 0) == 0) {
        const std::string kind = e.command.substr(7);
        const std::string text = slurp(path);
        std::string message;
        try {
          if (kind == "gpu_specs") (void)memplan::parse_gpu_specs(text);
          else FAIL("unknown @parse kind " << kind);
        } catch (const memplan::InputError& err) {
          message = err.what();
        }
        INFO("message: " << message);
        REQUIRE(!message.empty());
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.find(e.field) != std::string::npos);
        continue;
      }
      const auto r = memplan::test::run_binary(arguments(e, path), path);
      INFO("command: " << e.command << "\nstderr: " << r.err);
      // validate refuses a bad case as a row and goes on: exit 4 with one summary line naming the first error.
      // A file it cannot use at all (empty, unreadable) is still exit 2.
      if (e.command.rfind("validate ", 0) == 0 && r.exit_code == 4) CHECK(r.out.find("REFUSED") != std::string::npos);
      else CHECK(r.exit_code == 2);
      REQUIRE(!r.err.empty());
      CHECK(r.err.back() == '\n');
      CHECK(r.err.find('\n') == r.err.size() - 1);
      CHECK(r.err.find(e.field) != std::string::npos);
    }
  }
}
