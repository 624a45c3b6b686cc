// InternVLForConditionalGeneration (transformers 5.17 models/internvl/modeling_internvl.py, read from the installed
// file): a training step with images (the harness plugin calibrate/harness_kinds/llava.py), a text-only training
// step, or one text-only inference pass.
//   Batch: input_ids [B, S] (images_per_sample runs of image_tiles x mm_image_tokens image tokens), pixel_values
//     [B * k * T, C, R, R] in the model's dtype (fp32 under amp; T = image_tiles, the processor's crop_to_patches
//     tiles of every image, each one a tower input), labels [B, S] (the image tokens masked to -100: a fresh
//     tensor). Text only: input_ids, which are also the labels.
//   InternVLModel.forward: inputs_embeds = embed_tokens(input_ids); get_image_features:
//     pixel_values.to(self.dtype) (the model's dtype: no copy), the vision tower (vision_feature_layer -1: no
//     output_hidden_states, the capture records nothing):
//       InternVLVisionEmbeddings: patch Conv2d (with bias) .flatten(2).transpose(1, 2) (a view), cat((cls_token
//         .expand, patches), dim 1) (promoting the 16-bit patches to the fp32 token under autocast: the residual
//         stream is fp32), + position_embeddings (returned as they are at the config's size), dropout (p 0: the
//         tensor itself). InternVLVisionModel binds embedding_output until it returns.
//       InternVLVisionLayer (GradientCheckpointingLayer): attention(layernorm_before(h)) (the normed input bound as
//         the attention's argument until it returns; the probabilities bound as the layer's `_` until it returns);
//         InternVLVisionAttention: q / k / v projections (attention_bias), q_norm / k_norm (InternVLVisionRMSNorm
//         with use_qk_norm, else nn.Identity), reshape / view [B, S, heads, hd].transpose(1, 2); the attention
//         interface, not causal, no mask: sdpa_attention_forward (transpose(1, 2).contiguous() of the kernel's
//         output) or eager_attention_forward (matmul * scaling, softmax WITHOUT an fp32 upcast (fp32 under
//         autocast, whose policy runs softmax in fp32), dropout p 0, matmul, transpose(1, 2).contiguous());
//         reshape, projection_layer (bias). attention_output = lambda_1 * it (bound until the layer returns: the
//         code never rebinds it); hidden_states = attention_output + hidden_states; layernorm_after; MLP (fc1,
//         ACT2FN, fc2); dropout p 0; lambda_2 *; + hidden_states. Norms: nn.LayerNorm or InternVLVisionRMSNorm
//         (norm_type).
//       layernorm: nn.Identity with use_mean_pooling (the published configs), else a LayerNorm.
//     vision_features = last_hidden_state[:, 1:, :] (a strided view: its backward zero-fills the whole state),
//     reshape(N, side, side, Hv) (a view of the slice), pixel_shuffle: view(N, side, side / k, Hv * k) (a view),
//     permute(0, 2, 1, 3).contiguous() (a copy), view(N, side / k, side / k, Hv * k^2) (a view),
//     permute(0, 2, 1, 3).contiguous() (a copy); both views receive their gradient permuted, so ViewBackward's
//     reshape copies it. reshape(N, -1, Hv * k^2) (a view); InternVLMultiModalProjector: LayerNorm (fp32 under
//     autocast), linear_1, ACT2FN[projector_hidden_act], linear_2. vision_outputs (holding last_hidden_state)
//     dies once forward has taken .pooler_output.
//     image_features.to(inputs_embeds.dtype) (a copy under amp); get_placeholder_mask and masked_scatter
//     (llava_parts.h); the text model (llama_parts.h llama_text_model: qwen2 / llama / mistral); lm_head over
//     every position and ForCausalLMLoss against the labels (llava::decoder_and_loss: the same statements).
// Parameters in __init__ order: model.vision_tower (embeddings: cls_token, mask_token, patch projection,
// position_embeddings; model.to() moves the projection before the embeddings' own parameters; layers: attention
// q, k, v, projection_layer, q_norm, k_norm; mlp fc1, fc2; layernorm_before, layernorm_after; lambda_1, lambda_2;
// the final layernorm), model.multi_modal_projector (layer_norm, linear_1, linear_2), model.language_model,
// lm_head.
// LoRA (peft's q_proj / v_proj also name the tower's attention projections): adapters through GraphBuilder::linear.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vlm/clip_parts.h"
#include "engine/arch/vlm/llava_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using clip::Lin;

