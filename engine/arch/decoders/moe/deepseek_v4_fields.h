// DeepseekV4Config's values no other family has (models/hf/import_deepseek_v4.cpp sets them; read by
// engine/arch/decoders/moe/deepseek_v4.cpp through family_fields). The defaults are the class's.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

struct DeepseekV4Fields : FamilyFields {
  int64_t hc_mult = 4;             // config.hc_mult: the residual is hc_mult parallel streams [B, S, hc, H]
  int64_t hc_sinkhorn_iters = 20;  // config.hc_sinkhorn_iters: Sinkhorn-Knopp steps of each mHC mapping
  int64_t o_groups = 8;            // config.o_groups: head groups of the grouped output projection (o_a_proj)
  int64_t o_lora_rank = 1024;      // config.o_lora_rank: each group's intermediate width
  int64_t score_func = 0;          // config.scoring_func: 0 sqrtsoftplus, 1 sigmoid, 2 softmax
  std::vector<uint8_t> hash_layers;  // config.mlp_layer_types[i] == "hash_moe" (tid2eid routing)
};

}  // namespace memplan
