// Runs the built memplan binary (MEMPLAN_BIN) with a shell argument string; captures exit code, stdout, stderr.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace memplan::testing {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline CliResult run_cli(const std::string& args, const std::string& stdin_text = "") {
  static int counter = 0;
  const std::string base = "/tmp/memplan_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  std::string cmd = std::string("'") + MEMPLAN_BIN + "' " + args + " >" + base + ".out 2>" + base + ".err";
  if (!stdin_text.empty()) {
    std::ofstream(base + ".in") << stdin_text;
    cmd += " <" + base + ".in";
  } else {
    cmd += " </dev/null";
  }
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  std::remove((base + ".in").c_str());
  return r;
}

inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/memplan_test_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace memplan::testing
