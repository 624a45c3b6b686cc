// FalconConfig (transformers 5.17 models/falcon/configuration_falcon.py) and what FalconAttention /
// FalconDecoderLayer (models/falcon/modeling_falcon.py) read of it.
//
// Class defaults: vocab 65024, hidden 4544 (a legacy n_embed kwarg overrides it), 32 layers, 71 heads,
// num_kv_heads None (=> heads), num_ln_in_parallel_attn None (=> 2 under new_decoder_architecture),
// hidden_dropout 0.0, attention_dropout 0.0, alibi False, new_decoder_architecture False, multi_query True,
// parallel_attn True, bias False, max_position_embeddings 2048, ffn_hidden_size None (=> 4 x hidden),
// activation "gelu", tie_word_embeddings True; rotary over head_dim = hidden // heads (the config's property).
// No attribute_map: n_layer / n_head keys are not read by the class, so they are not read here either.
// Refused, each naming its field: alibi True (not modelled), new_decoder_architecture with parallel_attn false
// or the old architecture with num_ln_in_parallel_attn 2 (FalconDecoderLayer builds norms its forward does not
// call: the Python raises), num_kv_heads that do not divide the heads (new architecture) or differ from them
// (old architecture without multi_query: the key reshape fails), rope types other than default / linear / dynamic.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_falcon(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 65024);
  s.hidden_size = r.positive({"n_embed", "hidden_size"}, 4544);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 71);
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  if (r.boolean({"alibi"}, false))
    throw InputError(r.name("alibi"), "true",
                     "ALiBi Falcon (falcon-rw) is not modelled; the rotary variant (alibi false) is");
  s.falcon_new_decoder_architecture = r.boolean({"new_decoder_architecture"}, false);
  const bool multi_query = r.boolean({"multi_query"}, true);
  s.falcon_parallel_attn = r.boolean({"parallel_attn"}, true);
  const int64_t cfg_kv = r.positive({"num_kv_heads"}, s.num_heads);
  const int64_t num_ln = r.positive({"num_ln_in_parallel_attn"}, s.falcon_new_decoder_architecture ? 2 : 1);
  s.falcon_num_ln_in_parallel_attn = num_ln == 2 ? 2 : 1;
  if (s.falcon_new_decoder_architecture) {
    if (!s.falcon_parallel_attn)
      throw InputError(r.name("parallel_attn"), "false",
                       "with new_decoder_architecture FalconDecoderLayer builds no ln_attn / ln_mlp its forward "
                       "calls (transformers 5.17 raises); only parallel_attn true runs");
    if (s.num_heads % cfg_kv != 0)
      throw InputError(r.name("num_kv_heads"), std::to_string(cfg_kv),
                       "must divide num_attention_heads (" + std::to_string(s.num_heads) +
                           ") under new_decoder_architecture");
    s.num_kv_heads = cfg_kv;
  } else {
    if (s.falcon_parallel_attn && s.falcon_num_ln_in_parallel_attn == 2)
      throw InputError(r.name("num_ln_in_parallel_attn"), "2",
                       "without new_decoder_architecture the layer calls an input_layernorm it does not build "
                       "(transformers 5.17 raises)");
    if (!multi_query && cfg_kv != s.num_heads)
      throw InputError(r.name("num_kv_heads"), std::to_string(cfg_kv),
                       "must equal num_attention_heads without multi_query or new_decoder_architecture (the key "
                       "reshape fails)");
    s.num_kv_heads = multi_query ? 1 : s.num_heads;
  }
  s.intermediate_size = r.positive({"ffn_hidden_size"}, 4 * s.hidden_size);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"activation"}, "gelu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for falcon (gelu, gelu_pytorch_tanh, silu, swish, relu are)");
  s.resid_dropout = r.probability({"hidden_dropout"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = r.boolean({"bias"}, false);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    const json* d = r.raw(k);
    if (!d) continue;
    if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
    auto t = d->find("rope_type");
    if (t == d->end()) t = d->find("type");
    if (t != d->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic")
      throw InputError(r.name(std::string(k) + ".rope_type"), dump_short(*t), "is not modelled for falcon");
  }
  return s;
}

}  // namespace memplan::hf
