// LoRA / QLoRA sub-rows of the peak ledger (cli/report_lora.h).
#include "cli/report_lora.h"

#include <cstdio>
#include <string_view>

#include "cli/report.h"
#include "engine/arch/builders.h"
#include "engine/graph.h"

namespace memplan::cli {

namespace {
int64_t rounded(int64_t b) { return (b + 511) / 512 * 512; }  // torch.cuda.memory_allocated's 512-B blocks
bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool peft_on(const RunConfig& c) { return c.mode == Mode::training ? (c.lora.enabled() || c.quant.enabled()) : c.quant.enabled(); }
}  // namespace

PeftWeights peft_weights(const ModelSpec& m, const RunConfig& c, int64_t weights_row_bytes) {
  PeftWeights w;
  const Graph g = build_graph(m, c);
  for (const TensorInfo& t : g.tensors) {
    if ((t.kind != TensorKind::param && t.kind != TensorKind::buffer) || t.bytes <= 0 || t.name < 0) continue;
    const std::string_view name = g.name_of(t.name);
    if (has(name, ".lora_A.") || has(name, ".lora_B.")) w.adapters += rounded(t.bytes);
    else if (has(name, ".modules_to_save.")) w.saved_copies += rounded(t.bytes);
    // GraphBuilder::quantized_linear (engine/lora.cpp): the packed weight and its quant-state buffers are uint8.
    else if (c.quant.enabled() && t.dtype == DType::u8) w.quantized_base += rounded(t.bytes);
  }
  w.frozen_base = weights_row_bytes - w.adapters - w.saved_copies - w.quantized_base;  // the rows add up
  return w;
}

std::string peft_ledger_lines(const ModelSpec& m, const RunConfig& c, const Ledger& at_peak) {
  if (!peft_on(c)) return {};
  const PeftWeights w = peft_weights(m, c, at_peak[Row::weights]);
  std::string o;
  char line[256];
  auto row = [&](const char* what, int64_t b, const char* note) {
    std::snprintf(line, sizeof line, "    %-22s %10s MiB  %s\n", what, mib(b).c_str(), note);
    o += line;
  };
  o += "  weights, by part:\n";
  row("frozen base", w.frozen_base, c.quant.enabled() ? "(embeddings, norms, head, unquantised parts)" : "(no gradient, no optimizer state)");
  if (c.quant.enabled())
    row("quantised base", w.quantized_base,
        c.quant.base == QuantBase::int8 ? "(bitsandbytes Int8Params + SCB row scales; derived from its source)"
                                        : "(bitsandbytes packed 4-bit + absmax / code / nested quant state; derived)");
  if (w.adapters > 0) row("LoRA adapters", w.adapters, "(lora_A / lora_B, fp32)");
  if (w.saved_copies > 0) row("modules_to_save", w.saved_copies, "(trainable copies; the originals stay frozen)");
  if (c.lora.enabled() && c.mode == Mode::training) {
    o += "  gradients and optimizer_state are the adapters'" + std::string(w.saved_copies > 0 ? " and modules_to_save copies'" : "") +
         " only (the base is frozen).\n";
    if (c.optimizer == OptimizerKind::adam8bit)
      o += "  paged optimizers (bnb PagedAdamW*): their state lives in CUDA managed memory outside PyTorch's allocator; "
           "not in these rows, it takes device memory of the size of optimizer_state while resident.\n";
  }
  return o;
}

nlohmann::json peft_ledger_json(const ModelSpec& m, const RunConfig& c, const Ledger& at_peak) {
  if (!peft_on(c)) return nullptr;
  const PeftWeights w = peft_weights(m, c, at_peak[Row::weights]);
  return {{"weights_frozen_base", w.frozen_base}, {"weights_quantized_base", w.quantized_base},
          {"weights_lora_adapters", w.adapters}, {"weights_modules_to_save", w.saved_copies},
          {"gradients_and_optimizer_state", "adapters only (base frozen)"},
          {"paged_optimizer_state", "CUDA managed memory outside the caching allocator (not in these rows)"}};
}

}  // namespace memplan::cli