struct VisionLayer {
  Lin q, k, v, o, fc1, fc2;
  TensorId q_norm = kNoTensor, k_norm = kNoTensor;
  TensorId ln1_w = kNoTensor, ln1_b = kNoTensor, ln2_w = kNoTensor, ln2_b = kNoTensor;
  TensorId lambda1 = kNoTensor, lambda2 = kNoTensor;
};

struct VisionTower {
  TensorId cls = kNoTensor, patch_w = kNoTensor, patch_b = kNoTensor, pos = kNoTensor;
  std::vector<VisionLayer> layers;
  TensorId final_w = kNoTensor, final_b = kNoTensor;  // use_mean_pooling false only
};

// nn.LayerNorm (weight, bias) or InternVLVisionRMSNorm (weight) of width n under `name`.
void norm_params(GraphBuilder& b, const TransformerSpec& s, const std::string& name, int64_t n, bool train,
                 TensorId& w, TensorId& bias) {
  w = b.param(name + ".weight", {n}, train);
  if (!s.ivl_rms_norm) bias = b.param(name + ".bias", {n}, train);
}

TensorId apply_norm(GraphBuilder& b, const TransformerSpec& s, TensorId x, TensorId w, TensorId bias) {
  return s.ivl_rms_norm ? rms_norm(b, x, w) : b.layer_norm(x, w, bias);
}

VisionTower tower_params(GraphBuilder& b, const TransformerSpec& s, bool train) {
  VisionTower w;
  const int64_t Hv = s.vision_hidden_size, I = s.vision_intermediate_size, C = s.vision_num_channels,
                P = s.vision_patch_size, side = s.vision_image_size / P, N = side * side + 1;
  const bool on_device = b.config().weights_load == WeightsLoad::on_device;
  const std::string p = "vision_tower.";
  auto own = [&] {
    w.cls = b.param(p + "embeddings.cls_token", {1, 1, Hv}, train);
    // never read (no bool_masked_pos): requires_grad, no gradient
    if (s.ivl_mask_token) b.param(p + "embeddings.mask_token", {1, 1, Hv}, false);
  };
  if (on_device) own();
  w.patch_w = b.param(p + "embeddings.patch_embeddings.projection.weight", {Hv, C, P, P}, train);
  w.patch_b = b.param(p + "embeddings.patch_embeddings.projection.bias", {Hv}, train);
  if (!on_device) own();
  if (s.ivl_abs_pos) w.pos = b.param(p + "embeddings.position_embeddings", {1, N, Hv}, train);
  for (int64_t i = 0; i < s.vision_num_layers; ++i) {
    const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
    VisionLayer v;
    v.q = clip::linear_params(b, l + "attention.q_proj", Hv, Hv, s.ivl_attention_bias, train);
    v.k = clip::linear_params(b, l + "attention.k_proj", Hv, Hv, s.ivl_attention_bias, train);
    v.v = clip::linear_params(b, l + "attention.v_proj", Hv, Hv, s.ivl_attention_bias, train);
    v.o = clip::linear_params(b, l + "attention.projection_layer", Hv, Hv, true, train);
    if (s.ivl_qk_norm) {
      v.q_norm = b.param(l + "attention.q_norm.weight", {Hv}, train);
      v.k_norm = b.param(l + "attention.k_norm.weight", {Hv}, train);
    }
    v.fc1 = clip::linear_params(b, l + "mlp.fc1", I, Hv, true, train);
    v.fc2 = clip::linear_params(b, l + "mlp.fc2", Hv, I, true, train);
    norm_params(b, s, l + "layernorm_before", Hv, train, v.ln1_w, v.ln1_b);
    norm_params(b, s, l + "layernorm_after", Hv, train, v.ln2_w, v.ln2_b);
    v.lambda1 = b.param(l + "lambda_1", {Hv}, train);
    v.lambda2 = b.param(l + "lambda_2", {Hv}, train);
    w.layers.push_back(v);
  }
  if (s.ivl_final_norm) {
    w.final_w = b.param(p + "layernorm.weight", {Hv}, train);
    w.final_b = b.param(p + "layernorm.bias", {Hv}, train);
  }
  return w;
}

