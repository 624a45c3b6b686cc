// Gemma3nTextConfig (transformers 5.17 models/gemma3n/configuration_gemma3n.py) and the modeling code's reads of
// it (models/gemma3n/modeling_gemma3n.py), for Gemma3nForCausalLM (model_type gemma3n_text).
//
// Stages: (1) read every key that changes memory with the class defaults below, (2) derive intermediate_size,
// layer_types and activation_sparsity_pattern per layer as __post_init__ does, (3) refuse what __post_init__,
// validate_architecture or Gemma3nTextAttention.__init__ would reject, and what the builder
// (engine/arch/decoders/dense/gemma3n.cpp) does not model, naming the key.
//
// Gemma3nTextConfig defaults: vocab 262400, hidden 2048, intermediate 16384 (an int for every layer, or a list of
// num_hidden_layers), 35 layers, 8 heads, 2 kv heads, head_dim 256, hidden_activation gelu_pytorch_tanh,
// max_positions 32768, pad_token_id 0, tied, attention_bias false, attention_dropout 0.0, sliding_window 512,
// layer_types None -> full attention where (i + 1) % 5 == 0, else sliding; final_logit_softcapping 30.0,
// vocab_size_per_layer_input 262144, hidden_size_per_layer_input 256, altup_active_idx 0, altup_coef_clip 120.0,
// altup_correct_scale true, altup_num_inputs 4, num_kv_shared_layers 15, laurel_rank 64,
// activation_sparsity_pattern None -> 0.95 on the first 10 layers when there are more than 10, else none.
// rope_parameters: "default" rope on both layer types (theta 1e6 full, 1e4 sliding); another rope type is refused.
//
// The multimodal Gemma3nConfig (model_type gemma3n, Gemma3nForConditionalGeneration) is refused in hf_config.cpp:
// its vision tower is a timm MobileNetV5 built from vision_config.architecture and its audio tower a conformer,
// whose parameters (and in training their gradients and optimizer state) count even with no image or audio fed,
// and neither is derived here.
#include <string>
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// rope_parameters / rope_scaling: default rope per layer type (inv_freq alone). Other types are refused naming the
// entry (dynamic rope updates inv_freq in the forward; the others were not measured).
void check_gemma3n_rope(const ConfigReader& r) {
  auto check_type = [&](const std::string& field, const json& d) {
    if (!d.is_object()) throw InputError(field, dump_short(d), "must be an object");
    auto t = d.find("rope_type");
    if (t == d.end() || t->is_null() || (t->is_string() && t->get<std::string>() == "default")) return;
    throw InputError(field + ".rope_type", dump_short(*t), "is not modelled for gemma3n_text (default is)");
  };
  if (const json* rs = r.raw("rope_scaling")) check_type(r.name("rope_scaling"), *rs);
  const json* rp = r.raw("rope_parameters");
  if (!rp) return;
  if (!rp->is_object()) throw InputError(r.name("rope_parameters"), dump_short(*rp), "must be an object");
  for (auto it = rp->begin(); it != rp->end(); ++it) {
    const std::string field = r.name("rope_parameters") + "." + it.key();
    if (it.key() != "full_attention" && it.key() != "sliding_attention")
      throw InputError(field, dump_short(*it),
                       "is not a gemma3n_text layer type (rope_parameters holds sliding_attention and full_attention)");
    check_type(field, *it);
  }
}

// A per-layer list key (intermediate_size, activation_sparsity_pattern): num_hidden_layers entries.
const json& per_layer_list(const ConfigReader& r, const char* key, const json& v, int64_t layers) {
  if (static_cast<int64_t>(v.size()) != layers)
    throw InputError(r.name(key), std::to_string(v.size()) + " entries",
                     "must have one entry per layer (" + std::to_string(layers) + "): __post_init__ raises");
  return v;
}

}  // namespace

