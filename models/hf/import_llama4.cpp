// Llama4TextConfig and the composite Llama4Config (transformers 5.17 models/llama4/configuration_llama4.py) and
// what Llama4ForCausalLM reads of them.
//
// Stages: (1) for a llama4 config, descend into text_config (Llama4ForConditionalGeneration builds
// Llama4ForCausalLM(config.text_config); the vision tower and the multimodal projector are not modelled, and
// the spec says so), (2) read every key that changes memory with the class defaults below, (3) derive
// no_rope_layers, moe_layers and layer_types as __post_init__ does, (4) refuse what the forward would reject or
// what the builder does not model.
//
// Llama4TextConfig defaults: vocab 202048, hidden 5120, intermediate_size 8192 (each routed expert's and the
// shared expert's width), intermediate_size_mlp 16384 (dense layers), 48 layers, 40 heads, 8 kv heads (None =>
// heads), head_dim 128 (None => hidden // heads), silu, max_position_embeddings 131072, tie False,
// attention_dropout 0, attention_bias False, num_local_experts 16, num_experts_per_tok 1, moe_layers None =>
// range(interleave_moe_layer_step - 1, layers, step) (step 1: every layer), use_qk_norm True, no_rope_layers
// None (or empty) => [int((i + 1) % no_rope_layer_interval != 0)] (interval 4), attention_chunk_size 8192,
// layer_types None => "chunked_attention" where no_rope_layers[i] is truthy, else "full_attention",
// attn_temperature_tuning True (floor_scale 8192, attn_scale 0.1: values only), output_router_logits False.
#include <string>
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// A list key of integers with at least `n` entries (the modeling code indexes it per layer).
std::vector<int64_t> int_list(const ConfigReader& r, const char* key, const json& v, size_t n, const char* what) {
  if (!v.is_array() || v.size() < n)
    throw InputError(r.name(key), dump_short(v), std::string("must be a list of at least ") + std::to_string(n) + " " + what);
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer())
      throw InputError(r.name(std::string(key) + "[" + std::to_string(i) + "]"), dump_short(v[i]), "must be an integer");
    out.push_back(v[i].get<int64_t>());
  }
  return out;
}

TransformerSpec import_llama4_text(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 202048);
  s.hidden_size = r.positive({"hidden_size"}, 5120);
  s.intermediate_size = r.positive({"intermediate_size"}, 8192);
  s.num_layers = r.positive({"num_hidden_layers"}, 48, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 40);
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  // head_dim: the class default is 128 (not hidden // heads); an explicit null => hidden // heads.
  if (r.explicit_null("head_dim"))
    s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  else
    s.head_dim = r.positive({"head_dim"}, 128);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (the rotary embedding pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "llama4_text is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.intermediate_size_mlp = r.positive({"intermediate_size_mlp"}, 16384);
  s.num_experts = r.positive({"num_local_experts"}, 16, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 1);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;  // Llama4TextExperts: expert_dim = config.intermediate_size
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "recording the router logits of every layer is not modelled for llama4_text");

  const size_t L = static_cast<size_t>(s.num_layers);
  s.moe_layers.assign(L, 0);
  if (const json* ml = r.raw("moe_layers")) {
    if (!ml->is_array()) throw InputError(r.name("moe_layers"), dump_short(*ml), "must be a list of layer indices");
    for (int64_t i : int_list(r, "moe_layers", *ml, 0, "layer indices"))
      if (i >= 0 && i < s.num_layers) s.moe_layers[static_cast<size_t>(i)] = 1;  // `layer_idx in config.moe_layers`
  } else {
    const int64_t step = r.positive({"interleave_moe_layer_step"}, 1);
    for (int64_t i = step - 1; i < s.num_layers; i += step) s.moe_layers[static_cast<size_t>(i)] = 1;
  }

  s.rope_layers.assign(L, 1);
  const json* nr = r.raw("no_rope_layers");
  if (nr && !(nr->is_array() && nr->empty())) {  // an empty list is falsy: the default applies
    const auto v = int_list(r, "no_rope_layers", *nr, L, "integers (1: RoPE, 0: NoPE)");
    for (size_t i = 0; i < L; ++i) s.rope_layers[i] = v[i] != 0 ? 1 : 0;
  } else {
    const int64_t interval = r.positive({"no_rope_layer_interval"}, 4);
    for (size_t i = 0; i < L; ++i) s.rope_layers[i] = (static_cast<int64_t>(i) + 1) % interval != 0 ? 1 : 0;
  }

  s.sliding_layers.assign(L, 0);
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array() || lt->size() < L)
      throw InputError(r.name("layer_types"), dump_short(*lt),
                       "must be a list of num_hidden_layers (" + std::to_string(L) + ") layer types");
    for (size_t i = 0; i < L; ++i) {
      const json& t = (*lt)[i];
      if (t == "chunked_attention")
        s.sliding_layers[i] = 1;
      else if (t != "full_attention")
        throw InputError(r.name("layer_types[" + std::to_string(i) + "]"), dump_short(t),
                         "must be \"chunked_attention\" or \"full_attention\"");
    }
  } else {
    for (size_t i = 0; i < L; ++i) s.sliding_layers[i] = s.rope_layers[i];
  }
  // Both masks are made on every forward: create_chunked_causal_mask raises without a chunk size.
  if (r.explicit_null("attention_chunk_size"))
    throw InputError(r.name("attention_chunk_size"), "null",
                     "must be set: Llama4TextModel always builds the chunked mask (create_chunked_causal_mask raises)");
  s.sliding_window = r.positive({"attention_chunk_size"}, 8192);
  s.chunked_attention = true;
  s.l2_qk_norm = r.boolean({"use_qk_norm"}, true);
  s.attn_temperature_tuning = r.boolean({"attn_temperature_tuning"}, true);
  return s;
}

}  // namespace

TransformerSpec import_llama4(const ConfigReader& r, const std::string& type) {
  if (type != "llama4") return import_llama4_text(r);
  const json* tc = r.raw("text_config");
  static const json kEmpty = json::object();
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  const ConfigReader text(tc ? *tc : kEmpty, r.name("text_config."));
  TransformerSpec s = import_llama4_text(text);
  s.modelled_part = "text decoder only: the vision tower and projector are not modelled";
  return s;
}

}  // namespace memplan::hf
