#include "cli/fit_safety.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "engine/checked.h"

namespace memplan::cli {

namespace {
std::string fraction_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", x);
  return b;
}

SafetyStep step(const std::string& what, const std::string& flags, const ModelSpec& m, const RunConfig& c,
                const Estimate& e, const DeviceBudget& d) {
  return SafetyStep{what, flags, device_total(e, d), verdict_on(m, c, e, d)};
}
}  // namespace

Safety borderline_safety(const ModelSpec& m, const RunConfig& c, bool expandable_segments, const Estimate& e,
                         const DeviceBudget& d, const EstimateFn& run) {
  Safety s;
  if (!expandable_segments)
    s.steps.push_back(step("expandable segments: one growing segment per stream, no fragmentation between segments",
                           "PYTORCH_ALLOC_CONF=expandable_segments:True (--expandable-segments)", m, c, run(c, true), d));
  if (c.mode == Mode::training && c.batch_size > 1) {
    RunConfig less = c;
    less.batch_size = c.batch_size - 1;
    const int64_t global = c.batch_size * c.grad_accum_steps;
    std::string flags = "--batch-size " + std::to_string(less.batch_size);
    std::string what = "one micro-batch less";
    if (global % less.batch_size == 0 && global / less.batch_size != c.grad_accum_steps) {
      less.grad_accum_steps = global / less.batch_size;  // the same global batch where it divides
      flags += " --grad-accum-steps " + std::to_string(less.grad_accum_steps);
      what += ", accumulation keeps the global batch " + std::to_string(global);
    } else {
      what += " (the global batch becomes " + std::to_string(less.batch_size * c.grad_accum_steps) + ")";
    }
    s.steps.push_back(step(what, flags, m, less, run(less, expandable_segments), d));
  } else if (c.mode == Mode::inference && c.batch_size > 1) {
    RunConfig less = c;
    less.batch_size = c.batch_size - 1;
    s.steps.push_back(step("one sequence less per batch", "--batch-size " + std::to_string(less.batch_size), m, less,
                           run(less, expandable_segments), d));
  }
  // The cap: PyTorch may then reserve only what memplan's budget left it after the non-PyTorch memory, so a run
  // that needs more than predicted raises OutOfMemoryError at its first peak instead of after other memory
  // (evaluation, checkpoint saving, another process) has grown into the gap.
  if (d.capacity_bytes > 0) {
    const double x = static_cast<double>(std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes)) /
                     static_cast<double>(d.capacity_bytes);
    s.memory_fraction = std::floor(x * 1000.0) / 1000.0;
    s.cap_bytes = static_cast<int64_t>(s.memory_fraction * static_cast<double>(d.capacity_bytes));
  }
  s.peak_step = e.replay.peak.where.step;
  return s;
}

nlohmann::json safety_json(const Safety& s) {
  nlohmann::json steps = nlohmann::json::array();
  for (const SafetyStep& t : s.steps) {
    nlohmann::json j = {{"what", t.what}, {"flags", t.flags}, {"device_bytes", t.device_bytes}, {"fits", t.verdict.fits}};
    add_verdict_json(j, t.verdict);
    steps.push_back(std::move(j));
  }
  return {{"steps", steps},
          {"memory_fraction", s.memory_fraction},
          {"memory_fraction_cap_bytes", s.cap_bytes},
          {"memory_fraction_code", "torch.cuda.set_per_process_memory_fraction(" + fraction_text(s.memory_fraction) + ")"},
          {"peak_step", s.peak_step}};
}

std::string safety_text(const Safety& s) {
  std::ostringstream o;
  o << "\nBORDERLINE: what buys safety (each applied to the run as given):\n";
  size_t i = 0;
  for (const SafetyStep& t : s.steps)
    o << "  " << ++i << ". " << t.what << "\n       " << t.flags << " -> " << mib(t.device_bytes) << " MiB: "
      << verdict_title(t.verdict.kind) << ", " << margin_text(t.verdict) << "\n";
  o << "  " << ++i << ". cap PyTorch at the budget so a short prediction fails fast: "
    << "torch.cuda.set_per_process_memory_fraction(" << fraction_text(s.memory_fraction) << ") before building the model (" << mib(s.cap_bytes)
    << " MiB for PyTorch); the peak is in step " << s.peak_step
    << ", so an OOM shows there instead of mid-run when other memory grows into the gap\n";
  return o.str();
}

}  // namespace memplan::cli
