// `memplan fit` and LoRA / QLoRA (issue 13): the parameter-efficient remedies that follow when full fine-tuning
// does not fit (peft LoRA r=16 on all linear layers, then QLoRA: bitsandbytes nf4 + double quant, bf16 compute,
// the same adapters), and the largest micro-batch a configuration fits with.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "engine/run_config.h"

namespace memplan::cli {

// Device bytes of one configuration (the fit command's closed replay under the capacity).
using DeviceBytesFn = std::function<int64_t(const RunConfig&)>;

struct BatchFit {
  int64_t batch = 0;         // largest micro-batch that fits (0: not even 1)
  int64_t device_bytes = 0;  // its device total
};
// Doubling, then bisection over the micro-batch (device bytes grow with the batch). At most `max_batch`.
BatchFit largest_fitting_batch(const DeviceBytesFn& device_bytes, RunConfig c, int64_t capacity_bytes,
                               int64_t max_batch = 4096);

// The two remedies, applied on top of `cur` (checkpointing and micro-batch kept). The optimizer goes back to the
// one asked for (`asked`): practitioners train adapters with AdamW, whose state is then small.
// qlora: nf4 + double quant, bf16 compute where the GPU has bf16 (else fp16), 16-bit base outside the linears.
RunConfig lora_remedy(const RunConfig& cur, const RunConfig& asked, bool qlora, bool has_bf16);
// The flags that select it, e.g. "--lora-r 16 --lora-alpha 32 --lora-targets all-linear --quantize-base nf4
// --double-quant --precision bf16".
std::string lora_remedy_flags(const RunConfig& c, const RunConfig& before);

}  // namespace memplan::cli