// InternVLVisionAttention.forward on the normed input x [N, S, Hv]; `weights` receives eager attention's
// probabilities (kNoTensor for SDPA).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const VisionLayer& w, TensorId x, TensorId& weights) {
  const Shape xs = b.shape(x);
  const int64_t N = xs[0], S = xs[1], nh = s.vision_num_heads, hd = s.vision_hidden_size / nh;
  const bool eager = b.config().attn == AttnImpl::eager;
  weights = kNoTensor;
  // query_states = q_proj(x); query_states = q_norm(query_states) (the projection bound as the norm's argument);
  // reshape(...).transpose(1, 2): a view. SDPA's fused backward writes each gradient in its input's layout;
  // eager's bmm gradients are contiguous [N, heads, S, hd] tensors the transposed view copies back (as the
  // CLIP tower, clip_parts.cpp).
  auto heads = [&](const Lin& l, TensorId norm_w) {
    TensorId t = clip::apply(b, l, x);
    if (norm_w != kNoTensor) t = rms_norm(b, t, norm_w, /*held_input=*/true);
    return eager ? b.view_copying_grad(t, {N, nh, S, hd}) : b.view(t, {N, nh, S, hd});
  };
  const TensorId q = heads(w.q, w.q_norm);
  const TensorId k = heads(w.k, w.k_norm);
  const TensorId v = heads(w.v, kNoTensor);
  for (TensorId t : {q, k, v}) b.hold(t);  // query / key / value_states until the module returns
  TensorId ctx;
  if (!eager) {
    ctx = b.sdpa(q, k, v, 0.0, false);
  } else {
    // torch.matmul copies the head-split views (their batch and head dims cannot merge) unless the batch is 1;
    // bmm saves the copies.
    const bool copies = N > 1;
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {N, nh, S, S}, copies, copies), false);
    b.hold(scores);  // attn_weights until the softmax statement rebinds it
    // softmax(attn_weights, dim=-1) with no dtype: in the scores' dtype, except under autocast, whose fp32
    // policy casts the 16-bit scores to fp32 first; the context matmul then casts the fp32 probabilities back
    // (GraphBuilder::matmul's autocast cast, saved by the bmm).
    const TensorId probs = b.softmax_last(b.autocast() ? b.to(scores, DType::f32) : scores);
    b.drop(scores);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, v, {N, nh, S, hd}, false, copies), {N, S, nh, hd},
                            /*grad_copied=*/copies);
  }
  const TensorId out = clip::apply(b, w.o, b.view(ctx, {N, S, nh * hd}));
  for (TensorId t : {q, k, v}) b.drop(t);
  return out;
}

