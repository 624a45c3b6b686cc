// LoRA / QLoRA remedies and the largest fitting micro-batch for `memplan fit` (cli/fit_lora.h).
#include "cli/fit_lora.h"

#include <algorithm>
#include <cstdio>

#include "engine/run_config.h"

namespace memplan::cli {

BatchFit largest_fitting_batch(const DeviceBytesFn& device_bytes, RunConfig c, int64_t capacity_bytes,
                               int64_t max_batch) {
  BatchFit best;
  auto fits = [&](int64_t b) {
    c.batch_size = b;
    const int64_t bytes = device_bytes(c);
    if (bytes <= capacity_bytes && b > best.batch) best = {b, bytes};
    return bytes <= capacity_bytes;
  };
  if (!fits(1)) return best;
  int64_t lo = 1, hi = 0;  // lo fits; hi (when > 0) does not
  for (int64_t b = 2; b <= max_batch; b *= 2) {
    if (!fits(b)) {
      hi = b;
      break;
    }
    lo = b;
  }
  if (hi == 0) return best;  // fits up to max_batch
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return best;
}

RunConfig lora_remedy(const RunConfig& cur, const RunConfig& asked, bool qlora, bool has_bf16) {
  RunConfig c = cur;
  c.lora = LoraConfig{};
  c.lora.r = 16;
  c.lora.alpha = 32;     // the common 2 x r
  c.lora.dropout = 0.05;
  c.lora.all_linear = true;
  c.optimizer = asked.optimizer;
  const bool adam = c.optimizer == OptimizerKind::adam || c.optimizer == OptimizerKind::adamw;
  c.optimizer_impl = adam && cur.optimizer_impl == OptimizerImpl::fused ? OptimizerImpl::fused : asked.optimizer_impl;
  if (qlora) {
    c.quant = QuantConfig{};
    c.quant.base = QuantBase::nf4;
    c.quant.double_quant = true;
    c.quant.compute_bf16 = has_bf16;
    // The non-quantised parts (embeddings, norms, head) load in the compute dtype (torch_dtype=bfloat16).
    c.precision = has_bf16 ? Precision::bf16 : Precision::fp16;
  }
  return c;
}

std::string lora_remedy_flags(const RunConfig& c, const RunConfig& before) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", c.lora.alpha);
  std::string s = "--lora-r " + std::to_string(c.lora.r) + " --lora-alpha " + buf + " --lora-targets all-linear";
  if (c.quant.enabled()) {
    s += " --quantize-base nf4";
    if (c.quant.double_quant) s += " --double-quant";
    if (!c.quant.compute_bf16) s += " --quant-compute-dtype fp16";
  }
  if (c.precision != before.precision) s += " --precision " + std::string(precision_name(c.precision));
  if (c.optimizer != before.optimizer) s += " --optimizer " + std::string(optimizer_name(c.optimizer));
  if (c.optimizer_impl != before.optimizer_impl)
    s += std::string(" --optimizer-impl ") + (c.optimizer_impl == OptimizerImpl::fused ? "fused" : c.optimizer_impl == OptimizerImpl::foreach ? "foreach" : "forloop");
  return s;
}

}  // namespace memplan::cli
