#include "engine/limits.h"

#include <string>

#include "engine/errors.h"

namespace memplan {

namespace {

void at_most(const char* field, int64_t v, int64_t limit) {
  if (v > limit)
    throw InputError(field, std::to_string(v), "exceeds the limit of " + std::to_string(limit));
}

void in_range(const char* field, int64_t v, int64_t limit) {
  if (v <= 0) throw InputError(field, std::to_string(v), "must be a positive integer");
  at_most(field, v, limit);
}

void check_transformer(const TransformerSpec& s) {
  // Image models (vit) have no vocabulary and no token types: their patch geometry and label count instead.
  const bool image = s.image_size > 0;
  if (image) {
    in_range("model.image_size", s.image_size, kMaxImageSize);
    in_range("model.patch_size", s.patch_size, s.image_size);
    in_range("model.num_channels", s.num_channels, kMaxDim);
    if (s.model_type != "dinov3_vit")  // the bare DINOv3 backbone has no classifier
      in_range("model.image_num_labels", s.image_num_labels, kMaxDim);
  } else {
    in_range("model.vocab_size", s.vocab_size, kMaxDim);
  }
  in_range("model.hidden_size", s.hidden_size, kMaxDim);
  in_range("model.num_layers", s.num_layers, kMaxLayers);
  in_range("model.num_heads", s.num_heads, kMaxDim);
  in_range("model.num_kv_heads", s.num_kv_heads, kMaxDim);
  in_range("model.head_dim", s.head_dim, kMaxDim);
  in_range("model.intermediate_size", s.intermediate_size, kMaxDim);
  // Speech encoders (wav2vec2, hubert, wavlm) have neither learned positions nor token types: their conv stack.
  const bool speech = !s.speech_conv_kernel.empty();
  if (!speech) in_range("model.max_position_embeddings", s.max_position_embeddings, kMaxDim);
  // DistilBERT, MPNet and ESM are encoders without token types (type_vocab_size 0).
  // Contrastive image-text models (clip / siglip / siglip2: a vision tower) have no token types either.
  const bool contrastive = s.vision_hidden_size > 0;
  if (s.family == TransformerSpec::Family::bert && s.model_type != "distilbert" && s.model_type != "mpnet" &&
      s.model_type != "esm" && !image &&
      !speech && !contrastive)
    in_range("model.type_vocab_size", s.type_vocab_size, kMaxDim);
  if (speech) {
    for (size_t i = 0; i < s.speech_conv_kernel.size(); ++i) {
      in_range("model.conv_dim", s.speech_conv_dim[i], kMaxDim);
      in_range("model.conv_kernel", s.speech_conv_kernel[i], kMaxDim);
      in_range("model.conv_stride", s.speech_conv_stride[i], kMaxDim);
    }
    in_range("model.num_conv_pos_embeddings", s.speech_pos_conv_kernel, kMaxDim);
    in_range("model.num_conv_pos_embedding_groups", s.speech_pos_conv_groups, s.hidden_size);
    in_range("model.classifier_proj_size", s.speech_classifier_proj_size, kMaxDim);
  }
  if (contrastive) {
    in_range("model.vision_hidden_size", s.vision_hidden_size, kMaxDim);
    in_range("model.vision_num_layers", s.vision_num_layers, kMaxLayers);
    in_range("model.vision_num_heads", s.vision_num_heads, kMaxDim);
    in_range("model.vision_intermediate_size", s.vision_intermediate_size, kMaxDim);
    in_range("model.vision_patch_size", s.vision_patch_size, kMaxImageSize);
    in_range("model.vision_num_channels", s.vision_num_channels, kMaxDim);
    in_range("model.projection_dim", s.projection_dim, kMaxDim);
  }
  if (s.id3_vision_layers > 0) {  // idefics3 / smolvlm: the vision transformer and the connector
    in_range("model.id3_vision_hidden", s.id3_vision_hidden, kMaxDim);
    in_range("model.id3_vision_layers", s.id3_vision_layers, kMaxLayers);
    in_range("model.id3_vision_heads", s.id3_vision_heads, kMaxDim);
    in_range("model.id3_vision_mlp", s.id3_vision_mlp, kMaxDim);
    in_range("model.id3_image_size", s.id3_image_size, kMaxImageSize);
    in_range("model.id3_patch", s.id3_patch, s.id3_image_size);
    in_range("model.id3_channels", s.id3_channels, kMaxDim);
    in_range("model.id3_scale_factor", s.id3_scale_factor, s.id3_image_size);
  }
  if (s.model_type == "mpnet") in_range("model.relative_attention_num_buckets", s.relative_attention_num_buckets, kMaxDim);
  if (s.family == TransformerSpec::Family::t5) in_range("model.num_decoder_layers", s.num_decoder_layers, kMaxLayers);
  // Relative position buckets are T5's; the other encoder-decoders (bart, mbart, whisper) have learned positions
  // and their decoder's own heads and FFN width.
  if (s.model_type == "bart" || s.model_type == "mbart" || s.model_type == "whisper" || s.model_type == "marian" ||
      s.model_type == "pegasus" || s.model_type == "m2m_100") {
    in_range("model.decoder_num_heads", s.decoder_num_heads, kMaxDim);
    in_range("model.decoder_intermediate_size", s.decoder_intermediate_size, kMaxDim);
  } else if (s.model_type == "t5gemma") {  // the encoder's own widths (spec.h [t5gemma])
    in_range("model.t5gemma_enc_hidden", s.t5gemma_enc_hidden, kMaxDim);
    in_range("model.t5gemma_enc_intermediate", s.t5gemma_enc_intermediate, kMaxDim);
    in_range("model.t5gemma_enc_heads", s.t5gemma_enc_heads, kMaxDim);
    in_range("model.t5gemma_enc_kv_heads", s.t5gemma_enc_kv_heads, s.t5gemma_enc_heads);
    in_range("model.t5gemma_enc_head_dim", s.t5gemma_enc_head_dim, kMaxDim);
    in_range("model.t5gemma_enc_vocab", s.t5gemma_enc_vocab, kMaxDim);
  } else if (s.family == TransformerSpec::Family::t5) {
    in_range("model.relative_attention_num_buckets", s.relative_attention_num_buckets, kMaxDim);
  }
  if (s.model_type == "whisper" || s.audio_layers > 0)
    in_range("model.num_mel_bins", s.num_mel_bins, kMaxDim), in_range("model.max_source_positions", s.max_source_positions, kMaxDim);
  if (s.audio_layers > 0) {  // qwen2_audio: the audio encoder
    in_range("model.audio_layers", s.audio_layers, kMaxLayers);
    in_range("model.audio_d_model", s.audio_d_model, kMaxDim);
    in_range("model.audio_heads", s.audio_heads, s.audio_d_model);
    in_range("model.audio_ffn", s.audio_ffn, kMaxDim);
  }
  at_most("model.sliding_window", s.sliding_window, kMaxDim);
  at_most("model.rotary_dim", s.rotary_dim, s.head_dim);
  if (!s.moe_layers.empty()) in_range("model.moe_intermediate_size", s.moe_intermediate_size, kMaxDim);
  if (s.num_experts > 0) {
    in_range("model.num_experts", s.num_experts, kMaxExperts);
    in_range("model.num_experts_per_tok", s.num_experts_per_tok, s.num_experts);
  }
}

void check_vision(const VisionSpec& v) {
  in_range("model.num_classes", v.num_classes, kMaxDim);
  if (v.family == VisionSpec::Family::vit) {
    in_range("model.num_layers", v.num_layers, kMaxLayers);
    in_range("model.hidden_dim", v.hidden_dim, kMaxDim);
    in_range("model.num_heads", v.num_heads, kMaxDim);
    in_range("model.mlp_dim", v.mlp_dim, kMaxDim);
    in_range("model.patch_size", v.patch_size, kMaxImageSize);
  } else {
    for (int64_t b : v.blocks_per_stage) in_range("model.blocks_per_stage", b, kMaxLayers);
    for (int64_t c : v.stage_channels) in_range("model.stage_channels", c, kMaxDim);
    for (int64_t h : v.stage_heads) in_range("model.stage_heads", h, kMaxDim);
    for (int64_t c : v.vgg_cfg) at_most("model.vgg_cfg", c, kMaxDim);
    in_range("model.groups", v.groups, kMaxDim);
    in_range("model.width_per_group", v.width_per_group, kMaxDim);
    in_range("model.window_size", v.window_size, kMaxImageSize);
    in_range("model.growth_rate", v.growth_rate, kMaxDim);
    in_range("model.bn_size", v.bn_size, kMaxDim);
    in_range("model.num_init_features", v.num_init_features, kMaxDim);
    at_most("model.regnet_depth", v.regnet_depth, kMaxLayers);
    at_most("model.regnet_w0", v.regnet_w0, kMaxDim);
  }
}

}  // namespace

void check_limits(const ModelSpec& spec, const RunConfig& cfg) {
  if (spec.kind == ModelSpec::Kind::transformer) check_transformer(spec.transformer);
  if (spec.kind == ModelSpec::Kind::vision) check_vision(spec.vision);
  at_most("batch_size", cfg.batch_size, kMaxBatch);
  at_most("seq_len", cfg.seq_len, kMaxSeqLen);
  at_most("target_len", cfg.target_len, kMaxSeqLen);
  at_most("image_size", cfg.image_size, kMaxImageSize);
  for (int64_t g : cfg.image_grid) at_most("image_grid", g, kMaxImageSize);
  at_most("images_per_sample", cfg.images_per_sample, kMaxBatch);
  at_most("audio_clips", cfg.audio_clips, kMaxBatch);
  at_most("audio_samples", cfg.audio_samples, kMaxSeqLen * 1024);
  at_most("max_num_patches", cfg.max_num_patches, kMaxSeqLen);
  for (int64_t g : cfg.image_splits) at_most("image_splits", g, kMaxImageSize);
  for (int64_t g : cfg.image_hw) at_most("image_hw", g, kMaxImageSize);
  at_most("image_tiles", cfg.image_tiles, kMaxBatch);
  at_most("grad_accum_steps", cfg.grad_accum_steps, kMaxGradAccumSteps);
  at_most("generate_tokens", cfg.generate_tokens, kMaxSeqLen);
  at_most("num_labels", cfg.num_labels, kMaxDim);
  // Layer lists are searched once per layer; longer lists than there can be layers are input errors.
  at_most("checkpoint_layers", static_cast<int64_t>(cfg.checkpoint_layers.size()), kMaxLayers);
  at_most("frozen_layers", static_cast<int64_t>(cfg.frozen_layers.size()), kMaxLayers);
}

}  // namespace memplan
