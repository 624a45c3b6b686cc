// NanoChatConfig (transformers 5.17 models/nanochat/configuration_nanochat.py) and what the modeling file reads of it
// (models/nanochat/modeling_nanochat.py).
//
// Class defaults: vocab 50304, hidden 768, intermediate 8192, 12 layers, 6 heads, num_key_value_heads None =>
// heads, max_position_embeddings 2048, hidden_act "relu2" (NanoChatMLP is fc2(act(fc1(x))); relu2 is the only
// activation modelled), attention_dropout 0.0, rms_norm_eps 1e-6, final_logit_softcapping 15.0 (None: no
// softcapping), attention_bias False (q / k / v / o; fc1 / fc2 never have one), tie_word_embeddings False.
// head_dim is not a field of the class: NanoChatAttention takes getattr(config, "head_dim", hidden // heads) and the
// rotary embedding the same, so a head_dim key is honoured and otherwise heads must divide hidden. The rotary
// embedding covers the whole head (an odd head_dim is refused by hf_config.cpp's check_rotary_head_dim). The norms
// have no weights (NanoChatRMSNorm(eps) only).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_nanochat(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {50304, 768, 8192, 12, 6});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "relu2");
  if (s.hidden_act != "relu2")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "nanochat is modelled with relu2 (ReLUSquaredActivation) only");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.final_logit_softcapping =
      r.explicit_null("final_logit_softcapping") ? 0.0 : r.opt_positive_number({"final_logit_softcapping"}).value_or(15.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  return s;
}

}  // namespace memplan::hf
