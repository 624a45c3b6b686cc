// Mistral4Config (transformers 5.17 models/mistral4/configuration_mistral4.py).
//
// Class defaults (Mistral-Small-4-119B-2603's text model): vocab 131072, hidden 4096, intermediate 12288,
// moe_intermediate_size 2048, 36 layers, 32 heads, num_key_value_heads 32 (None => heads), n_shared_experts 1,
// n_routed_experts 128 (alias num_local_experts), routed_scaling_factor 1.0, kv_lora_rank 256, q_lora_rank 1024
// (None => a plain q_proj), qk_rope_head_dim 64, v_head_dim 128, qk_nope_head_dim 64, n_group 1, topk_group 1,
// num_experts_per_tok 4, first_k_dense_replace 0, norm_topk_prob True, silu, max_position_embeddings 1048576,
// pad_token_id 11, tie False, rope_interleave True, attention_bias False, attention_dropout 0.0; rope_parameters
// None => yarn (factor 128, original_max_position_embeddings 8192, llama_4_scaling_beta 0.1, partial_rotary_factor
// qk_rope_head_dim / (qk_nope_head_dim + qk_rope_head_dim)).
// Refused, naming the field: num_key_value_heads other than num_attention_heads (the expanded keys have
// num_attention_heads heads; repeat_kv would repeat them again), an n_group / topk_group / num_experts_per_tok the
// router cannot take (topk(2) per group, topk_group groups, top-k among their experts), a partial_rotary_factor
// that does not cover exactly qk_rope_head_dim (cos / sin would not broadcast against q_rot), the rope dict's
// missing query-scaling keys (import_ministral3.cpp check_llama4_scaled_rope), hidden_act other than silu, and
// quantization_config (the published checkpoint's fp8 weights: from_config builds bf16 / fp32 modules; drop the
// key to size those).
#include <cmath>

#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_mistral4(const ConfigReader& r) {
  refuse_quantized_mistral(r, "mistral4");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 131072);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 12288);
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 2048);
  s.num_layers = r.positive({"num_hidden_layers"}, 36, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(r.explicit_null("num_key_value_heads") ? s.num_heads : 32);
  if (s.num_kv_heads != s.num_heads)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         "): Mistral4Attention expands the latent to num_attention_heads keys, which repeat_kv would "
                         "repeat again (the attention fails)");
  s.num_shared_experts = r.positive({"n_shared_experts"}, 1);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 128, kMaxExperts);
  s.kv_lora_rank = r.positive({"kv_lora_rank"}, 256);
  s.q_lora_rank = r.explicit_null("q_lora_rank") ? 0 : r.positive({"q_lora_rank"}, 1024);
  s.qk_rope_head_dim = r.positive({"qk_rope_head_dim"}, 64);
  if (s.qk_rope_head_dim % 2 != 0)
    throw InputError(r.name("qk_rope_head_dim"), std::to_string(s.qk_rope_head_dim),
                     "must be even (the rotary embedding rotates pairs)");
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 64);
  if (r.explicit_null("v_head_dim"))
    throw InputError(r.name("v_head_dim"), "null", "must be a positive integer (kv_b_proj's width uses it)");
  s.v_head_dim = r.positive({"v_head_dim"}, 128);
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;  // the query / key head dim the attention sees
  if (r.explicit_null("first_k_dense_replace"))
    throw InputError(r.name("first_k_dense_replace"), "null", "must be an integer >= 0 (compared with the layer index)");
  s.first_dense_layers = r.non_negative({"first_k_dense_replace"}, 0);
  s.moe_norm_topk_prob = !r.explicit_null("norm_topk_prob") && r.boolean({"norm_topk_prob"}, true);
  s.rope_interleave = !r.explicit_null("rope_interleave") && r.boolean({"rope_interleave"}, true);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1048576);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "mistral4 is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);

  if (s.first_dense_layers < s.num_layers) {  // Mistral4TopkRouter runs
    auto k = r.opt_positive({"num_experts_per_tok"});
    if (!k && r.explicit_null("num_experts_per_tok"))
      throw InputError(r.name("num_experts_per_tok"), "null", "must be set: the MoE layers take the top-k experts");
    s.num_experts_per_tok = k.value_or(4);
    const int64_t E = s.num_experts;
    const int64_t G = r.explicit_null("n_group") ? 0 : r.non_negative({"n_group"}, 1);
    const int64_t TG = r.explicit_null("topk_group") ? 0 : r.non_negative({"topk_group"}, 1);
    if (!(G > 0 && E % G == 0 && E / G >= 2))
      throw InputError(r.name("n_group"), r.explicit_null("n_group") ? "null" : std::to_string(G),
                       "must divide n_routed_experts (" + std::to_string(E) +
                           ") into groups of at least 2 experts (Mistral4TopkRouter takes the top 2 per group)");
    if (!(TG > 0 && TG <= G))
      throw InputError(r.name("topk_group"), r.explicit_null("topk_group") ? "null" : std::to_string(TG),
                       "must be in [1, n_group (" + std::to_string(G) + ")]");
    if (s.num_experts_per_tok > E / G * TG)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed the experts of topk_group groups (" + std::to_string(E / G * TG) + ")");
    s.moe_n_group = G;
    s.moe_topk_group = TG;
  }

  check_llama4_scaled_rope(r, "mistral4");
  // The rotary embedding covers head_dim * partial_rotary_factor dims; apply_rotary_pos_emb* needs exactly
  // qk_rope_head_dim (its q_rot / k_rot slices).
  for (const char* k : {"rope_parameters", "rope_scaling"}) {
    const json* d = r.raw(k);
    if (!d) continue;
    auto f = d->find("partial_rotary_factor");
    if (f != d->end() && !f->is_null()) {
      const double dims = f->is_number() ? f->get<double>() * static_cast<double>(s.head_dim) : -1;
      if (!(std::fabs(dims - static_cast<double>(s.qk_rope_head_dim)) < 1e-6))
        throw InputError(r.name(std::string(k) + ".partial_rotary_factor"), dump_short(*f),
                         "must give qk_rope_head_dim (" + std::to_string(s.qk_rope_head_dim) + ") rotary dims of the " +
                             std::to_string(s.head_dim) + "-dim query head (the default does)");
    }
    break;
  }
  check_mistral_pad(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
