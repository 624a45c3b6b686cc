// MinistralConfig (transformers 5.17 models/ministral/configuration_ministral.py: MistralConfig's fields plus
// layer_types) and what MinistralAttention / MinistralModel read of it (models/ministral/modeling_ministral.py).
//
// Class defaults: vocab 32000, hidden 4096, intermediate 14336, 32 layers, 32 heads, num_key_value_heads 8 (None =>
// heads), head_dim None, silu, max_position_embeddings 131072, tie False, sliding_window 4096, attention_dropout 0,
// layer_types None => ["sliding_attention" if sliding_window is not None else "full_attention"] * num_hidden_layers.
// No biases anywhere (MinistralAttention replaces Qwen2's biased q / k / v projections).
// Refused, naming the field:
// - head_dim absent or null: MinistralConfig.__post_init__ skips MistralConfig's (it calls
//   PreTrainedConfig.__post_init__ directly), so head_dim stays None, and MinistralAttention's
//   getattr(config, "head_dim", hidden // heads) returns that None: q_proj's width and the head view fail;
// - sliding_window null: MinistralModel.forward calls create_sliding_window_causal_mask on every forward, which
//   raises without a window;
// - layer_types not a list of num_hidden_layers "sliding_attention" / "full_attention" entries;
// - rope types the engine does not model, hidden_act other than silu, quantization_config.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_ministral(const ConfigReader& r) {
  refuse_quantized_mistral(r, "ministral");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 32000);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 14336);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(r.explicit_null("num_key_value_heads") ? s.num_heads : 8);
  check_kv_heads(r, s);
  const auto hd = r.opt_positive({"head_dim"});
  if (!hd)
    throw InputError(r.name("head_dim"), r.explicit_null("head_dim") ? "null" : "absent",
                     "must be set: MinistralConfig leaves it None and MinistralAttention reads it as the head size "
                     "(getattr(config, \"head_dim\", ...) returns the None)");
  s.head_dim = *hd;
  check_rotary_head_dim(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096 * 32);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "ministral is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  check_rope_type(r, "ministral");
  check_padding_idx(r, s.vocab_size);

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "MinistralModel always builds the sliding-window mask, which raises without a window");
  s.sliding_window = r.positive({"sliding_window"}, 4096);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 1);  // the default: every layer slides
  read_sliding_layer_types(r, s);
  return s;
}

}  // namespace memplan::hf
