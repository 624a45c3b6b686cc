// Lfm2Config (transformers 5.17 models/lfm2/configuration_lfm2.py) and the shapes the modeling code derives from
// it (models/lfm2/modeling_lfm2.py).
//
// Defaults: vocab 65536, hidden 2560, intermediate_size 12288, 32 layers, 32 heads, 8 kv heads,
// max_position_embeddings 128000, tie_word_embeddings True, conv_bias False, conv_L_cache 3, block_multiple_of 256,
// block_ffn_dim_multiplier 1.0, block_auto_adjust_ff_dim True, full_attn_idxs None, layer_types None.
// __post_init__: the published configs' spellings win over the class's fields: `block_ff_dim` sets
// intermediate_size and `tie_embedding` sets tie_word_embeddings when present. Absent layer_types become
// "full_attention" for the indices in full_attn_idxs (absent: every layer) and "conv" elsewhere; an index outside
// [0, layers) matches no layer.
// Lfm2MLP's width: with block_auto_adjust_ff_dim, int(2 * intermediate_size / 3), then, when
// block_ffn_dim_multiplier is not None, int(multiplier * that) rounded up to a multiple of block_multiple_of;
// without it, intermediate_size as given. head_dim: getattr(config, "head_dim", hidden // heads) (the class has no
// such field; a config.json key still sets it). The MLP is always silu (F.silu); there is no hidden_act.
#include <cmath>

#include "models/hf_config_reader.h"

namespace memplan::hf {

// layer_types as the modeling code reads it: "full_attention" builds Lfm2Attention, anything else Lfm2ShortConv,
// and causal_mask_mapping has only "full_attention" and "conv" (any other name raises a KeyError in forward).
std::vector<uint8_t> read_lfm2_layer_types(const json& lt, int64_t layers) {
  if (!lt.is_array()) throw InputError("config.layer_types", dump_short(lt), "must be a list of layer types");
  if (static_cast<int64_t>(lt.size()) != layers)
    throw InputError("config.layer_types", std::to_string(lt.size()) + " entries",
                     "must have one entry per layer (num_hidden_layers = " + std::to_string(layers) + ")");
  std::vector<uint8_t> conv(lt.size());
  for (size_t i = 0; i < lt.size(); ++i) {
    const json& t = lt[i];
    if (t.is_string() && t.get<std::string>() == "full_attention")
      conv[i] = 0;
    else if (t.is_string() && t.get<std::string>() == "conv")
      conv[i] = 1;
    else
      throw InputError("config.layer_types[" + std::to_string(i) + "]", dump_short(t),
                       "lfm2 layers are \"full_attention\" or \"conv\"");
  }
  return conv;
}

TransformerSpec import_lfm2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 65536);
  s.hidden_size = r.positive({"hidden_size"}, 2560);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(8);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = s.hidden_size / s.num_heads;  // Python's //
  if (s.head_dim == 0)
    throw InputError("config.num_attention_heads", std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim would be 0");
  if (s.head_dim % 2 != 0)
    throw InputError("config.head_dim", std::to_string(s.head_dim), "must be even (rotate_half splits it in two)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 128000);
  s.tie_word_embeddings = r.boolean({"tie_embedding", "tie_word_embeddings"}, true);
  s.hidden_act = "silu";

  // The feed-forward width (Lfm2MLP.__init__).
  const int64_t ff = r.positive({"block_ff_dim", "intermediate_size"}, 12288);
  int64_t width = ff;
  if (r.boolean({"block_auto_adjust_ff_dim"}, true)) {
    width = static_cast<int64_t>(static_cast<double>(2 * ff) / 3.0);
    if (!r.explicit_null("block_ffn_dim_multiplier")) {
      const double mult = r.opt_positive_number({"block_ffn_dim_multiplier"}).value_or(1.0);
      const int64_t multiple = r.positive({"block_multiple_of"}, 256);
      const double scaled = mult * static_cast<double>(width);
      if (!(scaled < static_cast<double>(kMaxDim)))
        throw InputError("config.block_ffn_dim_multiplier", std::to_string(mult),
                         "makes the feed-forward width exceed the limit of " + std::to_string(kMaxDim));
      width = static_cast<int64_t>(scaled);
      width = multiple * ((width + multiple - 1) / multiple);
    }
  }
  if (width <= 0 || width > kMaxDim)
    throw InputError(r.present("block_ff_dim") ? "config.block_ff_dim" : "config.intermediate_size",
                     std::to_string(ff), "gives a feed-forward width of " + std::to_string(width) +
                                             " (must be in [1, " + std::to_string(kMaxDim) + "])");
  s.intermediate_size = width;

  s.lfm2_conv_kernel = r.positive({"conv_L_cache"}, 3, kMaxDim);
  s.lfm2_conv_bias = r.boolean({"conv_bias"}, false);

  const size_t n = static_cast<size_t>(s.num_layers);
  if (const json* lt = r.raw("layer_types")) {
    s.lfm2_conv_layers = read_lfm2_layer_types(*lt, s.num_layers);
  } else if (const json* fi = r.raw("full_attn_idxs")) {
    if (!fi->is_array()) throw InputError("config.full_attn_idxs", dump_short(*fi), "must be a list of layer indices");
    s.lfm2_conv_layers.assign(n, 1);
    for (const json& e : *fi) {
      if (!e.is_number_integer())
        throw InputError("config.full_attn_idxs", dump_short(*fi), "must be a list of integer layer indices");
      const int64_t i = e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX) ? -1 : e.get<int64_t>();
      if (i >= 0 && i < s.num_layers) s.lfm2_conv_layers[static_cast<size_t>(i)] = 0;
    }
  } else {
    s.lfm2_conv_layers.assign(n, 0);  // full_attn_idxs None: list(range(num_hidden_layers))
  }
  return s;
}

}  // namespace memplan::hf
