// DebertaV2Config (transformers 5.17 models/deberta_v2/configuration_deberta_v2.py) and what DebertaV2Model and
// its heads (ForMaskedLM, ForSequenceClassification, ForTokenClassification) read of it.
//
// Class defaults: vocab 128100, hidden 1536, 24 layers, 24 heads, intermediate 6144, hidden_act "gelu",
// hidden_dropout_prob 0.1, attention_probs_dropout_prob 0.1, max_position_embeddings 512, type_vocab_size 0,
// relative_attention false, max_relative_positions -1, pad_token_id 0, position_biased_input true, pos_att_type
// None (a string is split on "|", lower-cased), pooler_dropout 0, pooler_hidden_act "gelu", legacy true,
// tie_word_embeddings true. Keys the modules read with getattr and their defaults: position_buckets -1,
// share_att_key false, norm_rel_ebd "none", embedding_size hidden_size, conv_kernel_size 0, cls_dropout None
// (-> hidden_dropout_prob), attention_head_size hidden // heads; __post_init__ sets pooler_hidden_size from the
// key or hidden_size.
#include <cctype>
#include <string>
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// The activations the builder replays as one kernel each (ACT2FN names).
bool deberta_activation(const std::string& a) { return a == "gelu" || a == "relu" || a == "tanh"; }

// "a|b" or ["a", "b"] (configuration __post_init__ lower-cases and strips a string's entries).
std::vector<std::string> entries(const ConfigReader& r, const char* key, bool split_lower) {
  std::vector<std::string> out;
  const json* v = r.raw(key);
  if (!v) return out;
  auto add = [&](std::string e) {
    if (split_lower)
      for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t b = e.find_first_not_of(" \t"), l = e.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? std::string() : e.substr(b, l - b + 1));
  };
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    size_t start = 0;
    while (true) {
      const size_t bar = s.find('|', start);
      add(s.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  } else if (v->is_array()) {
    for (const json& e : *v) {
      if (!e.is_string()) throw InputError(r.name(key), dump_short(*v), "must be a list of strings or a \"|\" string");
      add(e.get<std::string>());
    }
  } else {
    throw InputError(r.name(key), dump_short(*v), "must be a list of strings or a \"|\" string");
  }
  return out;
}

}  // namespace

TransformerSpec import_deberta_v2(const ConfigReader& r) {
  TransformerSpec s;
  // Relative positions (and, without position_biased_input, no absolute table): family llama keeps seq_len free
  // of the BERT learned-position bound; learned_positions restores it where the absolute table exists.
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 128100);
  s.hidden_size = r.positive({"hidden_size"}, 1536);
  s.num_layers = r.positive({"num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 24);
  s.num_kv_heads = s.num_heads;
  // DisentangledSelfAttention raises unless the heads divide hidden_size.
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  if (auto d = r.opt_positive({"attention_head_size"}); d && *d != s.head_dim)
    throw InputError(r.name("attention_head_size"), std::to_string(*d),
                     "is not modelled (only hidden_size / num_attention_heads = " + std::to_string(s.head_dim) + ")");
  s.intermediate_size = r.positive({"intermediate_size"}, 6144);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 512);
  s.type_vocab_size = r.non_negative({"type_vocab_size"}, 0);
  if (s.type_vocab_size > kMaxDim)
    throw InputError(r.name("type_vocab_size"), std::to_string(s.type_vocab_size), "exceeds the limit");
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled (deberta-v2 is modelled with gelu, in the intermediate and the MLM head)");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.embd_dropout = s.resid_dropout;
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;

  check_padding_idx(r, s.vocab_size);
  if (auto e = r.opt_positive({"embedding_size"}); e && *e != s.hidden_size)
    throw InputError(r.name("embedding_size"), std::to_string(*e),
                     "an embedding_size other than hidden_size (embed_proj) is not modelled");
  if (r.non_negative({"conv_kernel_size"}, 0) != 0)
    throw InputError(r.name("conv_kernel_size"), dump_short(*r.raw("conv_kernel_size")),
                     "the encoder's ConvLayer is not modelled (0 only)");
  if (auto p = r.opt_positive({"pooler_hidden_size"}); p && *p != s.hidden_size)
    throw InputError(r.name("pooler_hidden_size"), std::to_string(*p),
                     "must equal hidden_size (ContextPooler's dense runs on the hidden states)");

  s.deberta_position_biased_input = r.boolean({"position_biased_input"}, true);
  s.learned_positions = s.deberta_position_biased_input;
  s.deberta_relative_attention = r.boolean({"relative_attention"}, false);
  // position_buckets / max_relative_positions: any integer (<= 0: none / max_position_embeddings).
  auto int_key = [&](const char* key, int64_t dflt) {
    const json* v = r.raw(key);
    if (!v) return dflt;
    if (!v->is_number_integer()) throw InputError(r.name(key), dump_short(*v), "must be an integer");
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(kMaxDim))
      throw InputError(r.name(key), dump_short(*v), "exceeds the limit of " + std::to_string(kMaxDim));
    const int64_t x = v->get<int64_t>();
    if (x > kMaxDim) throw InputError(r.name(key), dump_short(*v), "exceeds the limit of " + std::to_string(kMaxDim));
    return x;
  };
  const int64_t buckets = int_key("position_buckets", -1);
  const int64_t max_rel = int_key("max_relative_positions", -1);
  s.deberta_position_buckets = buckets > 0 ? buckets : 0;
  s.deberta_max_relative_positions = max_rel < 1 ? s.max_position_embeddings : max_rel;
  // make_log_bucket_position's values (inf or NaN for a max_position at or below the bucket half-width) are
  // clamped into the table before the gathers: no value changes a tensor's size.
  for (const std::string& e : entries(r, "pos_att_type", true)) {
    if (e == "c2p")
      s.deberta_c2p = true;
    else if (e == "p2c")
      s.deberta_p2c = true;
    else
      throw InputError(r.name("pos_att_type"), "\"" + e + "\"", "is not modelled (c2p and p2c only)");
  }
  s.deberta_share_att_key = r.boolean({"share_att_key"}, false);
  {
    const json* v = r.raw("norm_rel_ebd");
    if (v && !v->is_string()) throw InputError(r.name("norm_rel_ebd"), dump_short(*v), "must be a string");
    for (const std::string& e : entries(r, "norm_rel_ebd", true))
      if (e == "layer_norm") s.deberta_norm_rel_ebd = true;
  }
  s.deberta_pooler_dropout = r.probability({"pooler_dropout"}, 0.0);
  s.deberta_pooler_act = r.string({"pooler_hidden_act"}, "gelu");
  if (!deberta_activation(s.deberta_pooler_act))
    throw InputError(r.name("pooler_hidden_act"), "\"" + s.deberta_pooler_act + "\"",
                     "is not modelled (gelu, relu, tanh)");
  s.deberta_cls_dropout = r.opt_probability({"cls_dropout"}).value_or(s.resid_dropout);
  s.deberta_legacy_mlm_head = r.boolean({"legacy"}, true);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  return s;
}

}  // namespace memplan::hf
