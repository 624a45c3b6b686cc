// create_sliding_window_causal_mask's SDPA bool mask where generate() passes its attention mask (rows = B):
// masking_utils.sdpa_mask evaluates sliding_window_causal_mask_function = and_masks(sliding_window_overlay,
// causal_mask_function) on broadcast index tensors (ones(()) & (kv > q - window), then & (kv <= q), each comparison
// and each & a fresh [1, 1, q, kv] bool), and generate()'s padding mask nests that inside and_masks(mask_function,
// padding_mask_function): the outer ones(()) & inner is one more fresh [1, 1, q, kv] before the [rows, 1, q, kv] &
// with the padding gather (whole-run streams: rq-phi3-infer / f2-phi3med-infer past the window, f2-sc2-sw1k-infer,
// f15-cohere2sw-infer: a a f a a f f a f, then the [B, 1, q, kv] mask). Without rows > 1 there is no padding mask and builders.h sliding_sdpa_mask applies. The
// models whose mask function the model wraps this way (phi3 / starcoder2, cohere2, olmo3, ministral ...) call it.
#pragma once
#include <cstdint>

#include "engine/graph_builder.h"

namespace memplan {

TensorId nested_sliding_sdpa_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv);

}  // namespace memplan
