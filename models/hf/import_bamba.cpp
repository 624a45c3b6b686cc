// BambaConfig (transformers 5.17 models/bamba/configuration_bamba.py) and what modeling_bamba.py reads of it.
//
// Class defaults: vocab 128000, hidden 4096, intermediate 14336, 32 layers, 32 heads, 8 kv heads (None => heads),
// silu, max_position_embeddings 262144, tie_word_embeddings False, attention_bias False, mlp_bias False,
// attention_dropout 0, attn_layer_indices None (every layer a mamba layer; an index outside [0, layers) matches
// none), mamba_* as read_hybrid_mamba (mamba_d_state 256), z_loss_coefficient 0, num_logits_to_keep 1.
// __post_init__ passes partial_rotary_factor 0.5 to the rope standardisation (a rope dict's own value wins; a
// top-level key is overridden): rotary_dim = int(head_dim * factor). head_dim: getattr(config, "head_dim",
// hidden // heads).
// Refused, naming the field: z_loss_coefficient > 0 (the logsumexp z-loss is not modelled), num_logits_to_keep other
// than 1 (generate()'s prefill logits), layer_types / layers_block_type keys (a read-only property of the config,
// derived from attn_layer_indices), a rope dict of another type, and read_hybrid_mamba's refusals.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_bamba(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {128000, 4096, 14336, 32, 32, 8});
  s.model_type = "bamba";
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 262144);
  read_hybrid_mamba(r, s, 256);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  if (r.present("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*r.raw("sliding_window")),
                     "is not a field of bamba's config; sliding-window attention is not modelled");
  for (const char* key : {"layer_types", "layers_block_type"})
    if (r.present(key))
      throw InputError(r.name(key), dump_short(*r.raw(key)),
                       "is a read-only property of BambaConfig (the attention layers come from attn_layer_indices)");
  if (const json* z = r.raw("z_loss_coefficient")) {
    if (!z->is_number()) throw InputError(r.name("z_loss_coefficient"), dump_short(*z), "must be a number");
    if (z->get<double>() != 0.0)
      throw InputError(r.name("z_loss_coefficient"), dump_short(*z), "the logsumexp z-loss is not modelled (0 is)");
  }
  if (r.explicit_null("num_logits_to_keep"))
    throw InputError(r.name("num_logits_to_keep"), "null",
                     "generate()'s prefill is modelled with the last position's logits only (1)");
  if (const int64_t keep = r.positive({"num_logits_to_keep"}, 1); keep != 1)
    throw InputError(r.name("num_logits_to_keep"), std::to_string(keep),
                     "generate()'s prefill is modelled with the last position's logits only (1)");
  check_rope_type(r, "bamba");
  std::string key;
  double factor = partial_rotary_factor(r, 0.5, key);
  if (key == "partial_rotary_factor") {  // a top-level key: __post_init__'s kwargs override it with 0.5
    factor = 0.5;
    key = "partial_rotary_factor (0.5, set by BambaConfig)";
  }
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
  s.hybrid_rope = true;

  const size_t n = static_cast<size_t>(s.num_layers);
  s.hybrid_attention_layers.assign(n, 0);
  if (const json* idx = r.raw("attn_layer_indices")) {
    if (!idx->is_array()) throw InputError(r.name("attn_layer_indices"), dump_short(*idx), "must be a list of layer indices");
    for (const json& e : *idx) {
      if (!e.is_number_integer())
        throw InputError(r.name("attn_layer_indices"), dump_short(*idx), "must be a list of integer layer indices");
      const int64_t i = e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX) ? -1 : e.get<int64_t>();
      if (i >= 0 && i < s.num_layers) s.hybrid_attention_layers[static_cast<size_t>(i)] = 1;
    }
  }
  return s;
}

}  // namespace memplan::hf
