// Dinov2Config (transformers 5.17 models/dinov2/configuration_dinov2.py) and what Dinov2ForImageClassification
// reads of it.
//
// Class defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12, mlp_ratio 4, hidden_act "gelu",
// hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, image_size 224, patch_size 14, num_channels 3,
// qkv_bias True, layerscale_value 1.0, drop_path_rate 0.0, use_swiglu_ffn False, use_mask_token True; the label
// count is PreTrainedConfig's (len(id2label), else num_labels, else 2).
// The MLP's hidden width (intermediate_size): int(hidden_size * mlp_ratio) for Dinov2MLP; Dinov2SwiGLUFFN takes
// that, then (int(w * 2 / 3) + 7) // 8 * 8 (weights_in is twice as wide).
// Dinov2SelfAttention raises unless num_attention_heads divides hidden_size; head size hidden_size / heads.
// Keys that change no allocation of the classification model (read for their type only): layer_norm_eps,
// initializer_range, layerscale_value (lambda1's initial value), apply_layernorm / reshape_hidden_states /
// out_features / out_indices (Dinov2Backbone's).
// Refused, naming the key: hidden_act other than gelu, a non-square or too large patch, an MLP width of 0, the
// labels and losses import_image.h refuses.
#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_dinov2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, training only
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "does not divide hidden_size (" + std::to_string(s.hidden_size) +
                         "): Dinov2SelfAttention raises");
  s.num_kv_heads = s.num_heads;
  s.head_dim = s.hidden_size / s.num_heads;
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (dinov2 is modelled with gelu)");
  s.dinov2_swiglu_ffn = r.boolean({"use_swiglu_ffn"}, false);
  // int(hidden_size * mlp_ratio) (mlp_ratio an int or a float), then the SwiGLU rounding.
  const double ratio = r.opt_positive_number({"mlp_ratio"}).value_or(4.0);
  const double wide = static_cast<double>(s.hidden_size) * ratio;
  if (!(wide < static_cast<double>(kMaxDim)))
    throw InputError(r.name("mlp_ratio"), std::to_string(ratio), "makes the MLP wider than the limit");
  int64_t width = static_cast<int64_t>(wide);
  if (s.dinov2_swiglu_ffn) width = (static_cast<int64_t>(static_cast<double>(width * 2) / 3.0) + 7) / 8 * 8;
  if (width <= 0)
    throw InputError(r.name("mlp_ratio"), std::to_string(ratio), "leaves the MLP no hidden features");
  s.intermediate_size = width;
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;  // Dinov2Embeddings.dropout uses hidden_dropout_prob too
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.0);
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.o_bias = s.mlp_bias = true;
  s.attention_bias = s.qkv_bias;
  s.dinov2_mask_token = r.boolean({"use_mask_token"}, true);
  // Read for their type only (no memory effect on Dinov2ForImageClassification).
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  if (const json* v = r.raw("layerscale_value"); v && !v->is_number())
    throw InputError(r.name("layerscale_value"), dump_short(*v), "must be a number");
  r.boolean({"apply_layernorm"}, true);
  r.boolean({"reshape_hidden_states"}, true);

  image::read_geometry(r, s, 224, 14);
  image::read_labels(r, s, "Dinov2ForImageClassification");
  // The learned position table: num_patches + 1 rows (the sequence is exactly that long at the config's size).
  const int64_t side = s.image_size / s.patch_size;
  s.max_position_embeddings = side * side + 1;
  return s;
}

}  // namespace memplan::hf
