// NemotronHConfig (transformers 5.17 models/nemotron_h/configuration_nemotron_h.py) and the shapes
// models/nemotron_h/modeling_nemotron_h.py derives from it.
//
// Class defaults: vocab 131072, hidden 4096, 32 heads of head_dim 128 (a field), num_key_value_heads 8,
// max_position_embeddings 4096, attention_dropout 0, intermediate_size 21504, mlp_hidden_act "relu2", mlp_bias
// False, mamba_num_heads 128 x mamba_head_dim 64 (the mixer width), ssm_state_size 128, mamba_hidden_act "silu",
// n_groups 8, conv_kernel 4, chunk_size 128, use_conv_bias True, use_bias False (in_proj / out_proj), num_logits_to_keep
// 1. The legacy spellings mamba_n_groups / mamba_d_conv / mamba_conv_bias / mamba_chunk_size win when present, as
// __post_init__ pops them. The blocks: layers_block_type (alias layer_types; "linear_attention", "full_attention",
// "mlp", "moe"), else hybrid_override_pattern (M, *, -, E), else the class default
// ["linear_attention", "moe", "full_attention", "mlp"]; num_hidden_layers is ignored (the list's length).
// NemotronHAttention's projections never have biases (attention_bias is not read); NemotronHForCausalLM ties nothing
// (_tied_weights_keys is empty), so lm_head is its own weight whatever tie_word_embeddings says.
// Refused, naming the field: MoE blocks (moe / E: not modelled), mlp_hidden_act other than relu2, mamba_hidden_act
// other than silu, groups not dividing the heads, num_logits_to_keep other than 1.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

char block_char(const std::string& t) {
  if (t == "linear_attention" || t == "mamba") return 'M';
  if (t == "full_attention" || t == "attention") return '*';
  if (t == "mlp") return '-';
  if (t == "moe") return 'E';
  return 0;
}

}  // namespace

TransformerSpec import_nemotron_h(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 131072);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  if (r.explicit_null("num_key_value_heads")) s.num_kv_heads = s.num_heads;  // __post_init__: None -> the heads
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.intermediate_size = r.positive({"intermediate_size"}, 21504);
  s.hidden_act = r.string({"mlp_hidden_act"}, "relu2");
  if (s.hidden_act != "relu2")
    throw InputError(r.name("mlp_hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled for nemotron_h (relu2, ReLUSquaredActivation, is)");
  const std::string mact = r.string({"mamba_hidden_act"}, "silu");
  if (mact != "silu")
    throw InputError(r.name("mamba_hidden_act"), "\"" + mact + "\"", "is not modelled for nemotron_h (silu is)");
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  s.tie_word_embeddings = false;  // _tied_weights_keys = {}: nothing is tied
  if (r.explicit_null("num_logits_to_keep"))
    throw InputError(r.name("num_logits_to_keep"), "null",
                     "generate() would compute every prompt logit; only 1 (the default) is modelled");
  if (r.non_negative({"num_logits_to_keep"}, 1) != 1)
    throw InputError(r.name("num_logits_to_keep"), dump_short(*r.raw("num_logits_to_keep")),
                     "generate() would compute that many prompt logits; only 1 (the default) is modelled");

  // The blocks.
  std::string pattern;
  const json* lt = r.raw("layers_block_type");
  const char* lt_key = "layers_block_type";
  if (lt == nullptr) {
    lt = r.raw("layer_types");
    lt_key = "layer_types";
  }
  if (lt != nullptr) {
    if (!lt->is_array() || lt->empty())
      throw InputError(r.name(lt_key), dump_short(*lt), "must be a non-empty list of block types");
    for (size_t i = 0; i < lt->size(); ++i) {
      const json& t = (*lt)[i];
      const char c = t.is_string() ? block_char(t.get<std::string>()) : 0;
      if (c == 0)
        throw InputError(r.name(lt_key) + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be \"linear_attention\", \"full_attention\", \"mlp\" or \"moe\"");
      pattern += c;
    }
  } else if (const json* p = r.raw("hybrid_override_pattern")) {
    if (!p->is_string() || p->get<std::string>().empty())
      throw InputError(r.name("hybrid_override_pattern"), dump_short(*p), "must be a non-empty string of M, *, -, E");
    pattern = p->get<std::string>();
    for (size_t i = 0; i < pattern.size(); ++i)
      if (pattern[i] != 'M' && pattern[i] != '*' && pattern[i] != '-' && pattern[i] != 'E')
        throw InputError(r.name("hybrid_override_pattern"), "\"" + pattern + "\"",
                         "has '" + std::string(1, pattern[i]) + "' at " + std::to_string(i) +
                             " (M Mamba2, * attention, - MLP, E MoE)");
    lt_key = "hybrid_override_pattern";
  } else {
    pattern = "ME*-";  // the class's default layers_block_type
    lt_key = "hybrid_override_pattern";
  }
  if (static_cast<int64_t>(pattern.size()) > kMaxLayers)
    throw InputError(r.name(lt_key), std::to_string(pattern.size()) + " blocks",
                     "exceeds the limit of " + std::to_string(kMaxLayers) + " layers");
  if (pattern.find('E') != std::string::npos)
    throw InputError(r.name(lt_key), "\"" + pattern + "\"",
                     "has MoE blocks (E / moe, NemotronHMoE), which are not modelled (M, * and - are)");
  s.hybrid_pattern = pattern;
  s.num_layers = static_cast<int64_t>(pattern.size());

  // The Mamba2 mixer (legacy keys first: __post_init__ pops them over the fields).
  s.ssm_num_heads = r.positive({"mamba_num_heads"}, 128);
  s.ssm_head_dim = r.positive({"mamba_head_dim"}, 64);
  s.ssm_inner_size = s.ssm_num_heads * s.ssm_head_dim;
  s.ssm_state_size = r.positive({"ssm_state_size"}, 128);
  s.ssm_groups = r.positive({"mamba_n_groups", "n_groups"}, 8);
  if (s.ssm_num_heads % s.ssm_groups != 0)
    throw InputError(r.name(r.raw("mamba_n_groups") ? "mamba_n_groups" : "n_groups"), std::to_string(s.ssm_groups),
                     "must divide mamba_num_heads (" + std::to_string(s.ssm_num_heads) + ")");
  s.ssm_conv_kernel = r.positive({"mamba_d_conv", "conv_kernel"}, 4);
  s.ssm_chunk_size = r.positive({"mamba_chunk_size", "chunk_size"}, 128);
  s.ssm_conv_bias = r.boolean({"mamba_conv_bias", "use_conv_bias"}, true);
  s.ssm_bias = s.ssm_out_bias = r.boolean({"use_bias"}, false);
  return s;
}

}  // namespace memplan::hf
