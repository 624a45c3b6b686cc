// `memplan calibrate [--out FILE] [--device N] [--quick]`: runs the CUDA microbenchmarks (memplan-calibrate,
// built when a CUDA toolkit is present) and writes a calibration profile that estimate/plan/fit read with
// --calibration. Progress lines from the benchmarks stream to stderr as they run.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>
#include <string>
#include <sys/wait.h>

#include "cli/commands.h"
#include "cli/time_fit.h"
#include "engine/errors.h"
#include "models/calibration_profile.h"

namespace memplan::cli {

namespace {
std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

bool executable(const std::string& p) { return ::access(p.c_str(), X_OK) == 0; }

// Next to this binary's build tree first (build/cli/memplan -> build/calibrate/memplan-calibrate), then PATH.
std::string find_calibrator() {
  const std::string dir = self_dir();
  for (const std::string& p : {dir + "/../calibrate/memplan-calibrate", dir + "/memplan-calibrate"})
    if (executable(p)) return p;
  if (const char* path = std::getenv("PATH")) {
    std::string all(path);
    size_t start = 0;
    while (start <= all.size()) {
      const size_t end = all.find(':', start);
      const std::string d = all.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!d.empty() && executable(d + "/memplan-calibrate")) return d + "/memplan-calibrate";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

void register_calibrate(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("calibrate", "measure this GPU (CUDA microbenchmarks) and write a calibration profile");
  auto path = std::make_shared<std::string>("memplan-calibration.json");
  auto device = std::make_shared<int>(0);
  auto quick = std::make_shared<bool>(false);
  cmd->add_option("--out", *path, "where to write the profile");
  cmd->add_option("--device", *device, "CUDA device index");
  cmd->add_flag("--quick", *quick, "smoke test: smaller shapes, fewer repeats");
  auto fit_time = std::make_shared<std::vector<std::string>>();
  auto fit_out = std::make_shared<std::string>("data/calibration");
  cmd->add_option("--fit-time", *fit_time,
                  "no GPU: fit the step-time coefficients to these measured timing cases (cli/time_fit.h)");
  cmd->add_option("--fit-out", *fit_out, "with --fit-time: where time-fit*.json and the coefficients go");
  auto fit_profiles = std::make_shared<std::string>("data/calibration/h200-profile-classes.tsv");
  cmd->add_option("--fit-profiles", *fit_profiles,
                  "with --fit-time: profiled steps' kernel time per class, which anchor the rate coefficients "
                  "(calibrate/profile_classes.py; \"\" for none)");
  cmd->callback([path, device, quick, fit_time, fit_out, fit_profiles, &ctx] {
    if (!fit_time->empty()) return run_time_fit(*fit_time, *fit_out, *fit_profiles, ctx.out);
    std::ostream& out = ctx.out;
    const std::string bin = find_calibrator();
    if (bin.empty())
      throw InputError("calibrate", "memplan-calibrate",
                       "not found: it is built only where a CUDA toolkit exists (see calibrate/README.md)");
    std::string command = shell_quote(bin) + " --out " + shell_quote(*path) + " --device " + std::to_string(*device);
    if (*quick) command += " --quick";
    // Progress goes to stdout: stderr carries exactly one line, and only when the command fails.
    out << "memplan calibrate: running " << bin << std::endl;
    const int status = std::system(command.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw InputError("calibrate", std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1),
                       "the microbenchmarks failed (no usable GPU?)");
    const CalibrationProfile p = load_calibration_profile(*path);  // the profile must read back
    out << "wrote " << *path << ": " << p.gpu_name << ", context " << (p.cuda_context_lazy_bytes >> 20)
              << " MiB, bf16 GEMM " << p.bf16_tflops << " TFLOP/s\n";
  });
}

}  // namespace memplan::cli
