// The ledger of a LoRA / QLoRA run (issue 13): sub-rows of the peak ledger's `weights` (frozen base, bitsandbytes'
// quantised base with its quant state, the fp32 adapters, modules_to_save copies) that add up to that row, what
// the gradients and optimizer state belong to, and where paged optimizer state would live.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "engine/ledger.h"
#include "engine/run_config.h"
#include "engine/arch/spec.h"

namespace memplan::cli {

struct PeftWeights {
  int64_t frozen_base = 0;     // the rest of `weights`: frozen 16-/32-bit parameters and buffers
  int64_t quantized_base = 0;  // Params4bit / Int8Params storage plus absmax / code / offset / nested state
  int64_t adapters = 0;        // lora_A / lora_B
  int64_t saved_copies = 0;    // modules_to_save: the trainable copies (the originals stay in frozen_base)
};
// Splits the `weights` row (ledger bytes, 512-rounded like the ledger) of the graph this run builds.
PeftWeights peft_weights(const ModelSpec& m, const RunConfig& c, int64_t weights_row_bytes);

// Text lines printed under the ledger (empty unless LoRA or quantisation is on), and the same as JSON.
std::string peft_ledger_lines(const ModelSpec& m, const RunConfig& c, const Ledger& at_peak);
nlohmann::json peft_ledger_json(const ModelSpec& m, const RunConfig& c, const Ledger& at_peak);

}  // namespace memplan::cli
