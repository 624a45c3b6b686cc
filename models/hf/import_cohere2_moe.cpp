// Cohere2MoeConfig (transformers 5.17 models/cohere2_moe/configuration_cohere2_moe.py) and what the modeling file
// (models/cohere2_moe/modeling_cohere2_moe.py) reads of it.
//
// Class defaults: vocab 256000, hidden 8192, intermediate 22528 (each routed expert's width), 40 layers, 64 heads,
// num_key_value_heads None => heads, head_dim 128 (a field: not hidden // heads), silu, max_position_embeddings 8192,
// tie True, attention_bias False, attention_dropout 0, logit_scale 0.0625 (a Python float), sliding_window 4096,
// num_experts 8, num_experts_per_tok 2, num_shared_experts 0, shared_expert_combination_strategy "average",
// expert_selection_fn "softmax", norm_topk_prob True, layer_norm_eps 1e-5, rms_norm_eps None (=> LayerNorm),
// prefix_dense_intermediate_size None (=> intermediate_size), prefix_dense_sliding_window_pattern 1,
// sliding_window_pattern 4, layer_types / mlp_layer_types None.
// __post_init__ pops the first_k_dense_replace kwarg (default 0): layer_types None becomes the first k layers
// "sliding_attention" unless (i + 1) % prefix_dense_sliding_window_pattern == 0 (with the default 1: all full) and
// then, counting from 0 again, sliding unless (j + 1) % sliding_window_pattern == 0; mlp_layer_types None becomes
// "dense" for i < k, else "sparse". Cohere2MoeAttention.force_rope: a "dense" layer rotates q / k when
// prefix_dense_sliding_window_pattern == 1, whatever its layer type.
// Refused, naming the field: a null sliding_window (Cohere2MoeModel.forward calls create_sliding_window_causal_mask on
// every forward, which raises without a window), null head_dim / prefix_dense_sliding_window_pattern /
// sliding_window_pattern (strict int fields), expert_selection_fn other than softmax / sigmoid and a
// shared_expert_combination_strategy other than sum / average where the forward reaches them (ValueError),
// num_experts_per_tok above num_experts (torch.topk raises), hidden_act other than silu, rope types not modelled,
// layer_types / mlp_layer_types not one string entry per layer, first_k_dense_replace above num_hidden_layers without
// layer_types (the derived list would be too long: validate_layer_type raises).
// Spec fields: moe_intermediate_size = the experts' width (config.intermediate_size), intermediate_size = the dense
// prefix's MLP width, shared_expert_intermediate_size = intermediate_size * num_shared_experts (0: none),
// norm_topk_prob, moe_layers = the "sparse" layers, rope_layers = the
// rotated ones (sliding, or dense with force_rope); family_fields: Cohere2MoeFields (sigmoid_router: expert_selection_fn,
// "softmax" by default; shared_sum: shared_expert_combination_strategy, "average" by default; rms_norm: rms_norm_eps
// set, the norms Cohere2MoeRMSNorm, else Cohere2MoeLayerNorm).
#include <memory>

#include "engine/arch/decoders/moe/cohere2_moe_fields.h"
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

int64_t strict_positive_int(const ConfigReader& r, const char* key, int64_t dflt) {
  if (r.explicit_null(key))
    throw InputError(r.name(key), "null", "must be an integer (Cohere2MoeConfig is a strict dataclass)");
  return r.positive({key}, dflt);
}

}  // namespace

