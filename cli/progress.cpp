#include "cli/progress.h"

#include <cstdio>

namespace memplan::cli {

Progress::Progress(std::ostream* tty, bool enabled, std::string what)
    : tty_(enabled ? tty : nullptr), what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}

void Progress::done() {
  if (drawn_) *tty_ << "\r\033[K" << std::flush;  // erase the line: the answer follows on a clean terminal
  drawn_ = false;
  tty_ = nullptr;
}

void Progress::update(double fraction) {
  if (!tty_) return;
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (el < 1.0 || (fraction - last_ < 0.05 && fraction < 1.0)) return;
  last_ = fraction;
  char line[160];
  std::snprintf(line, sizeof line, "\r%s %3.0f%% (%.1f s)", what_.c_str(), fraction * 100, el);
  *tty_ << line << std::flush;
  drawn_ = true;
}

}  // namespace memplan::cli
