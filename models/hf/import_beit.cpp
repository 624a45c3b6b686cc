// BeitConfig (transformers models/beit/configuration_beit.py) and Data2VecVisionConfig
// (models/data2vec/configuration_data2vec_vision.py: the same keys and defaults), and what
// BeitForImageClassification / Data2VecVisionForImageClassification read of them.
//
// Class defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
// hidden_act "gelu", hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, image_size 224, patch_size 16,
// num_channels 3, use_mask_token False, use_absolute_position_embeddings False, use_relative_position_bias False,
// use_shared_relative_position_bias False, layer_scale_init_value 0.1 (lambda_1 / lambda_2 exist when > 0),
// drop_path_rate 0.1, use_mean_pooling True; the label count is PreTrainedConfig's (len(id2label), else
// num_labels, else 2). The published fine-tuned checkpoints (microsoft/beit-*-patch16-224,
// facebook/data2vec-vision-*-ft1k) set use_relative_position_bias true.
// BeitSelfAttention raises unless num_attention_heads divides hidden_size; head size hidden_size / heads.
// Keys that change no allocation of the classification model (read for their type only): vocab_size (the
// masked-image-modeling head's), layer_norm_eps, initializer_range, and the semantic-segmentation / backbone keys
// (out_indices, out_features, pool_scales, use_auxiliary_head, auxiliary_*, semantic_loss_ignore_index, add_fpn,
// reshape_hidden_states).
// Refused, naming the key: hidden_act other than gelu, heads not dividing hidden_size, both relative biases at
// once (the in-place sum is not modelled), the labels and losses import_image.h refuses.
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_beit(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  if (s.hidden_size % s.num_heads != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "does not divide hidden_size (" + std::to_string(s.hidden_size) + "): BeitSelfAttention raises");
  s.num_kv_heads = s.num_heads;
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (" + type + " is modelled with gelu)");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;  // BeitEmbeddings.dropout uses hidden_dropout_prob too
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.1);
  s.qkv_bias = true;  // query and value have biases, key has none (fixed in BeitSelfAttention)
  s.o_bias = s.mlp_bias = true;
  s.attention_bias = true;
  s.beit_mask_token = r.boolean({"use_mask_token"}, false);
  s.beit_abs_pos = r.boolean({"use_absolute_position_embeddings"}, false);
  s.beit_rel_pos = r.boolean({"use_relative_position_bias"}, false);
  s.beit_shared_rel_pos = r.boolean({"use_shared_relative_position_bias"}, false);
  if (s.beit_rel_pos && s.beit_shared_rel_pos)
    throw InputError(r.name("use_shared_relative_position_bias"), "true",
                     "together with use_relative_position_bias is not modelled (BeitSelfAttention adds the shared "
                     "bias to the layer's in place)");
  if (const json* v = r.raw("layer_scale_init_value")) {
    if (!v->is_number()) throw InputError(r.name("layer_scale_init_value"), dump_short(*v), "must be a number");
    s.beit_layer_scale = v->get<double>() > 0.0;
  } else {
    s.beit_layer_scale = true;  // 0.1
  }
  s.beit_mean_pooling = r.boolean({"use_mean_pooling"}, true);
  // Read for their type only (no memory effect on the classifier).
  r.opt_positive({"vocab_size"});
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.boolean({"use_auxiliary_head"}, true);
  r.boolean({"add_fpn"}, false);
  r.boolean({"reshape_hidden_states"}, true);

  image::read_geometry(r, s, 224, 16);
  image::read_labels(r, s, type == "data2vec-vision" ? "Data2VecVisionForImageClassification"
                                                     : "BeitForImageClassification");
  const int64_t side = s.image_size / s.patch_size;
  s.max_position_embeddings = side * side + 1;
  return s;
}

}  // namespace memplan::hf
