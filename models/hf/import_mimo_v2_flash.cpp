// MiMoV2FlashConfig (transformers 5.17 models/mimo_v2_flash/configuration_mimo_v2_flash.py) and what the modeling
// file (modeling_mimo_v2_flash.py) reads of it.
//
// Class defaults: vocab 152576, hidden 4096, intermediate 16384 (the dense MLP), 48 layers, 64 heads, 4 KV heads (a
// sliding layer doubles them), head_dim 192 (query / key), v_head_dim 128, silu, max_position_embeddings 131072,
// tie False, attention_bias False (q / k / v; o_proj never), attention_dropout 0, moe_intermediate_size 2048,
// num_experts_per_tok 8, n_routed_experts 256 (attribute_map: num_local_experts), routed_scaling_factor 1.0 (None ->
// 1.0), n_group 1, topk_group 1, norm_topk_prob True, eos_token_id None, sliding_window 128,
// attention_value_scale 0.707 (None -> 1.0: the values are multiplied either way). __post_init__: layer_types None
// -> "full_attention" for layer 0 and every layer with (i + 1) % 6 == 0, else "sliding_attention"; mlp_layer_types
// None -> "dense" then "sparse"; rope_parameters None -> {"full_attention": {"rope_type": "default", "rope_theta":
// 5e6, "partial_rotary_factor": 0.334}, "sliding_attention": {... 1e4, 0.334}}. convert_rope_params_to_dict is
// overridden to leave rope_parameters as given: MiMoV2FlashRotaryEmbedding reads rope_parameters[layer_type] for each
// type of layer_types, and int(head_dim * its partial_rotary_factor (default 0.334)) dimensions rotate. Top-level
// rope_theta / partial_rotary_factor and the hub's remote-code keys (hybrid_layer_pattern, moe_layer_freq, swa_*,
// layernorm_epsilon, add_swa_attention_sink_bias) are unread by the 5.17 classes.
// The config is a strict dataclass: null for an int field fails its type check, refused here naming the field.
// Refused, naming the field: a layer_types / mlp_layer_types entry other than the two known strings or a list of
// another length, a rope_parameters that is not keyed by the layer types present (the rotary embedding indexes it
// by type), a rope type other than default / linear / yarn / llama3 (they change inv_freq's values only), an odd
// rotary dimension, heads not divisible by the KV heads of either layer type, hidden_act other than silu, the
// grouped router's shape checks (grouped_topk.h), quantization_config (fp8 checkpoints: size the bf16 model).
#include <memory>
#include <string>

#include "engine/arch/decoders/moe/mimo_v2_flash_fields.h"
#include "engine/checked.h"
#include "models/hf/grouped_topk.h"
#include "models/hf/per_type_rope.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_mimo_v2_flash(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized mimo_v2_flash weights (fp8) are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "max_position_embeddings", "moe_intermediate_size",
                        "num_experts_per_tok", "n_routed_experts", "n_group", "topk_group", "head_dim", "v_head_dim",
                        "sliding_window"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (MiMoV2FlashConfig: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 152576);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 16384);
  s.num_layers = r.positive({"num_hidden_layers"}, 48, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 4);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 192);
  auto f = std::make_shared<MiMoV2FlashFields>();
  f->v_head_dim = r.positive({"v_head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "mimo_v2_flash is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, false);
  if (const json* v = r.raw("attention_value_scale"); v && !v->is_number())
    throw InputError(r.name("attention_value_scale"), dump_short(*v), "must be a number or null");
  check_padding_idx(r, s.vocab_size);
  s.generate_without_eos = !r.present("eos_token_id");  // class default None

  // layer_types (default: full at layer 0 and every sixth layer), and the window the sliding ones use.
  s.sliding_window = r.positive({"sliding_window"}, 128);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s))
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = !(i == 0 || (i + 1) % 6 == 0);
  bool any_full = false, any_sliding = false;
  for (uint8_t t : s.sliding_layers) (t ? any_sliding : any_full) = true;
  if (any_sliding && s.num_heads % checked_mul(2, s.num_kv_heads) != 0)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "a sliding_attention layer has 2 x num_key_value_heads KV heads, which must divide "
                     "num_attention_heads (" + std::to_string(s.num_heads) + ")");

  // mlp_layer_types (default: the first layer dense, the rest sparse).
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  if (const json* lt = r.raw("mlp_layer_types")) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) != s.num_layers)
      throw InputError(r.name("mlp_layer_types"), dump_short(*lt),
                       "must be a list of " + std::to_string(s.num_layers) + " entries (num_hidden_layers)");
    for (size_t i = 0; i < lt->size(); ++i) {
      const json& t = (*lt)[i];
      const std::string v = t.is_string() ? t.get<std::string>() : std::string();
      if (v != "dense" && v != "sparse")
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be \"dense\" or \"sparse\"");
      s.moe_layers[i] = v == "sparse" ? 1 : 0;
    }
  } else if (s.num_layers > 0) {
    s.moe_layers[0] = 0;
  }
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;

  // The routed experts and the noaux_tc router (MiMoV2FlashTopkRouter: DeepseekV3TopkRouter's statements).
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 2048);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 256, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  s.moe_topk_method = "noaux_tc";
  s.moe_n_group = r.positive({"n_group"}, 1);
  s.moe_topk_group = r.positive({"topk_group"}, 1);
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  if (const json* v = r.raw("routed_scaling_factor"); v && !v->is_number())
    throw InputError(r.name("routed_scaling_factor"), dump_short(*v), "must be a number or null");
  if (any_moe) check_grouped_topk(r, s, "MiMoV2FlashTopkRouter");

  // The rotary width of each layer type present.
  const json* rope = r.raw("rope_parameters");
  if (rope != nullptr && !rope->is_object())
    throw InputError(r.name("rope_parameters"), dump_short(*rope), "must be a dict keyed by layer type");
  // int(head_dim * rope_parameters[type]["partial_rotary_factor"]), 0.334 where the config gives none
  const char* rotary = "MiMoV2FlashRotaryEmbedding";
  if (any_full)
    f->full_rotary_dim = per_type_rotary_dim(r, rope, "full_attention", 0.334, 0.334, s.head_dim, rotary, "mimo_v2_flash");
  if (any_sliding)
    f->sliding_rotary_dim =
        per_type_rotary_dim(r, rope, "sliding_attention", 0.334, 0.334, s.head_dim, rotary, "mimo_v2_flash");
  s.family_fields = f;
  return s;
}

}  // namespace memplan::hf
