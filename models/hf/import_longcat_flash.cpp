// LongcatFlashConfig (transformers 5.17 models/longcat_flash/configuration_longcat_flash.py) and what
// LongcatFlashMLA, LongcatFlashTopkRouter, LongcatFlashExperts, LongcatFlashDecoderLayer and LongcatFlashModel read
// of it (modeling_longcat_flash.py; engine/arch/decoders/moe/longcat_flash.cpp).
//
// Class defaults (the 5.17 dataclass fields, meituan-longcat/LongCat-Flash-Chat): vocab 131072, hidden 6144,
// num_layers 28 (decoder layers; LongcatFlashModel overwrites num_hidden_layers with 2 x num_layers, so the
// num_hidden_layers key is never read), 64 heads, num_key_value_heads None (=> heads), silu, 131072 positions,
// untied, attention_bias False, attention_dropout 0.0, ffn_hidden_size 12288 (attribute_map: intermediate_size),
// q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, head_dim 64 (the rotary
// embedding's width), v_head_dim 128, qk_head_dim None (=> nope + rope), moe_topk 12 (num_experts_per_tok),
// n_routed_experts 512 (num_local_experts), zero_expert_num 256 (null => 0), expert_ffn_hidden_size 2048,
// routed_scaling_factor 6.0; router_bias read by getattr (False). The published config's mla_scale_q_lora /
// mla_scale_kv_lora / zero_expert_type / attention_method keys are not read (5.17 always scales, always identity).
// Refused: quantization_config, hidden_act other than silu / swish, num_key_value_heads != num_attention_heads,
// q_lora_rank null (LongcatFlashMLA.forward always calls q_a_proj: None), qk_head_dim other than nope + rope (the
// split fails), head_dim other than qk_rope_head_dim (cos / sin would not broadcast over q_rot's halves), an odd
// qk_rope_head_dim, a rope type other than default / linear / dynamic / yarn / llama3 (check_rope_type), moe_topk
// above the routed + zero experts.
#include <memory>

#include "engine/arch/decoders/moe/longcat_flash_fields.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_longcat_flash(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized longcat_flash weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "num_layers", "num_attention_heads", "ffn_hidden_size",
                        "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "head_dim", "v_head_dim", "moe_topk",
                        "n_routed_experts", "expert_ffn_hidden_size", "max_position_embeddings"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (LongcatFlashConfig: int)");
  if (r.explicit_null("q_lora_rank"))
    throw InputError(r.name("q_lora_rank"), "null",
                     "LongcatFlashMLA.forward always runs q_a_proj / q_b_proj, which q_lora_rank None leaves unset");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 131072);
  s.hidden_size = r.positive({"hidden_size"}, 6144);
  s.num_layers = r.positive({"num_layers"}, 28, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, s.num_heads);
  check_kv_heads(r, s);
  if (s.num_kv_heads != s.num_heads)
    throw InputError(r.name("num_key_value_heads"), std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) +
                         ") for multi-head latent attention: transformers repeats the expanded keys otherwise");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "longcat_flash is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.intermediate_size = r.positive({"ffn_hidden_size", "intermediate_size"}, 12288);
  s.q_lora_rank = r.positive({"q_lora_rank"}, 1536);
  s.kv_lora_rank = r.positive({"kv_lora_rank"}, 512);
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 128);
  s.qk_rope_head_dim = r.positive({"qk_rope_head_dim"}, 64);
  if (s.qk_rope_head_dim % 2 != 0)
    throw InputError(r.name("qk_rope_head_dim"), std::to_string(s.qk_rope_head_dim),
                     "must be even (the interleaved rotary rotates pairs)");
  s.v_head_dim = r.positive({"v_head_dim"}, 128);
  const int64_t qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  if (!r.explicit_null("qk_head_dim")) {
    const int64_t given = r.positive({"qk_head_dim"}, qk);
    if (given != qk)
      throw InputError(r.name("qk_head_dim"), std::to_string(given),
                       "must equal qk_nope_head_dim + qk_rope_head_dim (" + std::to_string(qk) +
                           "): the query is split into the two");
  }
  const int64_t rotary = r.positive({"head_dim"}, 64);
  if (rotary != s.qk_rope_head_dim)
    throw InputError(r.name("head_dim"), std::to_string(rotary),
                     "must equal qk_rope_head_dim (" + std::to_string(s.qk_rope_head_dim) +
                         "): the rotary embedding's cos / sin are head_dim wide and must cover q_rot");
  s.head_dim = qk;  // the query / key head dim the attention sees
  s.rope_interleave = true;  // apply_rotary_pos_emb_interleave
  check_rope_type(r, "longcat_flash");

  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 512, kMaxExperts);
  s.num_experts_per_tok = r.positive({"moe_topk", "num_experts_per_tok"}, 12);
  s.moe_intermediate_size = r.positive({"expert_ffn_hidden_size"}, 2048);
  auto f = std::make_shared<LongcatFlashFields>();
  f->zero_experts = r.explicit_null("zero_expert_num") ? 0 : r.non_negative({"zero_expert_num"}, 256);
  f->router_bias = r.boolean({"router_bias"}, false);
  if (s.num_experts_per_tok > s.num_experts + f->zero_experts)
    throw InputError(r.name("moe_topk"), std::to_string(s.num_experts_per_tok),
                     "must not exceed n_routed_experts + zero_expert_num (" +
                         std::to_string(s.num_experts + f->zero_experts) + "): torch.topk over the router's scores");
  s.family_fields = f;
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
