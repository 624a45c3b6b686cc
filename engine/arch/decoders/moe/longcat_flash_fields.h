// LongCat-Flash's own config values (transformers 5.17 models/longcat_flash/configuration_longcat_flash.py), which
// no TransformerSpec field means: set by models/hf/import_longcat_flash.cpp, read by
// engine/arch/decoders/moe/longcat_flash.cpp. The rest sit in TransformerSpec fields of the same meaning: num_layers
// (config.num_layers: decoder layers, each with two attentions and two dense MLPs), intermediate_size
// (ffn_hidden_size), moe_intermediate_size (expert_ffn_hidden_size), num_experts (n_routed_experts),
// num_experts_per_tok (moe_topk) and the MLA widths.
#pragma once
#include "engine/arch/spec.h"

namespace memplan {

struct LongcatFlashFields : FamilyFields {
  // zero_expert_num: identity ("zero-computation") experts appended to the routed ones. The router scores
  // n_routed_experts + zero_expert_num experts, and experts.gate_up_proj has a [2 I, H] slab for each of them
  // (torch.empty(total_experts, ...)), the identity experts' never read; down_proj only the routed experts'.
  int64_t zero_experts = 256;
  // router_bias (getattr(config, "router_bias", False)): the router classifier's bias [n_routed + zero].
  bool router_bias = false;
};

}  // namespace memplan