// InternVLVisionLayer.forward on h [N, S, Hv] as layer region `name`.
TensorId vision_layer(GraphBuilder& b, const TransformerSpec& s, const VisionLayer& w, const std::string& name,
                      bool checkpointed, TensorId h) {
  b.begin_layer(name, checkpointed);
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable until the layer returns
  const TensorId a = apply_norm(b, s, h, w.ln1_w, w.ln1_b);
  b.hold(a);  // the attention's hidden_states until it returns
  TensorId weights = kNoTensor;
  const TensorId att = attention(b, s, w, a, weights);
  b.drop(a);
  const TensorId scaled = b.mul(w.lambda1, att);
  b.hold(scaled);  // attention_output: never rebound, bound until the layer returns
  const TensorId h1 = b.add(scaled, layer_in);
  b.hold(h1);  // hidden_states until the layer returns
  const TensorId n2 = apply_norm(b, s, h1, w.ln2_w, w.ln2_b);
  b.hold(n2);  // layer_output until the MLP returns
  const TensorId f1 = clip::apply(b, w.fc1, n2);
  b.hold(f1);  // the MLP's hidden_states until the activation's return rebinds it
  const TensorId act = clip::activation(b, s.vision_hidden_act, f1);
  b.drop(f1);
  b.hold(act);  // until fc2 returns
  const TensorId m = clip::apply(b, w.fc2, act);
  b.drop(act);
  b.drop(n2);
  const TensorId out = b.add(b.mul(w.lambda2, m), h1);
  for (TensorId t : {h1, scaled, weights, layer_in})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return out;
}

// InternVLVisionModel.forward over pixel_values [N, C, R, R]: returns last_hidden_state, held (the output object
// holds it until the model's forward has taken .pooler_output; the caller drops it).
TensorId tower_forward(GraphBuilder& b, const TransformerSpec& s, const VisionTower& w, TensorId pixels) {
  const auto& cfg = b.config();
  const int64_t N = b.shape(pixels)[0], Hv = s.vision_hidden_size, P = s.vision_patch_size,
                side = s.vision_image_size / P, n = side * side;
  // InternVLVisionEmbeddings, as BEiT's (hf_beit.cpp): the conv's transposed view, the cat with the expanded
  // class token (fp32 under autocast: each part's gradient cast back to its dtype), + the position table.
  const TensorId patches = b.view_copying_grad(b.conv2d(pixels, w.patch_w, w.patch_b, P, 0, {N, Hv, side, side}),
                                               {N, n, Hv});
  TensorId h = b.cat("cat", {b.view(w.cls, {N, 1, Hv}), patches}, 1, std::nullopt, /*cast_part_grads=*/true);
  if (w.pos != kNoTensor) h = b.add(h, w.pos);
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // bound in InternVLVisionModel.forward until it returns
  for (int64_t i = 0; i < s.vision_num_layers; ++i)
    h = vision_layer(b, s, w.layers[static_cast<size_t>(i)], "vision_tower.encoder.layer." + std::to_string(i),
                     cfg.grad_checkpointing, h);
  if (w.final_w != kNoTensor) {
    b.hold(h);  // encoder_outputs until the vision model returns
    const TensorId seq = b.layer_norm(h, w.final_w, w.final_b);
    b.drop(h);
    h = seq;
  }
  b.hold(h);  // last_hidden_state: the output object's
  b.drop(embedding_output);
  return h;
}

}  // namespace

