// DeepSeek-V4's configuration values that TransformerSpec has no field for, carried in spec.gemma3n_intermediate
// (a vector only the gemma3n builder reads otherwise; a deepseek_v4 spec never reaches it). spec.h sits in the
// engine's precompiled header (engine/CMakeLists.txt), so a new field there rebuilds every engine source; this
// packing keeps the family to its own files until the fields get names of their own.
// Written by models/hf/import_deepseek_v4.cpp, read by engine/arch/decoders/moe/deepseek_v4.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/arch/spec.h"

namespace memplan {

struct DeepseekV4Fields {
  int64_t hc_mult = 4;             // config.hc_mult: the residual is hc_mult parallel streams [B, S, hc, H]
  int64_t hc_sinkhorn_iters = 20;  // config.hc_sinkhorn_iters: Sinkhorn-Knopp steps of each mHC mapping
  int64_t o_groups = 8;            // config.o_groups: head groups of the grouped output projection (o_a_proj)
  int64_t o_lora_rank = 1024;      // config.o_lora_rank: each group's intermediate width
  int64_t score_func = 0;          // config.scoring_func: 0 sqrtsoftplus, 1 sigmoid, 2 softmax
  std::vector<uint8_t> hash_layers;  // config.mlp_layer_types[i] == "hash_moe" (tid2eid routing)
};

inline void set_deepseek_v4_fields(TransformerSpec& s, const DeepseekV4Fields& f) {
  s.gemma3n_intermediate = {f.hc_mult, f.hc_sinkhorn_iters, f.o_groups, f.o_lora_rank, f.score_func};
  for (uint8_t h : f.hash_layers) s.gemma3n_intermediate.push_back(h);
}

// Throws nothing: a spec without the packing (a native or hand-made deepseek_v4 spec) gets the class defaults and
// no hash layers.
inline DeepseekV4Fields deepseek_v4_fields(const TransformerSpec& s) {
  DeepseekV4Fields f;
  const auto& v = s.gemma3n_intermediate;
  if (v.size() < 5) return f;
  f.hc_mult = v[0];
  f.hc_sinkhorn_iters = v[1];
  f.o_groups = v[2];
  f.o_lora_rank = v[3];
  f.score_func = v[4];
  for (size_t i = 5; i < v.size(); ++i) f.hash_layers.push_back(static_cast<uint8_t>(v[i] != 0));
  return f;
}

}  // namespace memplan
