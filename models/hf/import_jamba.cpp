// JambaConfig (transformers 5.17 models/jamba/configuration_jamba.py) and what models/jamba/modeling_jamba.py reads
// of it.
//
// Class defaults: vocab 65536, tie_word_embeddings False, hidden 4096, intermediate_size 14336 (JambaMLP and each
// expert), 32 layers, 32 heads, 8 KV heads (None: the heads), hidden_act "silu", rms_norm_eps 1e-6,
// output_router_logits False, pad_token_id 0, max_position_embeddings 262144 (never read: no positions),
// attention_dropout 0.0, num_experts_per_tok 2, num_experts 16 (attribute_map: num_local_experts),
// expert_layer_period 2 / offset 1, attn_layer_period 8 / offset 4 (validate_architecture: each offset below its
// period), use_mamba_kernels True, mamba_d_state 16, mamba_d_conv 4, mamba_expand 2 (the mixer's width is
// mamba_expand * hidden_size), mamba_dt_rank "auto" (ceil(hidden / 16)), mamba_conv_bias True, mamba_proj_bias
// False, use_mambapy False, use_associative_scan True. JambaAttention's head_dim is getattr(config, "head_dim",
// hidden_size // num_attention_heads): a head_dim key, which JambaConfig keeps as an extra attribute, wins.
// Read and ignored (no allocation depends on them in 5.17): use_mamba_kernels (the kernels' functions fall back to
// their torch bodies when mamba_ssm / causal_conv1d are absent, which is what is modelled), use_associative_scan
// (only under torch.compile), num_logits_to_keep and sliding_window (published configs carry them; 5.17's modeling
// file reads neither), max_position_embeddings, rms_norm_eps.
// Refused, naming the field: hidden_act other than silu (the mixers' conv activation and the MLPs' gate; only silu
// is measured), use_mambapy true (mambapy's parallel scan, not modelled), output_router_logits true (the auxiliary
// load-balancing loss, not modelled), an offset not below its period, num_experts_per_tok above num_experts, more
// heads than hidden units (head_dim 0), heads not a multiple of the KV heads (repeat_kv), mamba_expand giving a
// width outside the engine's bounds.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_jamba(const ConfigReader& r) {
  TransformerSpec s;
  s.model_type = "jamba";
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 65536);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 14336);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  // num_key_value_heads: 8 when absent, the heads when null (__post_init__)
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 8);
  if (s.num_heads % s.num_kv_heads != 0)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
  if (r.present("head_dim")) {
    s.head_dim = r.positive({"head_dim"}, 1);
  } else {
    s.head_dim = s.hidden_size / s.num_heads;
    if (s.head_dim < 1)
      throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                       "exceeds hidden_size (" + std::to_string(s.hidden_size) +
                           "): head_dim = hidden_size // num_attention_heads would be 0");
  }
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled for jamba (silu is: the mixers' convolution and the MLPs' gate)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  check_padding_idx(r, s.vocab_size);
  // No positional embedding: the context is bounded by the engine's limits only.
  s.max_position_embeddings = kMaxDim;

  // The layer pattern.
  s.jamba_attn_period = r.positive({"attn_layer_period"}, 8);
  s.jamba_attn_offset = r.non_negative({"attn_layer_offset"}, 4);
  if (s.jamba_attn_offset >= s.jamba_attn_period)
    throw InputError(r.name("attn_layer_offset"), std::to_string(s.jamba_attn_offset),
                     "must be smaller than attn_layer_period (" + std::to_string(s.jamba_attn_period) + ")");
  s.jamba_expert_period = r.positive({"expert_layer_period"}, 2);
  s.jamba_expert_offset = r.non_negative({"expert_layer_offset"}, 1);
  if (s.jamba_expert_offset >= s.jamba_expert_period)
    throw InputError(r.name("expert_layer_offset"), std::to_string(s.jamba_expert_offset),
                     "must be smaller than expert_layer_period (" + std::to_string(s.jamba_expert_period) + ")");
  s.num_experts = r.positive({"num_experts", "num_local_experts"}, 16, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the routers' auxiliary load-balancing loss is not modelled (set it false)");

  // The Mamba-1 mixers.
  s.ssm_state_size = r.positive({"mamba_d_state"}, 16);
  s.ssm_conv_kernel = r.positive({"mamba_d_conv"}, 4);
  const int64_t expand = r.positive({"mamba_expand"}, 2);
  if (expand > kMaxDim / s.hidden_size)
    throw InputError(r.name("mamba_expand"), std::to_string(expand),
                     "times hidden_size exceeds the limit of " + std::to_string(kMaxDim));
  s.ssm_inner_size = expand * s.hidden_size;
  const json* dt_rank = r.raw("mamba_dt_rank");
  if (dt_rank == nullptr || (dt_rank->is_string() && dt_rank->get<std::string>() == "auto"))
    s.ssm_time_step_rank = (s.hidden_size + 15) / 16;
  else
    s.ssm_time_step_rank = r.positive({"mamba_dt_rank"}, 1);
  s.ssm_conv_bias = r.boolean({"mamba_conv_bias"}, true);
  s.ssm_bias = r.boolean({"mamba_proj_bias"}, false);
  if (r.boolean({"use_mambapy"}, false))
    throw InputError(r.name("use_mambapy"), "true",
                     "mambapy's parallel scan is not modelled (the sequential scan, use_mambapy false, is)");
  r.boolean({"use_mamba_kernels"}, true);     // validated, not used: see the header
  r.boolean({"use_associative_scan"}, true);  // validated, not used: see the header
  return s;
}

}  // namespace memplan::hf
