// Wav2Vec2Config, HubertConfig and WavLMConfig (transformers 5.17 models/{wav2vec2,hubert,wavlm}/configuration_*.py)
// and what <Type>ForCTC, <Type>ForSequenceClassification and the bare <Type>Model read of them.
//
// Class defaults shared by the three (facebook/wav2vec2-base-960h's sizes): vocab_size 32, hidden_size 768,
// num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072, hidden_act "gelu", hidden_dropout 0.1,
// activation_dropout 0.1, attention_dropout 0.1, feat_proj_dropout 0.0, final_dropout 0.1, layerdrop 0.1,
// layer_norm_eps 1e-5, feat_extract_norm "group", feat_extract_activation "gelu", conv_dim (512,) x 7,
// conv_stride (5, 2, 2, 2, 2, 2, 2), conv_kernel (10, 3, 3, 3, 3, 2, 2), conv_bias False, num_conv_pos_embeddings
// 128, num_conv_pos_embedding_groups 16, do_stable_layer_norm False, apply_spec_augment True, mask_time_prob 0.05,
// mask_time_length 10, mask_time_min_masks 2, mask_feature_prob 0.0, ctc_zero_infinity False,
// use_weighted_layer_sum False, classifier_proj_size 256, pad_token_id 0.
// Per type: ctc_loss_reduction "sum" (wav2vec2, hubert) / "mean" (wavlm); hubert feat_proj_layer_norm True and
// conv_pos_batch_norm False; wavlm num_buckets 320, max_bucket_distance 800; wav2vec2 / wavlm add_adapter False,
// wav2vec2 adapter_attn_dim None.
// Refused, naming the key: a hidden_act or feat_extract_activation other than gelu, feat_extract_norm other than
// group / layer, conv lists of differing lengths, num_attention_heads not dividing hidden_size, groups not
// dividing hidden_size, mask_feature_prob > 0, use_weighted_layer_sum, add_adapter, adapter_attn_dim,
// conv_pos_batch_norm, a vocab_size of null (ForCTC raises).
// Keys with no memory effect (read for their type only): layer_norm_eps, initializer_range, ctc_zero_infinity,
// bos / eos ids, the pre-training keys (codevectors, negatives, ...), tdnn / xvector keys.
#include <string>
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

std::vector<int64_t> int_list(const ConfigReader& r, const char* key, std::vector<int64_t> dflt) {
  const json* v = r.raw(key);
  if (v == nullptr) return dflt;
  if (!v->is_array() || v->empty() || v->size() > 64)
    throw InputError(r.name(key), dump_short(*v), "must be a non-empty list of positive integers (at most 64)");
  std::vector<int64_t> out;
  for (const json& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0 || e.get<int64_t>() > kMaxDim)
      throw InputError(r.name(key), dump_short(*v), "must be a list of positive integers (each at most the limit)");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

void gelu_only(const ConfigReader& r, const char* key) {
  const std::string act = r.string({key}, "gelu");
  if (act != "gelu")
    throw InputError(r.name(key), "\"" + act + "\"", "is not modelled (the speech encoders are modelled with gelu)");
}

}  // namespace

