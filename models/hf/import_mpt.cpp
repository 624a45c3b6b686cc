// MptConfig (transformers models/mpt/configuration_mpt.py) and what MptModel / MptAttention read of it.
//
// Class defaults: d_model 2048, n_heads 16, n_layers 24, expansion_ratio 4 (the FFN is 4 x d_model), max_seq_len
// 2048 (ALiBi's length: a longer prompt plus fed-back tokens fails the bias's broadcast, so it bounds a sequence as
// a learned table would), vocab 50368, attn_config (a dict or MptAttentionConfig): attn_pdrop 0 (also the residual
// and FFN dropouts: HF's MPT reads no other rate), clip_qkv None, softmax_scale None (1 / sqrt(head_dim));
// lm_head tied. HF's MptModel has no biases and no position table whatever no_bias / learned_pos_emb say, and
// always adds ALiBi; it reads neither qk_ln, prefix_lm nor attn_uses_sequence_id, so those keys are accepted as
// the class ignores them. MptAttention requires d_model % n_heads == 0.
// Refused, naming the field: an attn_config that is not an object, an attn_pdrop that is not a probability, a
// clip_qkv that is not a positive number.
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_mpt(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50368);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 2048);
  s.num_layers = r.positive({"n_layers", "num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"n_heads", "num_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_heads", "d_model");
  s.intermediate_size = checked_mul(r.positive({"expansion_ratio"}, 4), s.hidden_size, "config.expansion_ratio");
  s.max_position_embeddings = r.positive({"max_seq_len", "max_position_embeddings"}, 2048);
  s.learned_positions = true;  // ALiBi is built max_seq_len long
  s.hidden_act = "gelu";
  static const json kEmpty = json::object();
  const json* ac = r.raw("attn_config");
  if (ac && !ac->is_object()) throw InputError(r.name("attn_config"), dump_short(*ac), "must be a JSON object");
  const ConfigReader attn(ac ? *ac : kEmpty, r.name("attn_config."));
  s.attn_dropout = attn.probability({"attn_pdrop"}, 0.0);
  if (const auto clip = attn.opt_positive_number({"clip_qkv"})) s.mpt_clip_qkv = *clip;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  return s;
}

}  // namespace memplan::hf