TransformerSpec import_cohere2_moe(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 256000);
  s.hidden_size = r.positive({"hidden_size"}, 8192);
  s.intermediate_size = r.positive({"intermediate_size"}, 22528);
  s.num_layers = r.positive({"num_hidden_layers"}, 40, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  s.head_dim = strict_positive_int(r, "head_dim", 128);
  check_rotary_head_dim(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "cohere2_moe is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  if (const json* v = r.raw("logit_scale"); v && !v->is_number())
    throw InputError(r.name("logit_scale"), dump_short(*v), "must be a number");
  check_rope_type(r, "cohere2_moe");
  check_padding_idx(r, s.vocab_size);
  auto fields = std::make_shared<Cohere2MoeFields>();
  // rms_norm_eps set (not null): Cohere2MoeRMSNorm for input_layernorm and the final norm.
  if (const json* e = r.raw("rms_norm_eps"); e && !e->is_null()) {
    if (!e->is_number()) throw InputError(r.name("rms_norm_eps"), dump_short(*e), "must be a number or null");
    fields->rms_norm = true;
  }

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "Cohere2MoeModel always builds the sliding-window mask, which raises without a window");
  s.sliding_window = r.positive({"sliding_window"}, 4096);

  const int64_t first_k = r.non_negative({"first_k_dense_replace"}, 0);
  if (first_k > s.num_layers && !r.raw("layer_types"))
    throw InputError(r.name("first_k_dense_replace"), std::to_string(first_k),
                     "must not exceed num_hidden_layers (" + std::to_string(s.num_layers) +
                         "): the derived layer_types would have first_k_dense_replace entries");
  const int64_t prefix_pattern = strict_positive_int(r, "prefix_dense_sliding_window_pattern", 1);
  const int64_t pattern = strict_positive_int(r, "sliding_window_pattern", 4);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s)) {
    for (int64_t i = 0; i < s.num_layers; ++i) {
      const bool prefix = i < first_k;
      const int64_t j = prefix ? i : i - first_k;
      s.sliding_layers[static_cast<size_t>(i)] = (j + 1) % (prefix ? prefix_pattern : pattern) != 0;
    }
  }
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  if (const json* lt = r.raw("mlp_layer_types"); lt && !lt->is_null()) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) < s.num_layers)
      throw InputError(r.name("mlp_layer_types"), dump_short(*lt),
                       "must be a list of at least num_hidden_layers (" + std::to_string(s.num_layers) +
                           ") entries (Cohere2MoeDecoderLayer indexes it by layer)");
    for (size_t i = 0; i < static_cast<size_t>(s.num_layers); ++i) {
      const json& t = (*lt)[i];
      if (!t.is_string())
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be a string (\"dense\" or \"sparse\")");
      s.moe_layers[i] = t.get<std::string>() == "dense" ? 0 : 1;
    }
  } else {
    for (int64_t i = 0; i < s.num_layers && i < first_k; ++i) s.moe_layers[static_cast<size_t>(i)] = 0;
  }
  s.rope_layers.assign(static_cast<size_t>(s.num_layers), 0);
  bool any_moe = false, any_dense = false;
  for (size_t i = 0; i < s.rope_layers.size(); ++i) {
    const bool dense = s.moe_layers[i] == 0;
    (dense ? any_dense : any_moe) = true;
    s.rope_layers[i] = s.sliding_layers[i] != 0 || (dense && prefix_pattern == 1);
  }

  // The experts' width, and the dense prefix's MLP width in intermediate_size.
  s.moe_intermediate_size = s.intermediate_size;
  if (any_dense) s.intermediate_size = r.opt_positive({"prefix_dense_intermediate_size"}).value_or(s.intermediate_size);
  // Experts, router, shared experts.
  s.num_experts = r.positive({"num_experts"}, 8, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
  s.num_shared_experts = r.non_negative({"num_shared_experts"}, 0);
  s.norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  if (any_moe) {
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_experts (" + std::to_string(s.num_experts) + "): torch.topk raises");
    const std::string fn = r.string({"expert_selection_fn"}, "softmax");
    if (fn != "softmax" && fn != "sigmoid")
      throw InputError(r.name("expert_selection_fn"), "\"" + fn + "\"",
                       "must be \"softmax\" or \"sigmoid\" (Cohere2MoeTopKRouter raises otherwise)");
    std::string how = "average";
    if (s.num_shared_experts > 0) {
      how = r.string({"shared_expert_combination_strategy"}, "average");
      if (how != "sum" && how != "average")
        throw InputError(r.name("shared_expert_combination_strategy"), "\"" + how + "\"",
                         "must be \"sum\" or \"average\" (Cohere2MoeSparseMoeBlock raises otherwise)");
      s.shared_expert_intermediate_size = checked_mul(s.moe_intermediate_size, s.num_shared_experts);
    }
    fields->sigmoid_router = fn == "sigmoid";
    fields->shared_sum = how == "sum";
  }
  s.family_fields = fields;
  return s;
}

}  // namespace memplan::hf
