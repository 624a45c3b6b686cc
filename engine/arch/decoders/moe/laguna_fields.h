// LagunaForCausalLM's own values (transformers 5.17 models/laguna), set by models/hf/import_laguna.cpp and read by
// engine/arch/decoders/moe/laguna.cpp through family_fields<LagunaFields>(spec). The values TransformerSpec already
// means exactly are read from it: num_kv_heads, head_dim, sliding_window and sliding_layers (layer_types), moe_layers
// (mlp_layer_types "sparse"), num_experts, num_experts_per_tok, moe_intermediate_size, intermediate_size (the dense
// MLP), attention_bias (q / k / v / o).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

struct LagunaFields : FamilyFields {
  // config.num_attention_heads_per_layer (default: num_attention_heads for every layer): layer i's query heads.
  std::vector<int64_t> heads_per_layer;
  // config.gating True / "per-head": g_proj has one output per head ([B, S, heads] gate broadcast over head_dim);
  // "per-element": heads * head_dim outputs.
  bool gate_per_head = true;
  // config.moe_router_logit_softcapping (default 0.0): > 0 rebinds the router logits to tanh(logits / cap) * cap.
  double router_softcap = 0.0;
  // config.shared_expert_intermediate_size (default 512): the always-on shared expert's SwiGLU width (no gate on its
  // output, unlike qwen2_moe's shared_expert_intermediate_size).
  int64_t shared_intermediate = 512;
  // int(head_dim * rope_parameters[type]["partial_rotary_factor"]) for the full_attention and sliding_attention
  // layers (class defaults: 0.5 and 1.0).
  int64_t full_rotary_dim = 64;
  int64_t sliding_rotary_dim = 128;
};

}  // namespace memplan
