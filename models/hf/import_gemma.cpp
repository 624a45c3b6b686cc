// GemmaConfig, Gemma2Config, Gemma3TextConfig and the multimodal Gemma3Config (transformers 5.17
// models/gemma/configuration_gemma.py, gemma2/configuration_gemma2.py, gemma3/configuration_gemma3.py).
//
// Stages: (1) for a gemma3 config, descend into text_config (only its text decoder is modelled, and the spec
// says so), (2) read every key that changes memory with the class defaults below, (3) derive layer_types the
// way __post_init__ does, (4) refuse what the modelling files would reject or what the builders do not model.
//
// Class defaults (dataclass fields of 5.17):
//   gemma:       vocab 256000, hidden 3072, intermediate 24576, 28 layers, 16 heads, 16 kv heads, head_dim 256,
//                hidden_act gelu_pytorch_tanh (GemmaMLP reads config.hidden_act), max_positions 8192, tied.
//   gemma2:      vocab 256000, hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 kv heads, head_dim 256,
//                hidden_activation gelu_pytorch_tanh, max_positions 8192, sliding_window 4096, layer_types
//                alternating sliding (even i) / full (odd i), final / attn softcapping 30 / 50,
//                query_pre_attn_scalar 256, tied; validate_architecture: hidden % heads == 0.
//   gemma3_text: vocab 262208, hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 kv heads, head_dim 256,
//                hidden_activation gelu_pytorch_tanh, max_positions 131072, sliding_window 4096, layer_types from
//                sliding_window_pattern (a kwarg, default 6: layer i slides iff (i + 1) % pattern != 0), no
//                softcapping, query_pre_attn_scalar 256, tied; hidden % heads == 0.
// All three: attention_bias false (q/k/v/o biases), attention_dropout 0.0; use_bidirectional_attention changes
// the masks (and gemma3's window) and is not modelled.
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// ACT2FN names whose module is one kernel saving one tensor of the input's size (what the builders model).
// gelu_new / gelu_python_tanh and friends run several Python-level kernels and are refused.
void refuse_bidirectional(const ConfigReader& r) {
  if (r.boolean({"use_bidirectional_attention"}, false))
    throw InputError(r.name("use_bidirectional_attention"), "true",
                     "bidirectional attention (non-causal masks) is not modelled");
}

// layer_types as Gemma2Config / Gemma3TextConfig store it: an explicit list, else the class's pattern.
std::vector<uint8_t> sliding_layers(const ConfigReader& r, int64_t layers, int64_t pattern) {
  std::vector<uint8_t> out(static_cast<size_t>(layers));
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) != layers)
      throw InputError(r.name("layer_types"), dump_short(*lt),
                       "must be a list of num_hidden_layers (" + std::to_string(layers) + ") layer types");
    for (size_t i = 0; i < lt->size(); ++i) {
      const json& t = (*lt)[i];
      if (t == "sliding_attention") out[i] = 1;
      else if (t != "full_attention")
        throw InputError(r.name("layer_types[" + std::to_string(i) + "]"), dump_short(t),
                         "must be \"sliding_attention\" or \"full_attention\"");
    }
    return out;
  }
  for (int64_t i = 0; i < layers; ++i) out[static_cast<size_t>(i)] = (i + 1) % pattern != 0 ? 1 : 0;
  return out;
}

TransformerSpec import_gemma_text(const ConfigReader& r, const std::string& type) {
  const bool v1 = type == "gemma", v2 = type == "gemma2";
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, v1 || v2 ? 256000 : 262208);
  s.hidden_size = r.positive({"hidden_size"}, v1 ? 3072 : 2304);
  s.intermediate_size = r.positive({"intermediate_size"}, v1 ? 24576 : 9216);
  s.num_layers = r.positive({"num_hidden_layers"}, v1 ? 28 : 26, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, v1 ? 16 : 8);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(v1 ? 16 : 4);
  if (s.num_heads % s.num_kv_heads != 0)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");
  // head_dim is a field with default 256 in all three classes (not hidden // heads).
  s.head_dim = r.positive({"head_dim"}, 256);
  if (!v1 && s.hidden_size % s.num_heads != 0)  // validate_architecture (gemma2, gemma3_text)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, v1 || v2 ? 8192 : 131072);
  // GemmaMLP reads config.hidden_act; Gemma2MLP / Gemma3MLP read config.hidden_activation.
  const char* act_key = v1 ? "hidden_act" : "hidden_activation";
  s.hidden_act = r.string({act_key}, "gelu_pytorch_tanh");
  check_gemma_activation(r, act_key, s.hidden_act, "gemma");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  refuse_bidirectional(r);
  if (v1) return s;

  // query_pre_attn_scalar only sets the attention scale (no memory), but must be a usable number.
  r.opt_positive_number({"query_pre_attn_scalar"});
  if (v2) {
    s.final_logit_softcapping =
        r.explicit_null("final_logit_softcapping") ? 0.0 : r.opt_positive_number({"final_logit_softcapping"}).value_or(30.0);
    s.attn_logit_softcapping =
        r.explicit_null("attn_logit_softcapping") ? 0.0 : r.opt_positive_number({"attn_logit_softcapping"}).value_or(50.0);
  } else {
    s.final_logit_softcapping = r.opt_positive_number({"final_logit_softcapping"}).value_or(0.0);
    r.opt_positive_number({"attn_logit_softcapping"});  // read and checked, but Gemma3Attention never uses it
  }
  // sliding_window_pattern is a gemma3 kwarg only (Gemma3TextConfig.__post_init__); gemma2 alternates.
  const int64_t pattern = v2 ? 2 : r.positive({"sliding_window_pattern"}, 6);
  s.sliding_layers = sliding_layers(r, s.num_layers, pattern);
  // Both models build the sliding-window mask whatever layer_types holds, and create_sliding_window_causal_mask
  // raises without a window.
  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null", "must be set (the model always builds its sliding-window mask)");
  s.sliding_window = r.positive({"sliding_window"}, 4096);
  return s;
}

}  // namespace

TransformerSpec import_gemma(const ConfigReader& r, const std::string& type) {
  if (type != "gemma3") return import_gemma_text(r, type);
  // Gemma3Config: the decoder is Gemma3TextConfig(**text_config) (defaults when absent); the SigLIP vision tower
  // and the multimodal projector are not modelled.
  const json* tc = r.raw("text_config");
  static const json kEmpty = json::object();
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  const ConfigReader text(tc ? *tc : kEmpty, r.name("text_config."));
  TransformerSpec s = import_gemma_text(text, "gemma3_text");
  // Gemma3ForConditionalGeneration ties lm_head to the text embeddings per the top-level tie_word_embeddings.
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.modelled_part = "text decoder only";
  return s;
}

}  // namespace memplan::hf
