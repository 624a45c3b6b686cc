// Qwen3NextConfig (transformers 5.17 models/qwen3_next/configuration_qwen3_next.py), Qwen3_5TextConfig and
// Qwen3_5MoeTextConfig (models/qwen3_5*/configuration_qwen3_5*.py), and the wrappers Qwen3_5Config /
// Qwen3_5MoeConfig, whose text_config is imported (defaults when absent) and built as the text decoder: the
// vision tower is not modelled.
//
// Class defaults:
//   qwen3_next (Qwen3-Next-80B-A3B): vocab 151936, hidden 2048, intermediate 5632, 48 layers, 16 heads, 2 kv heads,
//     head_dim 256, 512 experts top 10 of moe_intermediate_size 512, shared_expert_intermediate_size 512,
//     norm_topk_prob True, decoder_sparse_step 1, mlp_only_layers [].
//   qwen3_5_text (Qwen3.5-9B): vocab 248320, hidden 4096, intermediate 12288, 32 layers, 16 heads, 4 kv heads,
//     head_dim 256, no experts.
//   qwen3_5_moe_text (Qwen3.5-35B-A3B): vocab 248320, hidden 2048, 40 layers, 16 heads, 2 kv heads, head_dim 256,
//     256 experts top 8 of 512, shared expert 512, every layer sparse; the router always renormalises its top k.
//   All: silu, rms_norm_eps 1e-6, tie_word_embeddings False, attention_bias False, attention_dropout 0.0,
//   linear_conv_kernel_dim 4, linear_key_head_dim / linear_value_head_dim 128, linear_num_key_heads 16,
//   linear_num_value_heads 32, partial_rotary_factor 0.25 (__post_init__'s default, also read from the rope dict),
//   layer_types: "full_attention" every full_attention_interval-th layer (4), "linear_attention" elsewhere.
// head_dim: getattr(config, "head_dim", hidden // heads); the classes set 256, so an explicit key wins.
#include <cmath>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

std::vector<uint8_t> read_layer_types(const ConfigReader& r, int64_t layers) {
  const size_t n = static_cast<size_t>(layers);
  std::vector<uint8_t> linear(n, 0);
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array()) throw InputError(r.name("layer_types"), dump_short(*lt), "must be a list of layer types");
    if (static_cast<int64_t>(lt->size()) != layers)
      throw InputError(r.name("layer_types"), std::to_string(lt->size()) + " entries",
                       "must have one entry per layer (num_hidden_layers = " + std::to_string(layers) + ")");
    for (size_t i = 0; i < n; ++i) {
      const json& t = (*lt)[i];
      if (t.is_string() && t.get<std::string>() == "linear_attention")
        linear[i] = 1;
      else if (!(t.is_string() && t.get<std::string>() == "full_attention"))
        throw InputError(r.name("layer_types[" + std::to_string(i) + "]"), dump_short(t),
                         "layers are \"linear_attention\" or \"full_attention\"");
    }
    return linear;
  }
  const int64_t interval = r.positive({"full_attention_interval"}, 4);
  for (size_t i = 0; i < n; ++i) linear[i] = (static_cast<int64_t>(i) + 1) % interval != 0;
  return linear;
}

TransformerSpec import_text(const ConfigReader& r, const std::string& type) {
  const bool next = type == "qwen3_next", moe = type != "qwen3_5_text";
  for (const char* k : {"num_key_value_heads", "head_dim"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be a positive integer");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, next ? 151936 : 248320);
  s.hidden_size = r.positive({"hidden_size"}, next || moe ? 2048 : 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, next ? 5632 : 12288);  // unused by every-layer MoE
  s.num_layers = r.positive({"num_hidden_layers"}, next ? 48 : (moe ? 40 : 32), kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 16);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, next || moe ? 2 : 4);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 256);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half splits it in two)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", type + " is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  if (r.probability({"attention_dropout"}, 0.0) > 0.0)
    throw InputError(r.name("attention_dropout"), dump_short(*r.raw("attention_dropout")),
                     "attention dropout is not modelled for " + type);
  if (const json* w = r.raw("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*w), type + " has no sliding-window attention");
  check_rope_type(r, type.c_str());
  std::string key;
  const double factor = partial_rotary_factor(r, 0.25, key);
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);

  s.linear_conv_kernel = r.positive({"linear_conv_kernel_dim"}, 4);
  s.linear_key_head_dim = r.positive({"linear_key_head_dim"}, 128);
  s.linear_value_head_dim = r.positive({"linear_value_head_dim"}, 128);
  s.linear_num_key_heads = r.positive({"linear_num_key_heads"}, 16);
  s.linear_num_value_heads = r.positive({"linear_num_value_heads"}, 32);
  if (s.linear_num_value_heads % s.linear_num_key_heads != 0)
    throw InputError(r.name("linear_num_value_heads"), std::to_string(s.linear_num_value_heads),
                     "must be a multiple of linear_num_key_heads (" + std::to_string(s.linear_num_key_heads) + ")");
  s.qwen3_next_linear_layers = read_layer_types(r, s.num_layers);
  // eos_token_id defaults to None: generate() then builds no logits processor (inference_replay.cpp).
  s.generate_without_eos = !r.present("eos_token_id");

  if (next) {
    read_qwen_moe(r, s, {512, 10, 512});
    s.norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
    s.shared_expert_intermediate_size = r.positive({"shared_expert_intermediate_size"}, 512);
  } else if (moe) {
    if (r.boolean({"output_router_logits"}, false))
      throw InputError(r.name("output_router_logits"), "true",
                       "the router auxiliary loss (load_balancing_loss_func) is not modelled");
    s.num_experts = r.positive({"num_experts"}, 256, kMaxExperts);
    s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
    s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 512);
    s.shared_expert_intermediate_size = r.positive({"shared_expert_intermediate_size"}, 512);
    s.norm_topk_prob = true;  // Qwen3_5MoeTopKRouter always renormalises
    s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  }
  return s;
}

}  // namespace

TransformerSpec import_qwen3_next(const ConfigReader& r, const std::string& type) {
  if (type != "qwen3_5" && type != "qwen3_5_moe") return import_text(r, type);
  const json* tc = r.raw("text_config");
  static const json kEmpty = json::object();
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  const ConfigReader text(tc ? *tc : kEmpty, r.name("text_config."));
  TransformerSpec s = import_text(text, type + "_text");
  s.generate_without_eos = s.generate_without_eos && !r.present("eos_token_id");
  s.modelled_part = "text decoder only";
  return s;
}

}  // namespace memplan::hf
