// GraniteMoeHybridConfig (transformers 5.17 models/granitemoehybrid/configuration_granitemoehybrid.py) and what
// modeling_granitemoehybrid.py reads of it; read_hybrid_mamba, the mamba_* keys BambaConfig shares.
//
// Class defaults: vocab 32000, hidden 4096, intermediate 11008 (each routed expert's width), 32 layers, 32 heads,
// num_key_value_heads None => heads, silu, max_position_embeddings 2048, tie_word_embeddings False, attention_bias
// False, attention_dropout 0, the four multipliers 1.0, 8 experts (num_local_experts; 0 builds no MoE block, only
// the shared MLP), 2 per token, output_router_logits False, shared_intermediate_size 1024, position_embedding_type
// None (no rotary embedding: only "rope" builds one), layer_types None => every layer "linear_attention" (the
// legacy names "mamba" / "attention" of the published configs map to "linear_attention" / "full_attention";
// config.json may spell the key layers_block_type, the attribute_map's alias), mamba_n_heads 128, mamba_n_groups
// 1, mamba_d_state 256, mamba_d_head "auto" (mamba_expand * hidden // mamba_n_heads), mamba_d_conv 4,
// mamba_expand 2, mamba_chunk_size 256, mamba_conv_bias True, mamba_proj_bias False. head_dim: getattr(config,
// "head_dim", hidden // heads).
// Refused, naming the field: a hidden_act other than silu (the mixers' activation and the MLPs'), a layer type
// other than the four names (causal_mask_mapping has only full_attention / linear_attention), a layer list whose
// length is not num_hidden_layers, mamba sizes the config's validate_architecture rejects, output_router_logits
// true (the auxiliary loss), shared_intermediate_size 0, a rope dict of another type (check_rope_type).
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_hybrid_mamba(const ConfigReader& r, TransformerSpec& s, int64_t d_state_default) {
  s.ssm_num_heads = r.positive({"mamba_n_heads"}, 128);
  s.ssm_groups = r.positive({"mamba_n_groups"}, 1);
  s.ssm_state_size = r.positive({"mamba_d_state"}, d_state_default);
  s.ssm_conv_kernel = r.positive({"mamba_d_conv"}, 4);
  s.ssm_chunk_size = r.positive({"mamba_chunk_size"}, 256);
  s.ssm_conv_bias = r.boolean({"mamba_conv_bias"}, true);
  s.ssm_bias = r.boolean({"mamba_proj_bias"}, false);
  const int64_t expand = r.positive({"mamba_expand"}, 2);
  if (expand > kMaxDim / s.hidden_size)
    throw InputError(r.name("mamba_expand"), std::to_string(expand),
                     "gives a mamba intermediate size above the limit of " + std::to_string(kMaxDim));
  s.ssm_inner_size = expand * s.hidden_size;  // int(mamba_expand * hidden_size)
  if (s.ssm_inner_size % s.ssm_num_heads != 0)
    throw InputError(r.name("mamba_n_heads"), std::to_string(s.ssm_num_heads),
                     "must divide mamba_expand * hidden_size (" + std::to_string(s.ssm_inner_size) + ")");
  const json* dh = r.raw("mamba_d_head");
  if (dh == nullptr || (dh->is_string() && dh->get<std::string>() == "auto"))
    s.ssm_head_dim = s.ssm_inner_size / s.ssm_num_heads;
  else
    s.ssm_head_dim = r.positive({"mamba_d_head"}, 1);
  if (s.ssm_head_dim * s.ssm_num_heads != s.ssm_inner_size)
    throw InputError(r.name("mamba_d_head"), std::to_string(s.ssm_head_dim),
                     "times mamba_n_heads (" + std::to_string(s.ssm_num_heads) +
                         ") must equal mamba_expand * hidden_size (" + std::to_string(s.ssm_inner_size) + ")");
  if (s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError(r.name("mamba_n_groups"), std::to_string(s.ssm_groups),
                     "must divide mamba_n_heads (" + std::to_string(s.ssm_num_heads) + ")");
  const std::string act = r.string({"hidden_act"}, "silu");
  if (act != "silu")
    throw InputError(r.name("hidden_act"), "\"" + act + "\"", "is not modelled for " + s.model_type + " (silu is)");
  s.hidden_act = act;
}

TransformerSpec import_granitemoehybrid(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {32000, 4096, 11008, 32, 32});
  s.model_type = "granitemoehybrid";
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  read_hybrid_mamba(r, s, 256);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier"})
    if (const json* v = r.raw(key); v && !v->is_number())
      throw InputError(r.name(key), dump_short(*v), "must be a number");
  r.opt_positive_number({"logits_scaling"});  // divides the logits
  if (r.present("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*r.raw("sliding_window")),
                     "is not a field of granitemoehybrid's config; sliding-window attention is not modelled");
  // Only "rope" builds GraniteMoeHybridRotaryEmbedding; None (the default), "nope" or any other name leaves the
  // attention unrotated.
  const json* pe = r.raw("position_embedding_type");
  if (pe && !pe->is_string())
    throw InputError(r.name("position_embedding_type"), dump_short(*pe), "must be a string (\"rope\") or null");
  s.hybrid_rope = pe && pe->get<std::string>() == "rope";
  if (s.hybrid_rope) {
    check_rope_type(r, "granitemoehybrid");
    if (s.head_dim % 2 != 0)
      throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  }
  s.num_experts = r.non_negative({"num_local_experts"}, 8);
  if (s.num_experts > kMaxExperts)
    throw InputError(r.name("num_local_experts"), std::to_string(s.num_experts),
                     "exceeds the limit of " + std::to_string(kMaxExperts));
  if (s.num_experts > 0) {
    s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
    s.moe_intermediate_size = s.intermediate_size;  // GraniteMoeHybridExperts: config.intermediate_size
  }
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router auxiliary loss (load_balancing_loss_func) is not modelled");
  s.granite_shared_intermediate_size = r.positive({"shared_intermediate_size"}, 1024);

  const size_t n = static_cast<size_t>(s.num_layers);
  s.hybrid_attention_layers.assign(n, 0);  // None: every layer "linear_attention"
  const char* key = r.present("layer_types") ? "layer_types" : "layers_block_type";
  if (const json* lt = r.raw(key)) {
    if (!lt->is_array()) throw InputError(r.name(key), dump_short(*lt), "must be a list of layer types");
    if (lt->size() != n)
      throw InputError(r.name(key), std::to_string(lt->size()) + " entries",
                       "must have one entry per layer (num_hidden_layers = " + std::to_string(n) + ")");
    for (size_t i = 0; i < n; ++i) {
      const json& t = (*lt)[i];
      const std::string name = t.is_string() ? t.get<std::string>() : "";
      if (name == "full_attention" || name == "attention")
        s.hybrid_attention_layers[i] = 1;
      else if (name != "linear_attention" && name != "mamba")
        throw InputError(r.name(key) + "[" + std::to_string(i) + "]", dump_short(t),
                         "granitemoehybrid layers are \"linear_attention\" (\"mamba\") or \"full_attention\" "
                         "(\"attention\")");
    }
  }
  return s;
}

}  // namespace memplan::hf
