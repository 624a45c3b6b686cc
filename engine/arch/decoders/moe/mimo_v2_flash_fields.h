// MiMoV2FlashForCausalLM's own values (transformers 5.17 models/mimo_v2_flash), set by models/hf/import_mimo_v2_flash.cpp
// and read by engine/arch/decoders/moe/mimo_v2_flash.cpp through family_fields<MiMoV2FlashFields>(spec). The values
// TransformerSpec already means exactly are read from it: num_heads, num_kv_heads (the full-attention layers'; a
// sliding layer has twice as many), head_dim (the query / key head), sliding_window and sliding_layers (layer_types),
// moe_layers (mlp_layer_types "sparse"), the MoE and router fields (noaux_tc).
#pragma once
#include <cstdint>

#include "engine/arch/spec.h"

namespace memplan {

struct MiMoV2FlashFields : FamilyFields {
  // config.v_head_dim: the value head width (elements), narrower than the query / key head_dim; v_proj is
  // [kv_heads * v_head_dim, H] and o_proj [H, num_heads * v_head_dim].
  int64_t v_head_dim = 128;
  // int(head_dim * rope_parameters[type]["partial_rotary_factor"]) for the full_attention and sliding_attention
  // layers (elements of each head the rotary embedding rotates; the rest passes through apply_rotary_pos_emb's cat).
  // Class defaults: factor 0.334 for both types, head_dim 192 -> 64.
  int64_t full_rotary_dim = 64;
  int64_t sliding_rotary_dim = 64;
};

}  // namespace memplan
