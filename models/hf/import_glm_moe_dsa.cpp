// GlmMoeDsaConfig (transformers 5.17 models/glm_moe_dsa/configuration_glm_moe_dsa.py; GLM-5).
//
// Class defaults (the dataclass fields of 5.17): vocab 154880, hidden 6144, intermediate 12288,
// moe_intermediate_size 2048, 78 layers, 64 heads, num_key_value_heads 64, n_shared_experts 1, n_routed_experts 256
// (num_experts re-routed to it), routed_scaling_factor 2.5, kv_lora_rank 512, q_lora_rank 2048, qk_rope_head_dim 64,
// v_head_dim 256, qk_nope_head_dim 192, n_group 1, topk_group 1, num_experts_per_tok 8, norm_topk_prob True,
// max_position_embeddings 202752, tie False, attention_bias False, attention_dropout 0.0, index_topk 2048,
// index_head_dim 128, index_n_heads 32, first_k_dense_replace 3 (mlp_layer_types None => that many dense layers,
// then sparse). GlmMoeDsaAttention builds its indexer from q_lora_rank (wq_b) and has no q_proj path: a null
// q_lora_rank is refused; the indexer splits its heads into qk_rope_head_dim rotated and the rest passed: refused
// unless qk_rope_head_dim < index_head_dim.
// indexer_types (per layer "full" / "shared"): the list, else index_topk_pattern (a string of F / S or a list),
// else index_topk_freq (1) and index_skip_topk_offset (2): layer i is full when max(i - offset + 1, 0) % freq == 0
// (the defaults make every layer full). A shared layer 0 fails at the forward (no previous top-k): refused.
// mlp_layer_types is read when present ("sparse" builds the MoE); layer_types must be deepseek_sparse_attention
// (the model's only mask key). quantization_config (the published FP8 checkpoint) is refused.
#include <algorithm>
#include <string>
#include <vector>

#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

namespace {

// One per-layer list of strings, at least num_hidden_layers long; `allowed` maps each accepted string to its flag.
std::vector<uint8_t> layer_flags(const ConfigReader& r, const char* key, const json& list, int64_t layers,
                                 const char* one, const char* zero) {
  if (!list.is_array() || static_cast<int64_t>(list.size()) < layers)
    throw InputError(r.name(key), dump_short(list),
                     "must be a list of at least num_hidden_layers (" + std::to_string(layers) + ") entries");
  std::vector<uint8_t> flags(static_cast<size_t>(layers), 0);
  for (size_t i = 0; i < flags.size(); ++i) {
    const json& t = list[i];
    if (!t.is_string() || (t.get<std::string>() != one && t.get<std::string>() != zero))
      throw InputError(r.name(key) + "[" + std::to_string(i) + "]", dump_short(t),
                       std::string("must be \"") + one + "\" or \"" + zero + "\"");
    flags[i] = t.get<std::string>() == one ? 1 : 0;
  }
  return flags;
}

}  // namespace

