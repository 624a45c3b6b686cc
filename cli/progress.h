// Progress of a long command (plan's search, dynamic's replays) on a terminal: one line rewritten in place,
// "searching  45% (3.2 s)". Silent when there is no terminal (Context::progress is null: piped, library use),
// under --json or --quiet, and during the first second, so quick answers print nothing extra.
#pragma once
#include <chrono>
#include <ostream>
#include <string>

namespace memplan::cli {

class Progress {
 public:
  // `tty`: the terminal or nullptr; `enabled`: false under --json / --quiet.
  Progress(std::ostream* tty, bool enabled, std::string what);
  ~Progress() { done(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // fraction in [0, 1]; redrawn at most every 5 % (and never before one second has passed).
  void update(double fraction);
  // Erases the line (when one was drawn) and stops drawing; call before printing the answer.
  void done();

 private:
  std::ostream* tty_;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  double last_ = -1;
  bool drawn_ = false;
};

}  // namespace memplan::cli