void build_internvl(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (cfg.image_tiles != 0 && cfg.images_per_sample == 0)
    throw InputError("image_tiles", std::to_string(cfg.image_tiles),
                     "needs images_per_sample > 0 (a text-only run has no image to tile)");
  if (!cfg.image_splits.empty())
    throw InputError("image_splits", "set",
                     "is an idefics3 / smolvlm key; an internvl image's tiles are image_tiles (crop_to_patches' count)");
  const int64_t T = cfg.image_tiles == 0 ? 1 : cfg.image_tiles, ntok = s.mm_image_tokens;
  const int64_t per_image = checked_mul(T, ntok, "image_tiles");
  // The harness lays out 4 text tokens, then each image's tokens followed by 3 text tokens.
  const int64_t images =
      llava::check_run(b, s, checked_add(per_image, 3, "image_tiles"), 4, per_image, /*lora=*/true);
  const bool inf = !b.training(), with_images = images > 0;
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, H = s.hidden_size,
                V = s.vocab_size, Hv = s.vision_hidden_size, R = s.vision_image_size, k = s.ivl_shuffle,
                side = R / s.vision_patch_size, tiles = checked_mul(images, T, "image_tiles");

  hf_construction_scalar(b);
  // Parameters in __init__ order: model.vision_tower, model.multi_modal_projector (layer_norm, linear_1,
  // linear_2), model.language_model (embed_tokens, layers, norm: llama_text_model creates the last two), lm_head.
  const VisionTower tower = tower_params(b, s, with_images);
  const int64_t F = checked_mul(Hv, k * k, "downsample_ratio");
  const TensorId pln_w = b.param("multi_modal_projector.layer_norm.weight", {F}, with_images);
  const TensorId pln_b = b.param("multi_modal_projector.layer_norm.bias", {F}, with_images);
  const Lin l1 = clip::linear_params(b, "multi_modal_projector.linear_1", H, F, true, with_images);
  const Lin l2 = clip::linear_params(b, "multi_modal_projector.linear_2", H, H, true, with_images);
  const TensorId embed = b.param("embed_tokens.weight", {V, H});

  // The batch, as the plugin draws it: input_ids, pixel_values, labels (generate(): its position_ids).
  const TensorId ids = b.input({B, S}, DType::i64);
  const int64_t P = inf && b.pass().from_generate ? B : 1;
  if (P > 1) b.input({B, S}, DType::i64);
  TensorId pixels = kNoTensor, labels = ids;
  if (with_images) {
    pixels = b.input({tiles, s.vision_num_channels, R, R}, b.param_dtype());
    labels = b.input({B, S}, DType::i64);
  }

  TensorId h = b.embedding(ids, embed);
  TensorId features = kNoTensor, mask = kNoTensor;
  if (with_images) {
    const TensorId last = tower_forward(b, s, tower, pixels);
    const int64_t elt = b.info(last).bytes / checked_mul(checked_mul(tiles, side * side + 1, "tiles"), Hv, "tiles");
    const int64_t grid_bytes = checked_mul(checked_mul(tiles, side * side, "tiles"), checked_mul(Hv, elt, "tiles"),
                                           "tiles");
    // [:, 1:, :] (SliceBackward: a zero-filled last_hidden_state-sized gradient), reshape to the square grid (a
    // view of the slice).
    TensorId f = b.view_copying_grad(last, {tiles, side * side, Hv});
    f = b.view(f, {tiles, side, side, Hv});
    // pixel_shuffle: view (its gradient arrives permuted: reshape copies it; the view's base is the slice, whose
    // own bytes are none, so the copy's size is spelled out), permute(...).contiguous() (a copy whose backward
    // hands the gradient on permuted), view, permute(...).contiguous().
    f = b.view_copying_grad(f, {tiles, side, side / k, Hv * k}, grid_bytes);
    f = b.contiguous_copy(f, {tiles, side / k, side, Hv * k});
    f = b.view_copying_grad(f, {tiles, side / k, side / k, Hv * k * k});
    f = b.contiguous_copy(f, {tiles, side / k, side / k, Hv * k * k});
    f = b.view(f, {tiles, ntok, F});
    // InternVLMultiModalProjector: LayerNorm, linear_1, ACT2FN[projector_hidden_act], linear_2.
    const TensorId p1 = clip::apply(b, l1, b.layer_norm(f, pln_w, pln_b));
    const TensorId a = s.mm_projector_act == "relu" ? b.unary("relu", p1, false, true)
                                                    : b.unary(s.mm_projector_act, p1, true, false);
    features = clip::apply(b, l2, a);
    // forward takes .pooler_output: the output object (and last_hidden_state with it) goes.
    b.drop(last);
    features = b.to(features, b.dtype(h));  // .to(inputs_embeds.device, inputs_embeds.dtype)
    b.hold(features);  // image_features: InternVLModel's local, then the output's image_hidden_states
    h = llava::scatter_image_features(b, h, ids, features, checked_mul(tiles, ntok, "images"), mask);
  }
  llava::decoder_and_loss(b, s, h, P, mask, features, embed, ids, labels, !inf && with_images);
}

}  // namespace memplan
