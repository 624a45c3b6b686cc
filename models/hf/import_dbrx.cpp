// DbrxConfig with its DbrxAttentionConfig / DbrxFFNConfig (transformers 5.17 models/dbrx/configuration_dbrx.py) and
// what models/dbrx/modeling_dbrx.py reads of them.
//
// DbrxConfig defaults (attribute_map: hidden_size = d_model, num_attention_heads = n_heads, num_hidden_layers =
// n_layers, max_position_embeddings = max_seq_len): d_model 2048, n_heads 16, n_layers 24, max_seq_len 2048, vocab
// 32000, resid_pdrop 0.0 (dropout on both block outputs in training), emb_pdrop 0.0 (stored, never applied),
// tie_word_embeddings False (True is refused by the class), output_router_logits False (True adds the load-balancing
// loss: not modelled, refused).
// attn_config: attn_pdrop 0.0, clip_qkv None, kv_n_heads 1; head_dim = d_model // n_heads. clip_qkv None makes
// DbrxAttention call torch.clamp(min=None, max=None), which raises: refused (the published checkpoints set 8).
// ffn_config: ffn_act_fn {"name": "silu"} (the one modelled), ffn_hidden_size 3584, moe_num_experts 4, moe_top_k 1,
// moe_jitter_eps None (any number, 0 included, multiplies the FFN's input in place by a uniform noise tensor in
// training), moe_normalize_expert_weights 1.0 (None: no p-norm division of the top-k weights).
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {
const json kEmpty = json::object();
}

TransformerSpec import_dbrx(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 32000);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 2048);
  s.num_layers = r.positive({"n_layers", "num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"n_heads", "num_attention_heads"}, 16);
  s.max_position_embeddings = r.positive({"max_seq_len", "max_position_embeddings"}, 2048);
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_heads", "d_model");
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("n_heads"), std::to_string(s.num_heads),
                     "gives an odd head_dim (" + std::to_string(s.head_dim) + "): rotate_half pairs dimensions");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  if (s.tie_word_embeddings)
    throw InputError(r.name("tie_word_embeddings"), "true", "DbrxConfig refuses tied embeddings");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router's load-balancing loss is not modelled (set it false)");
  for (const char* k : {"attn_config", "ffn_config"})
    if (const json* v = r.raw(k); v && !v->is_object())
      throw InputError(r.name(k), dump_short(*v), "must be a JSON object");
  const json* ac = r.raw("attn_config");
  const ConfigReader attn(ac ? *ac : kEmpty, r.name("attn_config."));
  s.attn_dropout = attn.probability({"attn_pdrop"}, 0.0);
  s.num_kv_heads = attn.positive({"kv_n_heads"}, 1);
  check_kv_heads(r, s);
  const auto clip = attn.opt_positive_number({"clip_qkv"});
  if (!clip)
    throw InputError(attn.name("clip_qkv"), attn.explicit_null("clip_qkv") ? "null" : "absent (None)",
                     "must be a positive number: DbrxAttention calls clamp(min=None, max=None) otherwise, which raises");
  s.clip_qkv = *clip;
  const json* fc = r.raw("ffn_config");
  const ConfigReader ffn(fc ? *fc : kEmpty, r.name("ffn_config."));
  std::string act = "silu";
  if (const json* a = ffn.raw("ffn_act_fn")) {
    if (!a->is_object()) throw InputError(ffn.name("ffn_act_fn"), dump_short(*a), "must be an object {\"name\": ...}");
    const ConfigReader actr(*a, ffn.name("ffn_act_fn."));
    act = actr.string({"name"}, "silu");
  }
  if (act != "silu" && act != "swish")
    throw InputError(ffn.name("ffn_act_fn.name"), "\"" + act + "\"", "dbrx is modelled with silu");
  s.hidden_act = act;
  s.moe_intermediate_size = ffn.positive({"ffn_hidden_size"}, 3584);
  s.intermediate_size = s.moe_intermediate_size;
  s.num_experts = ffn.positive({"moe_num_experts"}, 4);
  s.num_experts_per_tok = ffn.positive({"moe_top_k"}, 1);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(ffn.name("moe_top_k"), std::to_string(s.num_experts_per_tok),
                     "must not exceed moe_num_experts (" + std::to_string(s.num_experts) + ")");
  if (const json* j = ffn.raw("moe_jitter_eps")) {
    if (!j->is_number() || j->get<double>() < 0.0)
      throw InputError(ffn.name("moe_jitter_eps"), dump_short(*j), "must be a non-negative number or null");
    s.dbrx_moe_jitter = true;  // `is not None`: 0 still multiplies by a uniform(1, 1) tensor
  }
  // moe_normalize_expert_weights: absent -> 1.0 (divide), explicit null -> no division.
  s.dbrx_normalize_expert_weights = !ffn.explicit_null("moe_normalize_expert_weights");
  if (s.dbrx_normalize_expert_weights) ffn.opt_positive_number({"moe_normalize_expert_weights"});
  check_rope_type(r, "dbrx");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
