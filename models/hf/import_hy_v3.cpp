// HYV3Config (transformers 5.17 models/hy_v3/configuration_hy_v3.py; Tencent Hy3) and what HYV3Attention,
// HYV3TopKRouter, HYV3Experts, HYV3MoE and HYV3DecoderLayer read of it (modeling_hy_v3.py).
//
// Class defaults: vocab 120832, hidden 4096, intermediate 13312 (the dense MLP), 80 layers, 64 heads, 8 kv heads,
// head_dim 128 (a field), silu, max_position_embeddings 131072, tie False, attention_bias False (q / k / v / o),
// attention_dropout 0.0, mlp_bias False (gate / up / down, the shared experts' too), num_experts 192 (attribute_map:
// num_local_experts), num_experts_per_tok 8, num_shared_experts 1, moe_intermediate_size 1536, router_scaling_factor
// 2.826, enable_moe_fp32_combine True, mlp_layer_types None (=> ["dense"] + ["sparse"] * (num_hidden_layers - 1)),
// eos_token_id None (generate() has no EOS tensor). The attention's q_norm / k_norm (RMSNorm over head_dim) always
// exist; the rotary embedding covers the whole head on every layer (no sliding window, no partial rotary: a
// sliding_window key is refused, a rope type other than inv_freq-only too). The class is a strict dataclass: null
// for the int fields is refused naming the field (num_experts / num_experts_per_tok / num_shared_experts are
// `int | None`, but None fails in HYV3Experts / HYV3TopKRouter / HYV3MoE when a layer is sparse). Refused:
// hidden_act other than silu / swish, num_experts_per_tok above num_experts, quantization_config.
#include <memory>

#include "engine/arch/decoders/moe/hy_v3_fields.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_hy_v3(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized hy_v3 weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "head_dim", "max_position_embeddings", "moe_intermediate_size"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (HYV3Config: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 120832);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 13312);
  s.num_layers = r.positive({"num_hidden_layers"}, 80, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "hy_v3 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  if (const json* w = r.raw("sliding_window"); w != nullptr && !w->is_null())
    throw InputError(r.name("sliding_window"), dump_short(*w), "hy_v3 has no sliding-window attention");
  // A rope dict (rope_parameters, else rope_scaling; null means none) whose type changes more than inv_freq's
  // values is refused, as check_rope_type does for a present dict.
  for (const char* k : {"rope_parameters", "rope_scaling"}) {
    const json* d = r.raw(k);
    if (d == nullptr || d->is_null()) continue;
    if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
    auto t = d->find("rope_type");
    if (t == d->end()) t = d->find("type");
    if (t != d->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic" && *t != "yarn" &&
        *t != "llama3")
      throw InputError(r.name(std::string(k) + ".rope_type"), dump_short(*t),
                       "is not modelled for hy_v3 (default, linear, dynamic, yarn, llama3 are)");
    break;
  }
  s.rotary_dim = s.head_dim;

  // mlp_layer_types, else layer 0 dense and the rest sparse.
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.moe_layers[0] = 0;
  if (const json* lt = r.raw("mlp_layer_types"); lt != nullptr && !lt->is_null()) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) < s.num_layers)
      throw InputError(r.name("mlp_layer_types"), dump_short(*lt),
                       "must be a list of at least num_hidden_layers (" + std::to_string(s.num_layers) +
                           ") entries (HYV3DecoderLayer indexes it by layer)");
    for (size_t i = 0; i < static_cast<size_t>(s.num_layers); ++i) {
      const json& t = (*lt)[i];
      if (!t.is_string())
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be a string (\"sparse\" or \"dense\")");
      s.moe_layers[i] = t.get<std::string>() == "sparse" ? 1 : 0;
    }
  }
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1536);
  if (any_moe) {
    for (const char* k : {"num_experts", "num_local_experts", "num_experts_per_tok", "num_shared_experts"})
      if (r.explicit_null(k))
        throw InputError(r.name(k), "null", "must be an integer where mlp_layer_types has a sparse layer");
  }
  s.num_experts = r.positive({"num_experts", "num_local_experts"}, 192, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  s.num_shared_experts = r.non_negative({"num_shared_experts"}, 1);  // 0: a shared MLP of intermediate_size (HYV3MLP)
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + "): torch.topk fails");
  s.moe_norm_topk_prob = true;  // HYV3TopKRouter always renormalises its top-k weights
  s.generate_without_eos = !r.present("eos_token_id");  // class default None

  auto f = std::make_shared<HyV3Fields>();
  f->moe_fp32_combine = r.boolean({"enable_moe_fp32_combine"}, true);
  s.family_fields = f;
  return s;
}

}  // namespace memplan::hf
