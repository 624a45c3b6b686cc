// The attention ERNIE 4.5's modeling files write alike in transformers 5.17 (models/ernie4_5/modeling_ernie4_5.py
// and models/ernie4_5_moe/modeling_ernie4_5_moe.py: the same Attention.forward, apply_rotary_pos_emb and
// rotate_half), defined in engine/arch/decoders/dense/ernie4_5.cpp.
#pragma once

#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// Ernie4_5Attention.forward on the normed input x (layer weights `w`), with the rotary cos / sin kept in fp32
// [P, S, D] by the model: q / k / v projections and head views, the interleaved fp32 rotary embedding (its fp32
// q_embed / k_embed alive until both casts back exist), attention_core and o_proj. `weights`: eager attention's
// probabilities, held (bound to `_` by the decoder layer until it returns); kNoTensor for SDPA.
TensorId ernie_attention(GraphBuilder& b, const TransformerSpec& s, const LlamaLayerParams& w, TensorId x,
                         TensorId cos, TensorId sin, TensorId mask, TensorId& weights);

}  // namespace memplan
