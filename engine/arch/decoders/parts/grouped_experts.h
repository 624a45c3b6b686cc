// The routed experts of minimax_m2 and lfm2_moe (engine/arch/decoders/moe/minimax_m2.cpp, lfm2_moe.cpp):
// transformers 5.17 integrations/moe.py grouped_mm_experts_forward for bias-free gated experts, as
// deepseek_parts.h experts_grouped_mm replays it, with grouped_mm's kernel-argument temporaries as the whole-run
// streams of every grouped_mm family show them: E * 60 bytes and a fixed 67,584 bytes per call (8 to 256
// experts: 960 / 1920 / 3840 / 15360 with 67,584 each time; experts_grouped_mm takes the second as E * 4224,
// which equals it at 16 experts only), and none when the experts run in fp32 (fp32 / amp streams: no such pair).
// generate()'s decode steps go to experts_grouped_mm (batched_mm_experts_forward).
#pragma once
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

// The experts over flat [T, H] with routing weights top_w [T, K] (any dtype: the product with the expert output
// promotes) and indices top_idx [T, K]; returns [T, H] in flat's dtype. `e` must have no biases and the default gate.
TensorId grouped_experts(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx);

}  // namespace memplan
