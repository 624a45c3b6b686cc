// EsmConfig (transformers models/esm/configuration_esm.py) and what EsmForMaskedLM, EsmForSequenceClassification,
// EsmForTokenClassification and EsmModel read of it (builder: engine/arch/encoders/esm.cpp).
//
// Class defaults: vocab_size None, hidden 768, 12 layers, 12 heads, intermediate 3072, hidden_dropout_prob 0.1,
// attention_probs_dropout_prob 0.1, max_position_embeddings 1026, position_embedding_type "absolute",
// emb_layer_norm_before None, token_dropout False, mask_token_id None, pad_token_id None, is_folding_model False,
// tie_word_embeddings True. The published ESM-2 checkpoints (facebook/esm2_t*_UR50D) set vocab 33,
// position_embedding_type "rotary", token_dropout true, emb_layer_norm_before false, mask 32, pad 1 and both
// dropouts 0.0; ESM-1b (facebook/esm1b_t33_650M_UR50S) "absolute" with emb_layer_norm_before true.
// hidden_act is not read: EsmIntermediate and EsmLMHead call the module's own erf-based gelu() whatever it says.
// Both classification heads drop out at hidden_dropout_prob (no classifier_dropout). The embeddings apply no dropout
// (the statement is commented out in EsmEmbeddings.forward).
// Refused, naming the field: vocab_size absent (no class default), pad_token_id absent or null (the position ids
// are counted from it by input_ids.ne(padding_idx)), mask_token_id absent with token_dropout true (the embeddings
// compare the ids with it), position_embedding_type "relative_key" / "relative_key_query" (a distance table
// einsum'd into eager scores: not modelled) or anything else, is_folding_model true (ESMFold's trunk is not an
// encoder forward), is_decoder / add_cross_attention true, chunk_size_feed_forward > 0, hidden_size not a multiple
// of num_attention_heads, an odd head size with rotary positions (rotate_half pairs dimensions), a padding index
// that leaves no absolute position.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_esm(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention
  const std::optional<int64_t> vocab = r.opt_positive({"vocab_size"});
  if (!vocab)
    throw InputError(r.name("vocab_size"), "absent", "EsmConfig has no default vocabulary (the ESM-2 checkpoints: 33)");
  s.vocab_size = *vocab;
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  s.hidden_act = "gelu";
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.embd_dropout = 0.0;
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.seq_cls_dropout = s.token_cls_dropout = s.resid_dropout;
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1026);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.type_vocab_size = 0;

  const std::string pos = r.string({"position_embedding_type"}, "absolute");
  if (pos == "rotary") {
    s.esm_rotary = true;
    check_rotary_head_dim(r, s);
  } else if (pos != "absolute") {
    throw InputError(r.name("position_embedding_type"), "\"" + pos + "\"",
                     pos.rfind("relative_key", 0) == 0
                         ? "relative position tables (eager attention only) are not modelled for esm (absolute, rotary)"
                         : "must be \"absolute\" or \"rotary\"");
  }
  s.esm_token_dropout = r.boolean({"token_dropout"}, false);
  s.esm_emb_layer_norm_before = r.boolean({"emb_layer_norm_before"}, false);

  if (!r.present("pad_token_id"))
    throw InputError(r.name("pad_token_id"), r.explicit_null("pad_token_id") ? "null" : "absent",
                     "EsmEmbeddings counts the position ids from the padding index (input_ids.ne(pad_token_id)); the "
                     "ESM checkpoints set 1");
  const int64_t pad = r.non_negative({"pad_token_id"}, 1);
  if (pad >= s.vocab_size)
    throw InputError(r.name("pad_token_id"), std::to_string(pad), "must be below vocab_size");
  if (!s.esm_rotary) {
    if (pad + 1 >= s.max_position_embeddings)
      throw InputError(r.name("pad_token_id"), std::to_string(pad),
                       "leaves no position: absolute positions start at pad_token_id + 1 and end at "
                       "max_position_embeddings (" + std::to_string(s.max_position_embeddings) + ")");
    s.position_id_offset = pad + 1;
  }
  if (s.esm_token_dropout) {
    if (!r.present("mask_token_id"))
      throw InputError(r.name("mask_token_id"), r.explicit_null("mask_token_id") ? "null" : "absent",
                       "token_dropout compares the input ids with the mask token (the ESM-2 checkpoints set 32)");
    const int64_t mask = r.non_negative({"mask_token_id"}, 0);
    if (mask >= s.vocab_size)
      throw InputError(r.name("mask_token_id"), std::to_string(mask), "must be below vocab_size");
  }
  if (r.boolean({"is_folding_model"}, false))
    throw InputError(r.name("is_folding_model"), "true",
                     "ESMFold (EsmForProteinFolding's folding trunk) is not modelled; the ESM-2 language model is");
  for (const char* key : {"is_decoder", "add_cross_attention"})
    if (r.boolean({key}, false))
      throw InputError(r.name(key), "true", "esm is modelled as a bidirectional encoder (false only)");
  refuse_chunked_feed_forward(r);
  read_problem_type(r, s);
  return s;
}

}  // namespace memplan::hf