TransformerSpec import_wav2vec2(const ConfigReader& r, const std::string& type) {
  const bool hubert = type == "hubert", wavlm = type == "wavlm";
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, forward-only inference
  if (r.explicit_null("vocab_size"))
    throw InputError(r.name("vocab_size"), "null", "must be set: <Type>ForCTC raises without a vocabulary size");
  s.vocab_size = r.positive({"vocab_size"}, 32);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "does not divide hidden_size (" + std::to_string(s.hidden_size) + "): the attention raises");
  s.num_kv_heads = s.num_heads;
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  gelu_only(r, "hidden_act");
  s.hidden_act = "gelu";
  gelu_only(r, "feat_extract_activation");
  s.resid_dropout = r.probability({"hidden_dropout"}, 0.1);
  s.embd_dropout = s.resid_dropout;  // the encoder's dropout after the positional conv
  s.activation_dropout = r.probability({"activation_dropout"}, 0.1);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.1);
  s.speech_feat_proj_dropout = r.probability({"feat_proj_dropout"}, 0.0);
  s.speech_final_dropout = r.probability({"final_dropout"}, 0.1);
  s.speech_layerdrop = r.probability({"layerdrop"}, 0.1);
  s.qkv_bias = s.o_bias = s.mlp_bias = s.attention_bias = true;

  const std::string norm = r.string({"feat_extract_norm"}, "group");
  if (norm != "group" && norm != "layer")
    throw InputError(r.name("feat_extract_norm"), "\"" + norm + "\"", "must be \"group\" or \"layer\" (the model raises)");
  s.speech_layer_norm_convs = norm == "layer";
  s.speech_conv_dim = int_list(r, "conv_dim", {512, 512, 512, 512, 512, 512, 512});
  s.speech_conv_stride = int_list(r, "conv_stride", {5, 2, 2, 2, 2, 2, 2});
  s.speech_conv_kernel = int_list(r, "conv_kernel", {10, 3, 3, 3, 3, 2, 2});
  if (s.speech_conv_stride.size() != s.speech_conv_dim.size() || s.speech_conv_kernel.size() != s.speech_conv_dim.size())
    throw InputError(r.name("conv_dim"), std::to_string(s.speech_conv_dim.size()) + " entries",
                     "conv_dim, conv_stride and conv_kernel must have the same length (the config raises)");
  s.speech_conv_bias = r.boolean({"conv_bias"}, false);
  s.speech_pos_conv_kernel = r.positive({"num_conv_pos_embeddings"}, 128);
  s.speech_pos_conv_groups = r.positive({"num_conv_pos_embedding_groups"}, 16);
  if (s.hidden_size % s.speech_pos_conv_groups != 0)
    throw InputError(r.name("num_conv_pos_embedding_groups"), std::to_string(s.speech_pos_conv_groups),
                     "does not divide hidden_size (" + std::to_string(s.hidden_size) + "): nn.Conv1d raises");
  s.speech_stable_layer_norm = r.boolean({"do_stable_layer_norm"}, false);
  s.speech_feat_proj_layer_norm = hubert ? r.boolean({"feat_proj_layer_norm"}, true) : true;
  if (hubert && r.boolean({"conv_pos_batch_norm"}, false))
    throw InputError(r.name("conv_pos_batch_norm"), "true",
                     "is not modelled (a BatchNorm1d before the positional conv instead of its weight norm)");

  s.speech_spec_augment = r.boolean({"apply_spec_augment"}, true);
  s.speech_mask_time_prob = r.probability({"mask_time_prob"}, 0.05);
  s.speech_mask_time_length = r.positive({"mask_time_length"}, 10);
  s.speech_mask_time_min_masks = r.non_negative({"mask_time_min_masks"}, 2);
  const double feature_prob = r.probability({"mask_feature_prob"}, 0.0);
  if (feature_prob > 0.0)
    throw InputError(r.name("mask_feature_prob"), std::to_string(feature_prob),
                     "is not modelled (SpecAugment along features: a [B, T, H] boolean index_put); 0 is");
  r.positive({"mask_feature_length"}, 10);
  s.speech_masked_spec_embed = s.speech_mask_time_prob > 0.0 || feature_prob > 0.0;

  const std::string red = r.string({"ctc_loss_reduction"}, wavlm ? "mean" : "sum");
  if (red != "sum" && red != "mean")
    throw InputError(r.name("ctc_loss_reduction"), "\"" + red + "\"", "must be \"sum\" or \"mean\"");
  s.speech_ctc_mean = red == "mean";
  r.boolean({"ctc_zero_infinity"}, false);
  const json* pad = r.raw("pad_token_id");
  if (pad && (!pad->is_number_integer() || pad->get<int64_t>() < 0 || pad->get<int64_t>() >= s.vocab_size))
    throw InputError(r.name("pad_token_id"), dump_short(*pad),
                     "must be an integer in [0, vocab_size): the CTC blank (ctc_loss raises otherwise)");
  s.speech_blank = pad ? pad->get<int64_t>() : 0;
  if (r.boolean({"use_weighted_layer_sum"}, false))
    throw InputError(r.name("use_weighted_layer_sum"), "true",
                     "is not modelled (every layer's hidden states stacked and weighted); false is");
  s.speech_classifier_proj_size = r.positive({"classifier_proj_size"}, 256);
  read_problem_type(r, s);  // the sequence classifier's loss (cross entropy unless it names another)
  if (!hubert && r.boolean({"add_adapter"}, false))
    throw InputError(r.name("add_adapter"), "true", "is not modelled (the conv adapter after the encoder)");
  if (type == "wav2vec2" && r.present("adapter_attn_dim"))
    throw InputError(r.name("adapter_attn_dim"), dump_short(*r.raw("adapter_attn_dim")),
                     "is not modelled (attention adapters in every layer); null is");
  if (wavlm) {
    s.wavlm_num_buckets = r.positive({"num_buckets"}, 320);
    s.wavlm_max_distance = r.positive({"max_bucket_distance"}, 800);
    if (s.wavlm_num_buckets < 4)
      throw InputError(r.name("num_buckets"), std::to_string(s.wavlm_num_buckets),
                       "must be at least 4 (the bucket function halves it twice)");
  }
  // Read for their type only (no memory effect on the modelled classes).
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  s.max_position_embeddings = 0;
  return s;
}

}  // namespace memplan::hf
