// Gemma4TextConfig and the multimodal Gemma4Config (transformers 5.17 models/gemma4/configuration_gemma4.py), and
// the modeling code's reads of them (models/gemma4/modeling_gemma4.py).
//
// Stages: (1) for a gemma4 config, descend into text_config (only its text decoder is modelled, and the spec says
// so), (2) read every key that changes memory with the class defaults below, (3) derive layer_types and the
// full-attention layers' overrides the way __post_init__ does, (4) refuse what the modeling code would reject or
// what the builder (engine/arch/decoders/dense/gemma4.cpp) does not model, naming the key.
//
// Gemma4TextConfig defaults: vocab 262144, hidden 2304, intermediate 9216, 30 layers, 8 heads, 4 kv heads,
// head_dim 256, hidden_activation gelu_pytorch_tanh, max_positions 131072, tied, attention_bias false,
// attention_dropout 0.0, sliding_window 512, layer_types None -> sliding unless (i + 1) % 6 == 0 (the last layer
// is forced to full attention either way), final_logit_softcapping None, use_bidirectional_attention None,
// vocab_size_per_layer_input 262144, hidden_size_per_layer_input 256 (per-layer inputs are on by default),
// attention_k_eq_v false, num_kv_shared_layers 0, enable_moe_block false, use_double_wide_mlp false, num_experts /
// top_k_experts / moe_intermediate_size None. The kwargs global_head_dim (512) and num_global_key_value_heads
// (None) become per_layer_config: every full-attention layer takes head_dim = global_head_dim and, when
// attention_k_eq_v and num_global_key_value_heads is set, that many KV heads. rope_parameters default to default
// rope (theta 1e4) on sliding layers and proportional rope (partial_rotary_factor 0.25, theta 1e6) on full ones;
// proportional rope zero-pads inv_freq, so cos / sin cover the whole head whatever the factor.
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// rope_parameters per layer type: sliding layers "default", full layers "proportional" (a default rope there
// would size cos / sin by head_dim, not global_head_dim). Other types are refused naming the entry.
void check_gemma4_rope(const ConfigReader& r) {
  if (const json* rs = r.raw("rope_scaling"))
    throw InputError(r.name("rope_scaling"), dump_short(*rs), "is not read by gemma4 (rope_parameters per layer type)");
  const json* rp = r.raw("rope_parameters");
  if (!rp) return;
  if (!rp->is_object()) throw InputError(r.name("rope_parameters"), dump_short(*rp), "must be an object");
  for (auto it = rp->begin(); it != rp->end(); ++it) {
    const std::string field = r.name("rope_parameters") + "." + it.key();
    const bool full = it.key() == "full_attention";
    if (!full && it.key() != "sliding_attention")
      throw InputError(field, dump_short(*it),
                       "is not a gemma4 layer type (rope_parameters holds sliding_attention and full_attention)");
    if (!it->is_object()) throw InputError(field, dump_short(*it), "must be an object");
    auto t = it->find("rope_type");
    const std::string type = t == it->end() || t->is_null() ? "default" : (t->is_string() ? t->get<std::string>() : "");
    if (type != (full ? "proportional" : "default"))
      throw InputError(field + ".rope_type", t == it->end() ? "absent" : dump_short(*t),
                       std::string("is not modelled for gemma4 (") + (full ? "proportional" : "default") +
                           " is, on " + it.key() + " layers)");
  }
}

