// HunYuanMoEV1Config (transformers 5.17 models/hunyuan_v1_moe/configuration_hunyuan_v1_moe.py) and what the
// modeling code reads of it (models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py).
//
// Class defaults: vocab 290943, hidden 4096, intermediate 11008 (the width of the shared MLP and of every routed
// expert: HunYuanMoEV1Experts reads config.intermediate_size), 32 layers, 32 heads, num_key_value_heads None =>
// heads, hidden_act "silu" (the experts' default gate and LlamaMLP's swiglu: the one modelled),
// max_position_embeddings 2048, tie False, attention_bias False (q / k / v / o), attention_dropout 0, num_experts 1,
// moe_topk 1. head_dim None is read as getattr(config, "head_dim", ...) (None: the module cannot be built); an absent
// head_dim is taken as hidden // heads, as hunyuan_v1_dense's importer does. num_experts as a per-layer list cannot
// build HunYuanMoEV1Experts (torch.empty of a list): refused. moe_topk may be a per-layer list (HunYuanMoEV1Gate
// indexes it); modelled when every entry is equal, else refused naming the entry. The hub checkpoints' other keys
// (moe_intermediate_size, num_shared_expert, use_mixed_mlp_moe, use_qk_norm, use_cla, ...) are not read by 5.17.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_hunyuan_v1_moe(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {290943, 4096, 11008, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "hunyuan_v1_moe is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  if (const json* e = r.raw("num_experts"); e && e->is_array())
    throw InputError(r.name("num_experts"), dump_short(*e),
                     "must be an integer (HunYuanMoEV1Experts sizes its weights by it; a per-layer list cannot build)");
  s.num_experts = r.positive({"num_experts", "num_local_experts"}, 1);
  if (const json* k = r.raw("moe_topk"); k && k->is_array()) {
    if (k->empty()) throw InputError(r.name("moe_topk"), "[]", "must hold one entry per layer");
    if (static_cast<int64_t>(k->size()) < s.num_layers)
      throw InputError(r.name("moe_topk"), dump_short(*k),
                       "has fewer entries than num_hidden_layers (" + std::to_string(s.num_layers) + ")");
    for (size_t i = 0; i < k->size(); ++i) {
      const json& v = (*k)[i];
      const std::string field = r.name("moe_topk[" + std::to_string(i) + "]");
      if (!v.is_number_integer() || v.get<int64_t>() <= 0)
        throw InputError(field, dump_short(v), "must be a positive integer");
      if (i == 0) s.num_experts_per_tok = v.get<int64_t>();
      else if (v.get<int64_t>() != s.num_experts_per_tok)
        throw InputError(field, dump_short(v), "differs from moe_topk[0]: per-layer top-k is not modelled");
    }
  } else {
    s.num_experts_per_tok = r.positive({"moe_topk", "num_experts_per_tok"}, 1);
  }
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("moe_topk"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;
  check_rope_type(r, "hunyuan_v1_moe");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
