// DINOv3ViTConfig (transformers models/dinov3_vit/configuration_dinov3_vit.py) and what DINOv3ViTModel reads of it
// (builder: engine/arch/vision/hf_dinov3.cpp: the bare backbone's inference forward; 5.17 has no classification
// class for it, so there is no loss to train).
//
// Class defaults (ViT-S/16): patch_size 16, hidden 384, intermediate 1536, 12 layers, 6 heads, hidden_act "gelu",
// attention_dropout 0.0, layer_norm_eps 1e-5, rope_theta 100.0, image_size 224, num_channels 3, query_bias True,
// key_bias False, value_bias True, proj_bias True, mlp_bias True, layerscale_value 1.0, drop_path_rate 0.0,
// use_gated_mlp False, num_register_tokens 0; pos_embed_shift / jitter / rescale are training-only augmentations.
// Refused, naming the key: hidden_act other than gelu and silu, hidden_size not a multiple of num_attention_heads,
// a head size not a multiple of 4 (the 2-D rotary splits each head in four), the geometry import_image.h refuses.
#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_dinov3_vit(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder (no causal LM head); its own builder
  s.hidden_size = r.positive({"hidden_size"}, 384);
  s.intermediate_size = r.positive({"intermediate_size"}, 1536);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 6);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  if (s.head_dim % 4 != 0)
    throw InputError(r.name("hidden_size"), std::to_string(s.hidden_size),
                     "gives a head size of " + std::to_string(s.head_dim) +
                         ": DINOv3's 2-D rotary embedding needs a multiple of 4");
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu" && s.hidden_act != "silu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (gelu, silu)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.0);
  s.dinov3_query_bias = r.boolean({"query_bias"}, true);
  s.dinov3_key_bias = r.boolean({"key_bias"}, false);
  s.dinov3_value_bias = r.boolean({"value_bias"}, true);
  s.dinov3_proj_bias = r.boolean({"proj_bias"}, true);
  s.mlp_bias = r.boolean({"mlp_bias"}, true);
  s.dinov3_gated_mlp = r.boolean({"use_gated_mlp"}, false);
  s.image_extra_tokens = r.non_negative({"num_register_tokens"}, 0);
  if (s.image_extra_tokens > 1024)
    throw InputError(r.name("num_register_tokens"), std::to_string(s.image_extra_tokens), "exceeds the limit of 1024");
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"rope_theta"});
  image::read_geometry(r, s, 224, 16);
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