TransformerSpec import_gemma3n_text(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 262400);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.num_layers = r.positive({"num_hidden_layers"}, 35, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 8);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 2);
  check_kv_heads(r, s);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("hidden_size"), std::to_string(s.hidden_size),
                     "must be a multiple of num_attention_heads (" + std::to_string(s.num_heads) +
                         "): validate_architecture raises");
  s.head_dim = r.positive({"head_dim"}, 256);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_activation"}, "gelu_pytorch_tanh");
  check_gemma_activation(r, "hidden_activation", s.hidden_act, "gemma3n_text");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.final_logit_softcapping = r.explicit_null("final_logit_softcapping")
                                  ? 0.0
                                  : r.opt_positive_number({"final_logit_softcapping"}).value_or(30.0);
  check_padding_idx(r, s.vocab_size);
  if (const json* bd = r.raw("use_bidirectional_attention"))
    throw InputError(r.name("use_bidirectional_attention"), dump_short(*bd),
                     "bidirectional attention is not modelled (Gemma3nTextModel builds causal masks)");
  check_gemma3n_rope(r);

  // intermediate_size: one int for every layer, or a list of num_hidden_layers.
  const int64_t L = s.num_layers;
  if (const json* is = r.raw("intermediate_size"); is && is->is_array()) {
    for (const json& v : per_layer_list(r, "intermediate_size", *is, L)) {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxDim)
        throw InputError(r.name("intermediate_size"), dump_short(v),
                         "entries must be positive integers up to " + std::to_string(kMaxDim));
      s.gemma3n_intermediate.push_back(v.get<int64_t>());
    }
  } else {
    s.gemma3n_intermediate.assign(static_cast<size_t>(L), r.positive({"intermediate_size"}, 16384));
  }
  s.intermediate_size = s.gemma3n_intermediate.front();

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "must be set (Gemma3nTextModel builds its sliding-window mask on every forward)");
  s.sliding_window = r.positive({"sliding_window"}, 512);
  s.sliding_layers.assign(static_cast<size_t>(L), 0);
  if (!read_sliding_layer_types(r, s))
    for (int64_t i = 0; i < L; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % 5 != 0;

  // activation_sparsity_pattern: None -> 0.95 on the first 10 layers when there are more than 10; a list of
  // num_hidden_layers values in [0, 1) otherwise (a bare number makes __post_init__'s len() raise).
  s.gemma3n_sparse_layers.assign(static_cast<size_t>(L), 0);
  if (const json* asp = r.raw("activation_sparsity_pattern")) {
    if (!asp->is_array())
      throw InputError(r.name("activation_sparsity_pattern"), dump_short(*asp),
                       "must be a list with one value per layer (__post_init__ takes len() of it)");
    size_t i = 0;
    for (const json& v : per_layer_list(r, "activation_sparsity_pattern", *asp, L)) {
      if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() < 1.0))
        throw InputError(r.name("activation_sparsity_pattern"), dump_short(v),
                         "entries must be numbers in [0, 1) (the normal icdf of 1 is infinite)");
      s.gemma3n_sparse_layers[i++] = v.get<double>() > 0.0;
    }
  } else if (L > 10) {
    for (size_t i = 0; i < 10; ++i) s.gemma3n_sparse_layers[i] = 1;
  }

  // Per-layer inputs: always built (nn.Linear(hidden, L * size) and the packed table); 0 is refused.
  s.gemma4_ple_size = r.positive({"hidden_size_per_layer_input"}, 256);
  s.gemma4_ple_vocab = r.positive({"vocab_size_per_layer_input"}, 262144);
  check_padding_idx(r, s.gemma4_ple_vocab);

  // AltUp and LAuReL.
  s.gemma3n_altup_inputs = r.positive({"altup_num_inputs"}, 4, 64);
  if (s.gemma3n_altup_inputs < 2)
    throw InputError(r.name("altup_num_inputs"), std::to_string(s.gemma3n_altup_inputs),
                     "must be at least 2 (one active stream and the predicted ones) for gemma3n_text");
  const int64_t active = r.non_negative({"altup_active_idx"}, 0);
  if (active >= s.gemma3n_altup_inputs)
    throw InputError(r.name("altup_active_idx"), std::to_string(active),
                     "must be below altup_num_inputs (" + std::to_string(s.gemma3n_altup_inputs) + ")");
  if (const json* clip = r.raw("altup_coef_clip"); clip && !clip->is_number())
    throw InputError(r.name("altup_coef_clip"), dump_short(*clip), "must be a number or null");
  s.gemma3n_altup_correct_scale = r.boolean({"altup_correct_scale"}, true);
  s.gemma3n_laurel_rank = r.positive({"laurel_rank"}, 64);

  // KV sharing: layers from L - n on read shared_kv_states of the last earlier layer of their type;
  // Gemma3nTextAttention.__init__ looks that layer up with list.index (ValueError when none, or when n >= L leaves
  // no earlier layer at all).
  s.gemma4_kv_shared_layers = r.non_negative({"num_kv_shared_layers"}, 15);
  if (s.gemma4_kv_shared_layers >= L)
    throw InputError(r.name("num_kv_shared_layers"), std::to_string(s.gemma4_kv_shared_layers),
                     "must be below num_hidden_layers (" + std::to_string(L) + "): Gemma3nTextAttention raises");
  const int64_t first_shared = L - s.gemma4_kv_shared_layers;
  for (int64_t i = first_shared; i < L; ++i) {
    bool found = false;
    for (int64_t j = 0; j < first_shared; ++j)
      found = found || s.sliding_layers[static_cast<size_t>(j)] == s.sliding_layers[static_cast<size_t>(i)];
    if (!found)
      throw InputError(r.name("num_kv_shared_layers"), std::to_string(s.gemma4_kv_shared_layers),
                       "leaves shared layer " + std::to_string(i) + " no earlier " +
                           (s.sliding_layers[static_cast<size_t>(i)] ? "sliding" : "full") +
                           "-attention layer to take keys and values from (Gemma3nTextAttention raises)");
  }
  return s;
}

}  // namespace memplan::hf
