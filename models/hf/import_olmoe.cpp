// OlmoeConfig (transformers 5.17 models/olmoe/configuration_olmoe.py) and what modeling_olmoe.py reads of it.
//
// Class defaults: vocab 50304, hidden 2048, intermediate 2048 (each expert's width: OlmoeExperts reads
// config.intermediate_size), 16 layers, 16 heads, num_key_value_heads None => heads (__post_init__), silu,
// max_position_embeddings 4096, tie False, attention_bias False, attention_dropout 0, clip_qkv None, 8 of 64
// experts (num_local_experts is an alias of num_experts), norm_topk_prob False, output_router_logits False.
// Every layer is sparse (no decoder_sparse_step / mlp_only_layers in OlmoeConfig).
// Shapes the modeling code fixes: q_norm is OlmoeRMSNorm(hidden_size) and k_norm is over
// (hidden // heads) * kv_heads, applied to q_proj's heads * head_dim and k_proj's kv_heads * head_dim outputs,
// with head_dim = getattr(config, "head_dim", hidden // heads): the forward only runs when heads * head_dim ==
// hidden, so hidden must divide by the heads and a head_dim key must equal hidden / heads.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_olmoe(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {50304, 2048, 2048, 16, 16});
  if (s.head_dim * s.num_heads != s.hidden_size)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim),
                     "must equal hidden_size / num_attention_heads (" + std::to_string(s.hidden_size) + " / " +
                         std::to_string(s.num_heads) + "): OlmoeAttention's q_norm is over hidden_size");
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "olmoe is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.clip_qkv = r.opt_positive_number({"clip_qkv"}).value_or(0.0);
  // OlmoeConfig has no sliding window; a key in config.json would still reach the cache (DynamicCache reads
  // config.sliding_window) and the attention call's sliding_window argument.
  if (r.present("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*r.raw("sliding_window")),
                     "is not an OlmoeConfig field; sliding-window attention is not modelled for olmoe");
  s.num_experts = r.positive({"num_experts", "num_local_experts"}, 64, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;  // OlmoeExperts: intermediate_dim = config.intermediate_size
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.norm_topk_prob = r.boolean({"norm_topk_prob"}, false);
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router auxiliary loss (load_balancing_loss_func) is not modelled");
  return s;
}

}  // namespace memplan::hf
