// CLIPModel (transformers 5.17 models/clip/modeling_clip.py): a training step with return_loss=True (the harness's
// contrastive kind) or one inference forward without the loss (contrastive_forward).
//   Batch: pixel_values [B, C, R, R] in the model's dtype (fp32 under amp), then input_ids [B, L] (L = seq_len).
//   get_image_features -> CLIPVisionModel: CLIPVisionEmbeddings (bias-free patch Conv2d, flatten(2).transpose(1, 2),
//     cat(class_embedding.expand(B, 1, -1), patches), + position_embedding(position_ids): an embedding output
//     [1, N, H]), pre_layrnorm, N x CLIPEncoderLayer, last_hidden_state[:, 0, :] -> post_layernorm (pooled); then
//     visual_projection (no bias). The output's last_hidden_state stays referenced until the model returns.
//   get_text_features -> CLIPTextModel: token_embedding(ids) + position_embedding(position_ids[:, :L]);
//     create_causal_mask (SDPA: None, the layers run is_causal; eager: a float [B, 1, L, L] mask bound until the
//     text model returns); N x CLIPEncoderLayer; final_layer_norm; pooled = last_hidden_state[arange(B), idx] with
//     idx the argmax of ids (eos_token_id == 2) or of (ids == eos).int() (an index op whose backward scatters
//     into a zero-filled [B, L, H] gradient); text_projection (no bias).
//   Heads: each embedding / _get_vector_norm (pow 2, sum, pow 0.5; fp32 under autocast), logits_per_text =
//     text_embeds @ image_embeds.t() * logit_scale.exp() [B, B], logits_per_image its transpose (a view); the loss
//     (cross_entropy(logits, arange) + cross_entropy(logits.T, arange)) / 2.
// The mechanisms shared with SigLIP (the encoder layer) are in clip_parts.cpp.
#include "engine/arch/builders.h"
#include "engine/arch/vlm/clip_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_clip(GraphBuilder& b, const TransformerSpec& s) {
  using namespace clip;
  clip::check_run(b, s, "clip");
  const auto& cfg = b.config();
  if (!cfg.image_grid.empty() || cfg.max_num_patches != 0)
    throw InputError(cfg.max_num_patches != 0 ? "max_num_patches" : "image_grid", "set",
                     "is a siglip2 (NaFlex) input; a clip image is the vision config's image_size square");
  const Tower tt = text_tower(s), vt = vision_tower(s);
  const int64_t B = cfg.batch_size, L = cfg.seq_len, R = s.vision_image_size, P = s.vision_patch_size,
                C = s.vision_num_channels, side = R / P, n = side * side, N = n + 1, Hv = vt.hidden,
                Ht = tt.hidden, D = s.projection_dim;
  const bool on_device = cfg.weights_load == WeightsLoad::on_device;

  hf_construction_scalar(b);
  // Parameters in the order model.to("cuda") moves them (Module._apply: a module's children, then its own
  // parameters, then its buffers); built on the device, __init__ order. text_model, vision_model,
  // visual_projection, text_projection, logit_scale.
  const TensorId tok_w = b.param("text_model.embeddings.token_embedding.weight", {s.vocab_size, Ht});
  const TensorId tpos_w = b.param("text_model.embeddings.position_embedding.weight", {s.max_position_embeddings, Ht});
  const TensorId tpos_ids =
      b.buffer("text_model.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  std::vector<LayerParams> tl, vl;
  for (int64_t i = 0; i < tt.layers; ++i)
    tl.push_back(layer_params(b, tt, "text_model.encoder.layers." + std::to_string(i) + ".", false));
  const TensorId tln_w = b.param("text_model.final_layer_norm.weight", {Ht});
  const TensorId tln_b = b.param("text_model.final_layer_norm.bias", {Ht});
  TensorId cls = on_device ? b.param("vision_model.embeddings.class_embedding", {Hv}) : kNoTensor;
  const TensorId conv_w = b.param("vision_model.embeddings.patch_embedding.weight", {Hv, C, P, P});
  const TensorId vpos_w = b.param("vision_model.embeddings.position_embedding.weight", {N, Hv});
  if (!on_device) cls = b.param("vision_model.embeddings.class_embedding", {Hv});
  const TensorId vpos_ids = b.buffer("vision_model.embeddings.position_ids", {1, N}, DType::i64);
  const TensorId pre_w = b.param("vision_model.pre_layrnorm.weight", {Hv});
  const TensorId pre_b = b.param("vision_model.pre_layrnorm.bias", {Hv});
  for (int64_t i = 0; i < vt.layers; ++i)
    vl.push_back(layer_params(b, vt, "vision_model.encoder.layers." + std::to_string(i) + ".", false));
  const TensorId post_w = b.param("vision_model.post_layernorm.weight", {Hv});
  const TensorId post_b = b.param("vision_model.post_layernorm.bias", {Hv});
  const TensorId vproj = b.param("visual_projection.weight", {D, Hv});
  const TensorId tproj = b.param("text_projection.weight", {D, Ht});
  const TensorId logit_scale = b.param("logit_scale", {});

  // The batch.
  const TensorId pixels = b.input({B, C, R, R}, b.param_dtype());
  const TensorId ids = b.input({B, L}, DType::i64);

  // ---- vision tower
  // The conv output dies once cat has copied it; the gradient reaching it is the transposed narrow of cat's
  // gradient, which convolution_backward copies contiguous. Under autocast cat promotes the 16-bit patches to the
  // fp32 class embedding's dtype.
  const TensorId patches = b.view_copying_grad(b.conv2d(pixels, conv_w, kNoTensor, P, 0, {B, Hv, side, side}), {B, n, Hv});
  TensorId e = b.cat("cat", {b.view(cls, {B, 1, Hv}), patches}, 1, std::nullopt, /*cast_part_grads=*/true);
  e = b.add(e, b.embedding(b.view(vpos_ids, {1, N}), vpos_w));
  TensorId h = b.layer_norm(e, pre_w, pre_b);
  const TensorId vin = h;
  b.hold(vin);  // the vision model's hidden_states (pre_layrnorm's output) until it returns
  for (int64_t i = 0; i < vt.layers; ++i)
    h = encoder_layer(b, vt, vl[static_cast<size_t>(i)], "vision_model.encoder.layers." + std::to_string(i),
                      layer_checkpointed(cfg, i), h, kNoTensor, false);
  const TensorId vlast = h;
  b.hold(vlast);  // the output's last_hidden_state until CLIPModel.forward returns
  const TensorId vpooled = b.layer_norm(b.view_copying_grad(vlast, {B, Hv}), post_w, post_b, true, true);
  b.drop(vin);
  const TensorId image_feat = b.linear(vpooled, vproj);
  b.hold(image_feat);  // vision_outputs.pooler_output until the model returns

  // ---- text tower
  TensorId te = b.add(b.embedding(ids, tok_w), b.embedding(b.view(tpos_ids, {1, L}), tpos_w));
  TensorId mask = kNoTensor;
  if (cfg.attn == AttnImpl::eager) {
    mask = eager_mask(b, 1, L, L, b.dtype(te));
    b.hold(mask);  // attention_mask until the text model returns
  }
  b.hold(te);  // the text model's hidden_states until it returns
  h = te;
  for (int64_t i = 0; i < tt.layers; ++i)
    h = encoder_layer(b, tt, tl[static_cast<size_t>(i)], "text_model.encoder.layers." + std::to_string(i),
                      layer_checkpointed(cfg, vt.layers + i), h, mask, true);
  b.hold(h);  // encoder_outputs.last_hidden_state until the text model returns
  const TensorId tlast = b.layer_norm(h, tln_w, tln_b);
  b.hold(tlast);  // the output's last_hidden_state until CLIPModel.forward returns
  // pooled_output = last_hidden_state[torch.arange(B), idx]: arange, the ids as int32, (== eos).int(), argmax.
  const TensorId ar = b.generic_one("arange", {}, {B}, DType::i64);
  TensorId ids32 = b.generic_one("to_int32", {ids}, {B, L}, DType::i32);
  if (!s.clip_legacy_eos) {
    b.hold(ids32);
    const TensorId eq = b.generic_one("eq", {ids32}, {B, L}, DType::boolean);
    b.drop(ids32);
    ids32 = b.generic_one("to_int32", {eq}, {B, L}, DType::i32);
  }
  const TensorId idx = b.generic_one("argmax", {ids32}, {B}, DType::i64);
  const TensorId tpooled = b.generic_one("index", {tlast, ar, idx}, {B, Ht}, b.dtype(tlast), {1, 2});
  if (mask != kNoTensor) b.drop(mask);
  b.drop(h);
  b.drop(te);
  const TensorId text_feat = b.linear(tpooled, tproj);
  b.hold(text_feat);  // text_outputs.pooler_output until the model returns

  // ---- heads
  const TensorId image_embeds = normalise(b, image_feat, true);
  b.hold(image_embeds);
  const TensorId text_embeds = normalise(b, text_feat, true);
  b.hold(text_embeds);
  TensorId logits = b.matmul(b.view(text_embeds, {1, 1, B, D}), b.view(image_embeds, {1, 1, D, B}), {1, 1, B, B});
  logits = b.mul(b.view(logits, {B, B}), b.unary("exp", logit_scale, false, true));
  b.hold(logits);  // logits_per_text / logits_per_image (a view) until the model returns
  if (!b.training()) {  // the output keeps every tensor held above until the harness drops it
    forward_output(b, {});
    return;
  }
  b.mark_model_end();
  // image_text_contrastive_loss: (cross_entropy(logits, arange) + cross_entropy(logits.T, arange)) / 2.
  const TensorId caption = b.cross_entropy(logits, b.generic_one("arange", {}, {B}, DType::i64));
  b.hold(caption);
  const TensorId image = b.cross_entropy(b.view(logits, {B, B}), b.generic_one("arange", {}, {B}, DType::i64));
  const TensorId loss = b.scalar_op("div_scalar", b.add(caption, image), false);
  b.drop(caption);
  for (TensorId t : {logits, text_embeds, image_embeds, text_feat, tlast, image_feat, vlast}) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
