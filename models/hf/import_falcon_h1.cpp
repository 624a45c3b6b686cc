// FalconH1Config (transformers 5.17 models/falcon_h1/configuration_falcon_h1.py) and the shapes
// models/falcon_h1/modeling_falcon_h1.py derives from it.
//
// Class defaults: vocab 128000, hidden 4096, intermediate 14336, 32 layers, 32 heads, num_key_value_heads 8 (None:
// the heads), head_dim getattr(config, "head_dim", hidden // heads) (not a class field: a config.json key is kept
// as an attribute), hidden_act "silu" (the SwiGLU MLP's and the mixer's activation), max_position_embeddings 8192,
// attention_dropout 0, attention_bias False (q, k, v and o), mlp_bias False, tie_word_embeddings False,
// num_logits_to_keep 1 (generate()'s logits_to_keep). Mixer: mamba_d_ssm 1024 (None: mamba_expand * hidden),
// mamba_n_heads 128, mamba_d_head "auto" (d_ssm // heads), mamba_n_groups 1, mamba_d_state 256, mamba_d_conv 4,
// mamba_expand 2, mamba_chunk_size 256, mamba_conv_bias True, mamba_proj_bias False (in_proj), projectors_bias False
// (the mixer's out_proj), mamba_rms_norm False, mamba_norm_before_gate True. The muP multipliers (embedding,
// lm_head, key, attention in / out, ssm in / out, ssm_multipliers [5], mlp_multipliers [2]) change no allocation;
// their shapes are checked (the modeling code unpacks two MLP multipliers and indexes five SSM ones).
// Refused, naming the field: hidden_act other than silu, heads x d_head other than d_ssm (validate_architecture),
// groups not dividing the heads (repeat_interleave), num_logits_to_keep other than 1, an unmodelled rope type.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// A list of numbers of at least `n` entries (null / absent: the class's default of ones).
void check_multipliers(const ConfigReader& r, const char* key, size_t n, bool exact) {
  const json* v = r.raw(key);
  if (v == nullptr) return;
  bool ok = v->is_array() && (exact ? v->size() == n : v->size() >= n);
  if (ok)
    for (const json& e : *v) ok = ok && e.is_number();
  if (!ok)
    throw InputError(r.name(key), dump_short(*v),
                     "must be a list of " + std::string(exact ? "" : "at least ") + std::to_string(n) +
                         " numbers (FalconH1 " + (exact ? "unpacks" : "indexes") + " them)");
}

}  // namespace

TransformerSpec import_falcon_h1(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 128000);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 14336);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  if (r.explicit_null("num_key_value_heads")) s.num_kv_heads = s.num_heads;
  check_kv_heads(r, s);
  s.head_dim = rotary_head_dim_floor(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled for falcon_h1 (silu is: the MLP's and the Mamba2 mixer's activation)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  check_rope_type(r, "falcon_h1");
  check_padding_idx(r, s.vocab_size);
  if (r.explicit_null("num_logits_to_keep"))
    throw InputError(r.name("num_logits_to_keep"), "null",
                     "generate() would compute every prompt logit; only 1 (the default) is modelled");
  if (r.non_negative({"num_logits_to_keep"}, 1) != 1)
    throw InputError(r.name("num_logits_to_keep"), dump_short(*r.raw("num_logits_to_keep")),
                     "generate() would compute that many prompt logits; only 1 (the default) is modelled");
  check_multipliers(r, "ssm_multipliers", 5, false);
  check_multipliers(r, "mlp_multipliers", 2, true);

  // The Mamba2 mixer.
  const int64_t expand = r.positive({"mamba_expand"}, 2);
  s.ssm_inner_size = r.explicit_null("mamba_d_ssm") ? expand * s.hidden_size : r.positive({"mamba_d_ssm"}, 1024);
  s.ssm_num_heads = r.positive({"mamba_n_heads"}, 128);
  const json* dh = r.raw("mamba_d_head");
  if (dh == nullptr || (dh->is_string() && dh->get<std::string>() == "auto"))
    s.ssm_head_dim = s.ssm_inner_size / s.ssm_num_heads;
  else if (dh->is_number_integer())
    s.ssm_head_dim = r.positive({"mamba_d_head"}, 1);
  else
    throw InputError(r.name("mamba_d_head"), dump_short(*dh), "must be a positive integer or \"auto\"");
  if (s.ssm_inner_size % s.ssm_num_heads != 0 || s.ssm_head_dim * s.ssm_num_heads != s.ssm_inner_size)
    throw InputError(r.name("mamba_n_heads"), std::to_string(s.ssm_num_heads),
                     "times mamba_d_head (" + std::to_string(s.ssm_head_dim) + ") must equal the mixer width " +
                         std::to_string(s.ssm_inner_size) + " (mamba_d_ssm, else mamba_expand * hidden_size)");
  s.ssm_groups = r.positive({"mamba_n_groups"}, 1);
  if (s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError(r.name("mamba_n_groups"), std::to_string(s.ssm_groups),
                     "must divide mamba_n_heads (" + std::to_string(s.ssm_num_heads) + ")");
  s.ssm_state_size = r.positive({"mamba_d_state"}, 256);
  s.ssm_conv_kernel = r.positive({"mamba_d_conv"}, 4);
  s.ssm_chunk_size = r.positive({"mamba_chunk_size"}, 256);
  s.ssm_conv_bias = r.boolean({"mamba_conv_bias"}, true);
  s.ssm_bias = r.boolean({"mamba_proj_bias"}, false);
  s.ssm_out_bias = r.boolean({"projectors_bias"}, false);
  s.ssm_rms_norm = r.boolean({"mamba_rms_norm"}, false);
  s.ssm_norm_before_gate = r.boolean({"mamba_norm_before_gate"}, true);
  if (s.ssm_rms_norm && s.ssm_inner_size % s.ssm_groups != 0)
    throw InputError(r.name("mamba_n_groups"), std::to_string(s.ssm_groups),
                     "must divide the mixer width for the grouped RMSNorm");
  return s;
}

}  // namespace memplan::hf
