// GPTNeoXConfig (transformers 5.17 models/gpt_neox/configuration_gpt_neox.py) and the shapes GPTNeoXAttention
// derives from it (models/gpt_neox/modeling_gpt_neox.py).
//
// Class defaults: vocab 50432, hidden 6144, 44 layers, 64 heads, intermediate 24576, hidden_act gelu,
// attention_dropout 0.0, hidden_dropout 0.0 (emb_dropout, post_attention_dropout, post_mlp_dropout),
// max_position_embeddings 2048, tie_word_embeddings false, use_parallel_residual true, attention_bias true
// (query_key_value and dense biases; the MLP's nn.Linear layers always have them).
// validate_architecture: hidden_size % num_attention_heads == 0; head_size = hidden // heads.
// Rotary: rope_parameters (or rope_scaling) partial_rotary_factor, else the legacy top-level rotary_pct, else
// 0.25; rotary_ndims = int(head_size * factor).
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gpt_neox(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50432);
  s.hidden_size = r.positive({"hidden_size"}, 6144);
  s.num_layers = r.positive({"num_hidden_layers"}, 44, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = s.num_heads;
  s.intermediate_size = r.positive({"intermediate_size"}, 24576);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  s.head_dim = s.hidden_size / s.num_heads;
  if (auto hd = r.opt_positive({"head_dim"}); hd && *hd != s.head_dim)
    throw InputError(r.name("head_dim"), std::to_string(*hd),
                     "differs from hidden_size / num_attention_heads (" + std::to_string(s.head_dim) +
                         "), which GPTNeoXAttention uses");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for gpt_neox (gelu, gelu_pytorch_tanh, silu, swish, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.resid_dropout = r.probability({"hidden_dropout"}, 0.0);
  s.embd_dropout = s.resid_dropout;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.parallel_residual = r.boolean({"use_parallel_residual"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, true);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = true;

  double factor = 0.25;
  std::string key = "rotary_pct";
  bool from_dict = false;
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    const json* d = r.raw(k);
    if (!d) continue;
    if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
    auto t = d->find("rope_type");
    if (t == d->end()) t = d->find("type");
    if (t != d->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic")
      throw InputError(r.name(std::string(k) + ".rope_type"), dump_short(*t), "is not modelled for gpt_neox");
    auto f = d->find("partial_rotary_factor");
    if (f != d->end() && !f->is_null()) {
      if (!f->is_number())
        throw InputError(r.name(std::string(k) + ".partial_rotary_factor"), dump_short(*f), "must be a number");
      factor = f->get<double>();
      key = std::string(k) + ".partial_rotary_factor";
      from_dict = true;
    }
    break;
  }
  if (!from_dict) {
    if (const json* f = r.raw("rotary_pct")) {
      if (!f->is_number()) throw InputError(r.name("rotary_pct"), dump_short(*f), "must be a number");
      factor = f->get<double>();
    }
  }
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
  return s;
}

}  // namespace memplan::hf
