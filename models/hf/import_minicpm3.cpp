// MiniCPM3Config (transformers 5.17 models/minicpm3/configuration_minicpm3.py) and what MiniCPM3Attention,
// MiniCPM3RotaryEmbedding, MiniCPM3DecoderLayer, MiniCPM3Model and MiniCPM3ForCausalLM read of it
// (modeling_minicpm3.py; engine/arch/decoders/dense/minicpm3.cpp).
//
// Class defaults (the 5.17 dataclass fields, "match the openbmb/MiniCPM3-4B checkpoint"): vocab 73448, hidden 2560,
// intermediate 6400, 62 layers, 40 heads, num_key_value_heads 40 (None => num_attention_heads), silu,
// max_position_embeddings 32768, tie_word_embeddings True, attention_bias False, attention_dropout 0.0, mlp_bias
// False, kv_lora_rank 256, q_lora_rank 768 (None => a plain q_proj), qk_nope_head_dim 64, qk_rope_head_dim 32,
// v_head_dim None (=> hidden_size // num_attention_heads), scale_emb 12, scale_depth 1.4 (None =>
// sqrt(num_hidden_layers)), dim_model_base 256 (None => hidden_size). head_dim is overwritten with qk_rope_head_dim
// in __post_init__ (the rotary embedding's width), whatever config.json says (the published one says 96).
// validate_architecture refuses hidden_size not a multiple of num_attention_heads (refused here, naming it).
// The rotary type changes only inv_freq's values (a few fp32 elements): any of default, linear, dynamic, yarn,
// llama3, longrope is read. Note: 5.17's yarn_apply_mscale reads rope_parameters["factor"] for every non-default
// type, and the published config's longrope dict has no factor (a KeyError in MiniCPM3Attention.__init__ unless
// the key is added); memplan sizes the model that builds once it is (the memory does not depend on its value).
// Refused: quantization_config, hidden_act other than silu / swish, num_key_value_heads != num_attention_heads
// (the expanded keys would be repeated: the MLA builder's check), an odd qk_rope_head_dim, a partial rotary factor
// other than 1 (cos / sin would not cover q_rot), a non-number scale_emb / scale_depth.
#include <cmath>
#include <memory>

#include "engine/arch/decoders/dense/minicpm3_fields.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

double number_or(const ConfigReader& r, const char* key, double dflt) {
  const json* v = r.raw(key);
  if (v == nullptr || v->is_null()) return dflt;
  if (!v->is_number() || !(v->get<double>() > 0.0) || !std::isfinite(v->get<double>()))
    throw InputError(r.name(key), dump_short(*v), "must be a positive number");
  return v->get<double>();
}

}  // namespace

TransformerSpec import_minicpm3(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized minicpm3 weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "max_position_embeddings"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (MiniCPM3Config: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 73448);
  s.hidden_size = r.positive({"hidden_size"}, 2560);
  s.intermediate_size = r.positive({"intermediate_size"}, 6400);
  s.num_layers = r.positive({"num_hidden_layers"}, 62, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 40);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("hidden_size"), std::to_string(s.hidden_size),
                     "must be a multiple of num_attention_heads (" + std::to_string(s.num_heads) +
                         "): MiniCPM3Config.validate_architecture");
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 40);
  check_kv_heads(r, s);
  if (s.num_kv_heads != s.num_heads)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention: transformers repeats the expanded keys otherwise");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "minicpm3 is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.kv_lora_rank = r.positive({"kv_lora_rank"}, 256);
  s.q_lora_rank = r.explicit_null("q_lora_rank") ? 0 : r.positive({"q_lora_rank"}, 768);
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 64);
  s.qk_rope_head_dim = r.positive({"qk_rope_head_dim"}, 32);
  if (s.qk_rope_head_dim % 2 != 0)
    throw InputError(r.name("qk_rope_head_dim"), std::to_string(s.qk_rope_head_dim),
                     "must be even (the rotary embedding rotates pairs)");
  s.v_head_dim = r.explicit_null("v_head_dim") ? s.hidden_size / s.num_heads
                                               : r.positive({"v_head_dim"}, s.hidden_size / s.num_heads);
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;  // the query / key head dim the attention sees
  s.rope_interleave = false;                             // apply_rotary_pos_emb (rotate_half)
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    const json* d = r.raw(k);
    if (d == nullptr || d->is_null()) continue;
    if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
    auto t = d->find("rope_type");
    if (t == d->end()) t = d->find("type");
    if (t != d->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic" && *t != "yarn" &&
        *t != "llama3" && *t != "longrope")
      throw InputError(r.name(std::string(k) + ".rope_type"), dump_short(*t),
                       "is not modelled for minicpm3 (default, linear, dynamic, yarn, llama3, longrope are)");
    break;
  }
  {
    std::string key;
    const double factor = partial_rotary_factor(r, 1.0, key);
    if (!(std::fabs(factor - 1.0) < 1e-9))
      throw InputError(r.name(key), std::to_string(factor),
                       "must be 1: the rotary embedding must cover all " + std::to_string(s.qk_rope_head_dim) +
                           " dims of q_rot / k_rot");
  }
  // Every layer is dense (MiniCPM3MLP): deepseek_layer_params reads first_dense_layers.
  s.first_dense_layers = s.num_layers;

  auto f = std::make_shared<MiniCPM3Fields>();
  if (const json* v = r.raw("scale_emb"); v != nullptr) {
    if (!v->is_number() || !std::isfinite(v->get<double>()))
      throw InputError(r.name("scale_emb"), dump_short(*v), "must be a number (MiniCPM3Config: int | float)");
    f->scale_emb = v->get<double>();
    f->scale_emb_integer = v->is_number_integer();
  }
  f->scale_depth = number_or(r, "scale_depth", r.explicit_null("scale_depth")
                                                   ? std::sqrt(static_cast<double>(s.num_layers))
                                                   : 1.4);
  f->dim_model_base = r.explicit_null("dim_model_base") ? s.hidden_size : r.positive({"dim_model_base"}, 256);
  s.family_fields = f;
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