TransformerSpec import_gemma4_text(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 262144);
  s.hidden_size = r.positive({"hidden_size"}, 2304);
  s.intermediate_size = r.positive({"intermediate_size"}, 9216);
  s.num_layers = r.positive({"num_hidden_layers"}, 30, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 8);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 4);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 256);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_activation"}, "gelu_pytorch_tanh");
  check_gemma_activation(r, "hidden_activation", s.hidden_act, "gemma4");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.final_logit_softcapping = r.opt_positive_number({"final_logit_softcapping"}).value_or(0.0);
  check_padding_idx(r, s.vocab_size);
  if (const json* bd = r.raw("use_bidirectional_attention"))
    throw InputError(r.name("use_bidirectional_attention"), dump_short(*bd),
                     "bidirectional attention (non-causal or vision-token masks) is not modelled");
  if (const json* plc = r.raw("per_layer_config"))
    throw InputError(r.name("per_layer_config"), dump_short(*plc),
                     "an explicit per-layer table is not read; global_head_dim / num_global_key_value_heads are");
  check_gemma4_rope(r);

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "must be set (Gemma4TextModel builds its sliding-window mask on every forward)");
  s.sliding_window = r.positive({"sliding_window"}, 512);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s))
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % 6 != 0;
  s.sliding_layers.back() = 0;  // __post_init__ forces the last layer to full attention

  // Full-attention layers: per_layer_config from the global_head_dim / num_global_key_value_heads kwargs.
  s.gemma4_global_head_dim = r.positive({"global_head_dim"}, 512);
  if (s.gemma4_global_head_dim % 2 != 0)
    throw InputError(r.name("global_head_dim"), std::to_string(s.gemma4_global_head_dim),
                     "must be even (rotate_half pairs dimensions)");
  s.gemma4_k_eq_v = r.boolean({"attention_k_eq_v"}, false);
  const auto global_kv = r.opt_positive({"num_global_key_value_heads"});
  s.gemma4_global_kv_heads = s.gemma4_k_eq_v && global_kv ? *global_kv : s.num_kv_heads;
  if (s.num_heads % s.gemma4_global_kv_heads != 0)
    throw InputError(r.name("num_global_key_value_heads"), std::to_string(s.gemma4_global_kv_heads),
                     "must divide num_attention_heads (" + std::to_string(s.num_heads) + ")");

  // Per-layer inputs.
  s.gemma4_ple_size = r.non_negative({"hidden_size_per_layer_input"}, 256);
  s.gemma4_ple_vocab = r.positive({"vocab_size_per_layer_input"}, 262144);
  if (s.gemma4_ple_size > kMaxDim)
    throw InputError(r.name("hidden_size_per_layer_input"), std::to_string(s.gemma4_ple_size),
                     "exceeds the limit of " + std::to_string(kMaxDim));
  if (s.gemma4_ple_size > 0) check_padding_idx(r, s.gemma4_ple_vocab);

  // KV sharing: the last num_kv_shared_layers layers read shared_kv_states[layer_type], which only the last
  // earlier layer of that type writes (a missing type raises KeyError in the forward; sharing every layer raises
  // in Gemma4TextAttention.__init__).
  s.gemma4_kv_shared_layers = r.non_negative({"num_kv_shared_layers"}, 0);
  if (s.gemma4_kv_shared_layers >= s.num_layers)
    throw InputError(r.name("num_kv_shared_layers"), std::to_string(s.gemma4_kv_shared_layers),
                     "must be below num_hidden_layers (" + std::to_string(s.num_layers) + ")");
  const int64_t first_shared = s.num_layers - s.gemma4_kv_shared_layers;
  for (int64_t i = first_shared; i < s.num_layers; ++i) {
    bool found = false;
    for (int64_t j = 0; j < first_shared; ++j)
      found = found || s.sliding_layers[static_cast<size_t>(j)] == s.sliding_layers[static_cast<size_t>(i)];
    if (!found)
      throw InputError(r.name("num_kv_shared_layers"), std::to_string(s.gemma4_kv_shared_layers),
                       "leaves shared layer " + std::to_string(i) + " no earlier " +
                           (s.sliding_layers[static_cast<size_t>(i)] ? "sliding" : "full") +
                           "-attention layer to take keys and values from (KeyError in the forward)");
  }
  s.gemma4_double_wide_mlp = r.boolean({"use_double_wide_mlp"}, false);

  // The MoE block beside the dense MLP.
  s.gemma4_moe = r.boolean({"enable_moe_block"}, false);
  if (s.gemma4_moe) {
    for (const char* k : {"num_experts", "top_k_experts", "moe_intermediate_size"})
      if (!r.present(k))
        throw InputError(r.name(k), r.explicit_null(k) ? "null" : "absent",
                         "must be a positive integer when enable_moe_block is true (Gemma4TextExperts / Router read it)");
    s.num_experts = r.positive({"num_experts"}, 1);
    s.num_experts_per_tok = r.positive({"top_k_experts"}, 1);
    s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1);
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("top_k_experts"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_experts (" + std::to_string(s.num_experts) + "): torch.topk raises");
  }
  return s;
}

}  // namespace

TransformerSpec import_gemma4(const ConfigReader& r, const std::string& type) {
  if (type != "gemma4") return import_gemma4_text(r);
  // Gemma4Config: the decoder is Gemma4TextConfig(**text_config) (defaults when absent); the vision and audio
  // towers and their embedders are not modelled.
  const json* tc = r.raw("text_config");
  static const json kEmpty = json::object();
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  const ConfigReader text(tc ? *tc : kEmpty, r.name("text_config."));
  TransformerSpec s = import_gemma4_text(text);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.modelled_part = "text decoder only";
  return s;
}

}  // namespace memplan::hf
