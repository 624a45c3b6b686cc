// ModernBertConfig (transformers 5.17 models/modernbert/configuration_modernbert.py) and what
// ModernBertForMaskedLM and its sequence / token classification classes read of it.
//
// Class defaults: vocab 50368, hidden 768, intermediate 1152, 22 layers, 12 heads (head_dim = hidden / heads,
// which must divide), hidden_activation "gelu", max_position_embeddings 8192, norm_bias false, attention_bias
// false, attention_dropout 0, local_attention 128 (config.sliding_window = local_attention // 2), embedding_dropout
// 0, mlp_bias false, mlp_dropout 0, decoder_bias true, classifier_bias false, classifier_activation "gelu",
// sparse_prediction false, tie_word_embeddings true, pad_token_id 50283, classifier_pooling "cls",
// classifier_dropout 0. layer_types None -> from the legacy global_attn_every_n_layers (default 3): layer i is
// "sliding_attention" iff i % n != 0.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

void check_activation(const ConfigReader& r, const char* key, const std::string& act) {
  if (!is_single_kernel_activation(act))
    throw InputError(r.name(key), "\"" + act + "\"", "is not modelled (gelu, gelu_pytorch_tanh, silu, relu)");
}

// rope_parameters per layer type: only the default rope type is modelled (its cos / sin are the same tensors
// whatever the theta); a legacy rope_scaling would change them.
void check_rope(const ConfigReader& r) {
  if (const json* rs = r.raw("rope_scaling"))
    throw InputError(r.name("rope_scaling"), dump_short(*rs), "rope scaling is not modelled for modernbert");
  const json* rp = r.raw("rope_parameters");
  if (!rp) return;
  if (!rp->is_object()) throw InputError(r.name("rope_parameters"), dump_short(*rp), "must be an object");
  for (const char* type : {"full_attention", "sliding_attention"}) {
    auto it = rp->find(type);
    if (it == rp->end() || it->is_null()) continue;
    if (!it->is_object())
      throw InputError(r.name("rope_parameters.") + type, dump_short(*it), "must be an object");
    auto rt = it->find("rope_type");
    if (rt != it->end() && !(rt->is_string() && rt->get<std::string>() == "default"))
      throw InputError(r.name("rope_parameters.") + type + ".rope_type", dump_short(*rt),
                       "only the default rope type is modelled for modernbert");
  }
}

}  // namespace

TransformerSpec import_modernbert(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;  // rotary positions: no learned-position limit on seq_len
  s.vocab_size = r.positive({"vocab_size"}, 50368);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.intermediate_size = r.positive({"intermediate_size"}, 1152);
  s.num_layers = r.positive({"num_hidden_layers"}, 22, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "leaves an odd head_dim (" + std::to_string(s.head_dim) + "): rotate_half needs an even one");
  // The rotary embedding reads getattr(config, "head_dim", None) or hidden // heads, the attention always
  // hidden // heads: a different head_dim key breaks the model.
  if (auto d = r.opt_positive({"head_dim"}); d && *d != s.head_dim)
    throw InputError(r.name("head_dim"), std::to_string(*d),
                     "must equal hidden_size / num_attention_heads (" + std::to_string(s.head_dim) + ")");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_activation"}, "gelu");
  check_activation(r, "hidden_activation", s.hidden_act);
  s.classifier_activation = r.string({"classifier_activation"}, "gelu");
  check_activation(r, "classifier_activation", s.classifier_activation);
  s.norm_bias = r.boolean({"norm_bias"}, false);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  s.decoder_bias = r.boolean({"decoder_bias"}, true);
  s.classifier_bias = r.boolean({"classifier_bias"}, false);
  // ModernBertForSequenceClassification / ...ForTokenClassification: drop = nn.Dropout(classifier_dropout) after
  // the prediction head; classifier_pooling (Literal["cls", "mean"]) picks the first token or the masked mean.
  s.seq_cls_dropout = s.token_cls_dropout = r.probability({"classifier_dropout"}, 0.0);
  const std::string pooling = r.string({"classifier_pooling"}, "cls");
  if (pooling != "cls" && pooling != "mean")
    throw InputError(r.name("classifier_pooling"), "\"" + pooling + "\"", "must be \"cls\" or \"mean\"");
  s.cls_mean_pooling = pooling == "mean";
  read_problem_type(r, s);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.embd_dropout = r.probability({"embedding_dropout"}, 0.0);
  s.resid_dropout = r.probability({"mlp_dropout"}, 0.0);
  if (r.boolean({"sparse_prediction"}, false))
    throw InputError(r.name("sparse_prediction"), "true",
                     "selects the masked rows by label (data-dependent sizes): not modelled (false only)");
  if (!r.explicit_null("pad_token_id")) {
    const int64_t pad = r.non_negative({"pad_token_id"}, 50283);
    // nn.Embedding(padding_idx=...) asserts it lies inside the table (class default 50283 < 50368).
    if (pad >= s.vocab_size)
      throw InputError(r.name("pad_token_id"), std::to_string(pad),
                       "must be below vocab_size (" + std::to_string(s.vocab_size) + ")");
  }
  const int64_t local = r.positive({"local_attention"}, 128);
  if (local < 2)
    throw InputError(r.name("local_attention"), std::to_string(local),
                     "must be at least 2 (the window's half-width local_attention // 2 is then positive)");
  s.sliding_window = local / 2;
  check_rope(r);

  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array() || lt->size() != static_cast<size_t>(s.num_layers))
      throw InputError(r.name("layer_types"), dump_short(*lt),
                       "must list one type per layer (" + std::to_string(s.num_layers) + ")");
    for (size_t i = 0; i < lt->size(); ++i) {
      const json& t = (*lt)[i];
      if (t == "sliding_attention") {
        s.sliding_layers[i] = 1;
      } else if (t != "full_attention") {
        throw InputError(r.name("layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be \"full_attention\" or \"sliding_attention\"");
      }
    }
  } else {
    const int64_t every = r.positive({"global_attn_every_n_layers"}, 3);
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = i % every != 0;
  }
  return s;
}

}  // namespace memplan::hf
