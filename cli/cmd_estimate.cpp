// `memplan estimate`: the ledger of one training step for a model and configuration.
#include <ostream>

#include "cli/commands.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "engine/checked.h"
#include "engine/errors.h"
#include "models/gpu_specs.h"

namespace memplan::cli {

namespace {
// Non-PyTorch device memory when no calibration profile says otherwise: the H200 CUDA context once GEMM,
// SDPA, conv and cross-entropy kernels have loaded (lazy module loading), MECHANICS.md §2.
constexpr int64_t kDefaultNonPytorchBytes = int64_t{830} << 20;
}  // namespace

DeviceBudget device_budget(const RunFlags& f) {
  DeviceBudget d;
  d.non_pytorch_bytes = kDefaultNonPytorchBytes;
  if (!f.gpu.empty()) {
    const GpuSpec& g = find_gpu(f.gpu, "--gpu");
    d.gpu_name = g.id;
    d.capacity_bytes = g.memory_bytes;
    // A spec context figure is measured right after init; kernels loaded by a training step add to it.
    d.non_pytorch_bytes = std::max(d.non_pytorch_bytes, g.cuda_context_bytes);
  }
  if (f.gpu_memory_gib > 0) {
    d.capacity_bytes = static_cast<int64_t>(f.gpu_memory_gib * static_cast<double>(kGiB));
    if (d.gpu_name.empty()) d.gpu_name = std::to_string(f.gpu_memory_gib) + " GiB";
  }
  return d;
}

void register_estimate(CLI::App& app, std::ostream& out) {
  auto* cmd = app.add_subcommand("estimate", "memory of one training step: ledger, peak, reserved, fit");
  auto flags = std::make_shared<RunFlags>();
  add_run_flags(*cmd, *flags);
  cmd->callback([flags, &out] {
    const ModelSpec m = load_model_for(*flags);
    const RunConfig c = run_config_from(*flags, m);
    const DeviceBudget d = device_budget(*flags);
    EstimateOptions opt;
    opt.allocator.expandable_segments = flags->expandable_segments;
    if (d.capacity_bytes > 0) opt.allocator.capacity_bytes = std::max<int64_t>(0, d.capacity_bytes - d.non_pytorch_bytes);
    const Estimate e = estimate(m, c, opt);
    if (flags->json) out << estimate_json(m, c, e, d).dump(2) << "\n";
    else out << estimate_table(m, c, e, d);
  });
}

}  // namespace memplan::cli