TransformerSpec import_glm_moe_dsa(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized glm_moe_dsa weights (fp8) are not modelled; remove the key to size the bf16 model");
  if (r.explicit_null("q_lora_rank"))
    throw InputError(r.name("q_lora_rank"), "null",
                     "GlmMoeDsaIndexer builds wq_b from q_lora_rank (and the attention has no q_proj path)");
  TransformerSpec s;
  import_deepseek_mla_moe(r, s, {154880, 6144, 12288, 78, 64, 202752, 256, 1, 2048, 3, 8, 1, 1});
  // The MLA widths whose GlmMoeDsaConfig defaults differ from DeepSeek's (the shared reader's 1536 / 128 / 128).
  s.q_lora_rank = r.positive({"q_lora_rank"}, 2048);
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 192);
  s.v_head_dim = r.positive({"v_head_dim"}, 256);
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;  // the query / key head dim the attention sees
  s.moe_topk_method = "noaux_tc";
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  s.rope_interleave = true;
  s.index_n_heads = r.positive({"index_n_heads"}, 32);
  s.index_head_dim = r.positive({"index_head_dim"}, 128);
  s.index_topk = r.positive({"index_topk"}, 2048);
  if (s.qk_rope_head_dim >= s.index_head_dim)
    throw InputError(r.name("index_head_dim"), std::to_string(s.index_head_dim),
                     "must exceed qk_rope_head_dim (" + std::to_string(s.qk_rope_head_dim) +
                         "): the indexer splits its heads into rotated and passed dimensions");
  if (const json* lt = r.raw("layer_types"); lt != nullptr && !lt->is_null()) {
    if (!lt->is_array()) throw InputError(r.name("layer_types"), dump_short(*lt), "must be a list");
    for (size_t i = 0; i < lt->size() && static_cast<int64_t>(i) < s.num_layers; ++i)
      if (!(*lt)[i].is_string() || (*lt)[i].get<std::string>() != "deepseek_sparse_attention")
        throw InputError(r.name("layer_types") + "[" + std::to_string(i) + "]", dump_short((*lt)[i]),
                         "must be \"deepseek_sparse_attention\" (the model's only causal mask key)");
  }
  // mlp_layer_types: "sparse" builds GlmMoeDsaMoE (the class derives first_k_dense_replace's pattern when absent)
  if (const json* mt = r.raw("mlp_layer_types"); mt != nullptr && !mt->is_null())
    s.moe_layers = layer_flags(r, "mlp_layer_types", *mt, s.num_layers, "sparse", "dense");
  // indexer_types, else index_topk_pattern, else the freq / offset schedule
  std::vector<uint8_t> shared(static_cast<size_t>(s.num_layers), 0);
  if (const json* it = r.raw("indexer_types"); it != nullptr && !it->is_null()) {
    shared = layer_flags(r, "indexer_types", *it, s.num_layers, "shared", "full");
  } else if (const json* pt = r.raw("index_topk_pattern"); pt != nullptr && !pt->is_null()) {
    if (pt->is_string()) {
      const std::string p = pt->get<std::string>();
      if (static_cast<int64_t>(p.size()) < s.num_layers)
        throw InputError(r.name("index_topk_pattern"), dump_short(*pt),
                         "must have a letter per layer (" + std::to_string(s.num_layers) + ")");
      for (size_t i = 0; i < shared.size(); ++i) {
        if (p[i] != 'F' && p[i] != 'S')
          throw InputError(r.name("index_topk_pattern"), dump_short(*pt), "letters must be F (full) or S (shared)");
        shared[i] = p[i] == 'S' ? 1 : 0;
      }
    } else {
      shared = layer_flags(r, "index_topk_pattern", *pt, s.num_layers, "shared", "full");
    }
  } else {
    const int64_t freq = std::max<int64_t>(r.non_negative({"index_topk_freq"}, 1), 1);
    const int64_t offset = r.non_negative({"index_skip_topk_offset"}, 2);
    for (int64_t i = 0; i < s.num_layers; ++i)
      shared[static_cast<size_t>(i)] = (std::max<int64_t>(i - offset + 1, 0) % freq) == 0 ? 0 : 1;
  }
  if (!shared.empty() && shared[0] != 0)
    throw InputError(r.name("indexer_types") + "[0]", "\"shared\"",
                     "layer 0 has no previous full indexer layer whose top-k it could reuse (GlmMoeDsaAttention raises)");
  bool any_shared = false;
  for (uint8_t f : shared) any_shared = any_shared || f != 0;
  if (any_shared) s.index_shared_layers = shared;
  bool any_moe = s.moe_layers.empty() ? s.first_dense_layers < s.num_layers : false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  if (any_moe) check_grouped_topk(r, s, "GlmMoeDsaTopkRouter");
  return s;
}

}  // namespace memplan::hf
