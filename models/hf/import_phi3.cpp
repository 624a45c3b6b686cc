// Phi3Config (transformers 5.17 models/phi3/configuration_phi3.py) and the shapes Phi3Attention /
// Phi3RotaryEmbedding derive from it (models/phi3/modeling_phi3.py).
//
// Class defaults: vocab 32064, hidden 3072, intermediate 8192, 32 layers, 32 heads, num_key_value_heads None
// (=> num_attention_heads, __post_init__), resid_pdrop 0.0, embd_pdrop 0.0 (Phi3Model never applies it),
// attention_dropout 0.0, hidden_act silu, max_position_embeddings 4096, tie_word_embeddings false,
// sliding_window None (=> create_causal_mask; set => every layer slides, mask and cache).
// head_dim: getattr(config, "head_dim", hidden // heads) (a config.json key sets the attribute).
// Rotary: rope_parameters (or the legacy rope_scaling) with partial_rotary_factor (else the top-level key,
// else 1.0); rotary dim = int(head_dim * factor); rope_type must be default or longrope ("su" / "yarn" are
// renamed longrope), as validate_rope requires. longrope's short / long factors change no tensor size.
#include <cmath>

#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// The rope dict transformers reads: rope_scaling wins over rope_parameters (convert_rope_params_to_dict).
const json* rope_dict(const ConfigReader& r, std::string& key) {
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    if (const json* d = r.raw(k)) {
      if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
      key = k;
      return d;
    }
  }
  return nullptr;
}

}  // namespace

// Shared with import_gpt_neox.cpp: int(head_dim * factor), refused unless it is a positive even number of
// dimensions (the rotary cos / sin are cat(freqs, freqs) over dim / 2 frequencies).
int64_t rotary_dim_from_factor(const ConfigReader& r, const std::string& key, double factor, int64_t head_dim) {
  if (!(factor > 0.0 && factor <= 1.0))
    throw InputError(r.name(key), std::to_string(factor), "must be a number in (0, 1]");
  const auto rot = static_cast<int64_t>(std::floor(static_cast<double>(head_dim) * factor));
  if (rot < 2 || rot % 2 != 0)
    throw InputError(r.name(key), std::to_string(factor),
                     "gives a rotary dimension of " + std::to_string(rot) + " of head_dim " + std::to_string(head_dim) +
                         "; it must be a positive even number");
  return rot;
}

// Shared with the phi and stablelm importers: partial_rotary_factor from the rope dict (rope_scaling, else
// rope_parameters), else the top-level key, else `dflt` (the class's default); `key` names where it was read.
double partial_rotary_factor(const ConfigReader& r, double dflt, std::string& key) {
  std::string dict_key;
  key = "partial_rotary_factor";
  double factor = dflt;
  if (const json* rope = rope_dict(r, dict_key)) {
    auto f = rope->find("partial_rotary_factor");
    if (f != rope->end() && !f->is_null()) {
      if (!f->is_number()) throw InputError(r.name(dict_key + ".partial_rotary_factor"), dump_short(*f), "must be a number");
      key = dict_key + ".partial_rotary_factor";
      return f->get<double>();
    }
  }
  if (const json* f = r.raw("partial_rotary_factor")) {
    if (!f->is_number()) throw InputError(r.name("partial_rotary_factor"), dump_short(*f), "must be a number");
    factor = f->get<double>();
  }
  return factor;
}

TransformerSpec import_phi3(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {32064, 3072, 8192, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for phi3 (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.0);
  (void)r.probability({"embd_pdrop"}, 0.0);  // validated; Phi3Model applies no embedding dropout
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.sliding_window = r.explicit_null("sliding_window") ? 0 : r.non_negative({"sliding_window"}, 0);
  if (r.raw("layer_types"))
    throw InputError(r.name("layer_types"), dump_short(*r.raw("layer_types")),
                     "per-layer attention types are not modelled for phi3");

  std::string key;
  if (const json* rope = rope_dict(r, key)) {
    auto t = rope->find("rope_type");
    if (t == rope->end()) t = rope->find("type");
    if (t != rope->end() && !t->is_null()) {
      const std::string type = t->is_string() ? t->get<std::string>() : "";
      if (type != "default" && type != "longrope" && type != "su" && type != "yarn")
        throw InputError(r.name(key + ".rope_type"), dump_short(*t), "must be default or longrope (Phi3Config.validate_rope)");
    }
  }
  std::string factor_key;
  const double factor = partial_rotary_factor(r, 1.0, factor_key);
  s.rotary_dim = rotary_dim_from_factor(r, factor_key, factor, s.head_dim);
  return s;
}

}  // namespace memplan::hf
