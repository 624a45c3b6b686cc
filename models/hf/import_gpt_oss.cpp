// GptOssConfig (transformers 5.17 models/gpt_oss/configuration_gpt_oss.py).
//
// Class defaults: 36 layers, num_local_experts 128 (alias num_experts), vocab 201088, hidden 2880, intermediate
// 2880 (each expert's width), head_dim 64 (None => hidden // heads), 64 heads, 8 key/value heads, sliding_window
// 128, tie False, max_position_embeddings 131072, attention_dropout 0.0, num_experts_per_tok 4, attention_bias
// True, output_router_logits False; layer_types None => "sliding_attention" for even i, "full_attention" for odd
// i (__post_init__). Every layer's MLP is the routed GptOssExperts (biased gate_up / down, no shared expert).
// Refused: quantization_config (the published checkpoints' MXFP4 experts: from_config without it builds bf16
// experts, the kernels' dequantisation memory is not modelled; drop the key to size the bf16 model) and
// output_router_logits (the auxiliary load-balancing loss keeps every layer's router logits; not modelled).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gpt_oss(const ConfigReader& r) {
  if ((r.raw("quantization_config") != nullptr))
    throw InputError("config.quantization_config", "present",
                     "quantized gpt_oss experts (mxfp4) are not modelled; remove the key to size the bf16 model");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError("config.output_router_logits", "true",
                     "the auxiliary router loss (router logits kept per layer) is not modelled");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 201088);
  s.hidden_size = r.positive({"hidden_size"}, 2880);
  s.intermediate_size = r.positive({"intermediate_size"}, 2880);
  s.num_layers = r.positive({"num_hidden_layers"}, 36, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(r.explicit_null("num_key_value_heads") ? s.num_heads : 8);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else if (r.explicit_null("head_dim"))
    s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  else
    s.head_dim = 64;
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim),
                     "must be even (the rotary embedding splits it in halves)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.attention_bias = r.boolean({"attention_bias"}, true);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.num_experts = r.positive({"num_local_experts", "num_experts"}, 128, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 4);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;

  // layer_types: explicit list or the alternating default.
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  bool any_sliding = false;
  if ((r.raw("layer_types") != nullptr)) {
    const json& lt = *r.raw("layer_types");
    if (!lt.is_array() || lt.size() != static_cast<size_t>(s.num_layers))
      throw InputError("config.layer_types", dump_short(lt),
                       "must be a list of num_hidden_layers (" + std::to_string(s.num_layers) + ") layer types");
    for (size_t i = 0; i < lt.size(); ++i) {
      const std::string t = lt[i].is_string() ? lt[i].get<std::string>() : "";
      if (t != "sliding_attention" && t != "full_attention")
        throw InputError("config.layer_types[" + std::to_string(i) + "]", dump_short(lt[i]),
                         "must be \"sliding_attention\" or \"full_attention\"");
      s.sliding_layers[i] = t == "sliding_attention" ? 1 : 0;
      any_sliding = any_sliding || s.sliding_layers[i];
    }
  } else {
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % 2 ? 1 : 0;
    any_sliding = true;
  }
  if (r.explicit_null("sliding_window")) {
    if (any_sliding)
      throw InputError("config.sliding_window", "null", "must be set when layer_types has sliding_attention layers");
    s.sliding_window = 0;
  } else {
    s.sliding_window = r.positive({"sliding_window"}, 128);
  }
  // With no sliding layer the all-zero sliding_layers keeps every layer full while sliding_window still sizes
  // the sliding mask GptOssModel.forward builds regardless.
  return s;
}

}  // namespace memplan::hf
