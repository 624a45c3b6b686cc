// SiglipModel (transformers 5.17 models/siglip/modeling_siglip.py) and Siglip2Model (models/siglip2/
// modeling_siglip2.py): a training step with return_loss=True or one inference forward without the loss.
//   Batch: siglip: pixel_values [B, C, R, R]; siglip2 (NaFlex): pixel_values [B, P, C * p * p] already patchified,
//   pixel_attention_mask [B, P] (int32) and spatial_shapes [B, 2] (int64), the image's h x w real patches padded
//   to P = max_num_patches; then input_ids [B, L].
//   Vision: siglip: patch Conv2d (with bias), flatten(2).transpose(1, 2), + position_embedding(position_ids)
//     ([1, N, H], no class token); siglip2: patch Linear, + the position table resized per image
//     (resize_positional_embeddings: an empty [B, P, H] filled image by image from a bilinear antialiased
//     interpolation of the side x side table; the padding rows copy the first position). Encoder layers (siglip2
//     with padding: the bidirectional bool mask [B, 1, P, P], an expanded view, which SDPA turns into a float bias
//     per layer); post_layernorm over the whole sequence (the encoder output stays bound until the vision model
//     returns, the normed one until the model returns); the MAP head (SiglipMultiheadAttentionPoolingHead).
//   Text: token + position embeddings, no mask (create_bidirectional_mask skips it), encoder layers,
//     final_layer_norm, last_hidden_state[:, -1, :] (a view) -> head (Linear with bias).
//   Heads: x / x.norm(p=2, dim=-1, keepdim=True); logits_per_text = text @ image.t() * logit_scale.exp() +
//     logit_bias [B, B]; the sigmoid loss: eye, -ones_like + 2 * eye, logsigmoid(m1_diag1 * logits),
//     -sum(-1), mean.
// The MAP head runs torch.nn.MultiheadAttention(batch_first=True) with need_weights=True (the module's default):
// F.multi_head_attention_forward's in-projection of the transposed [N, B, H] key view (linear's matmul reshapes it:
// a contiguous copy, after autocast's 16-bit cast), the packed k / v projection [N, B, 2H] made contiguous as
// [2, N, B, H] (the projection dies, the copy is what the bmms keep), one query per image (bmm, softmax, bmm),
// out_proj; then its LayerNorm and MLP with a residual.
#include <cmath>

#include "engine/arch/builders.h"
#include "engine/arch/vlm/clip_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using namespace clip;

struct MapHead {
  TensorId probe = kNoTensor, in_w = kNoTensor, in_b = kNoTensor, out_w = kNoTensor, out_b = kNoTensor,
           ln_w = kNoTensor, ln_b = kNoTensor;
  Lin fc1, fc2;
};

MapHead map_head_params(GraphBuilder& b, const Tower& t, bool on_device) {
  const int64_t H = t.hidden;
  const std::string p = "vision_model.head.";
  MapHead m;
  if (on_device) m.probe = b.param(p + "probe", {1, 1, H});
  if (on_device) {
    m.in_w = b.param(p + "attention.in_proj_weight", {3 * H, H});
    m.in_b = b.param(p + "attention.in_proj_bias", {3 * H});
  }
  m.out_w = b.param(p + "attention.out_proj.weight", {H, H});
  m.out_b = b.param(p + "attention.out_proj.bias", {H});
  if (!on_device) {  // Module._apply: the out_proj child first, then the MultiheadAttention's own parameters
    m.in_w = b.param(p + "attention.in_proj_weight", {3 * H, H});
    m.in_b = b.param(p + "attention.in_proj_bias", {3 * H});
  }
  m.ln_w = b.param(p + "layernorm.weight", {H});
  m.ln_b = b.param(p + "layernorm.bias", {H});
  m.fc1 = linear_params(b, p + "mlp.fc1", t.inter, H, true);
  m.fc2 = linear_params(b, p + "mlp.fc2", H, t.inter, true);
  if (!on_device) m.probe = b.param(p + "probe", {1, 1, H});
  return m;
}

// SiglipMultiheadAttentionPoolingHead.forward on the normed last hidden state x [B, N, H]; `pad_mask` (siglip2
// with padding): the pixel attention mask, made into a float [B * heads, 1, N] bias first. Returns [B, H].
TensorId map_head(GraphBuilder& b, const Tower& t, const MapHead& m, TensorId x, TensorId pad_mask) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], N = xs[1], H = t.hidden, nh = t.heads, hd = t.head_dim;
  const TensorId probe = b.generic_one("repeat", {m.probe}, {B, 1, H}, b.dtype(m.probe));
  TensorId bias = kNoTensor;
  if (pad_mask != kNoTensor) {
    // create_bidirectional_mask (the [B, N] bool of the int mask, [B, 1, 1, N]), repeat(1, heads, 1, 1),
    // torch.where(mask, 0.0, min) in the probe's dtype.
    const TensorId mb = b.generic_one("to_bool", {pad_mask}, {B, N}, DType::boolean);
    const TensorId rep = b.generic_one("repeat", {b.generic_one("index", {mb}, {B, 1, 1, N}, DType::boolean)},
                                       {B, nh, 1, N}, DType::boolean);
    bias = b.generic_one("where", {rep}, {B * nh, 1, N}, b.dtype(probe));
    b.hold(bias);  // attention_mask until the head returns
  }
  b.hold(probe);  // `probe` until the head returns
  // in_projection_packed: q = linear(query, w_q, b_q); kv = linear(key, w_kv, b_kv) over the transposed key view.
  const TensorId q = b.linear(b.view(probe, {1, B, H}), b.view(m.in_w, {H, H}), b.view(m.in_b, {H}));
  const TensorId key = b.autocast() ? b.autocast_low(x) : x;
  const TensorId kflat = b.contiguous_copy(key, {N * B, H});
  const TensorId kv = b.linear(kflat, b.view(m.in_w, {2 * H, H}), b.view(m.in_b, {2 * H}));
  const TensorId kvp = b.contiguous_copy(kv, {2, N, B, H});  // unflatten, unsqueeze, transpose, squeeze, contiguous
  const TensorId k = b.view(kvp, {1, B * nh, N, hd});
  const TensorId v = b.view(kvp, {1, B * nh, N, hd});
  b.hold(kvp);  // k and v (views of it) until the function returns
  const TensorId qs = b.scalar_op("mul_scalar", b.view(q, {1, B * nh, 1, hd}), false);  // q * sqrt(1 / hd)
  TensorId scores = b.matmul(qs, k, {1, B * nh, 1, N});  // bmm (baddbmm with the mask)
  if (bias != kNoTensor) scores = b.add(scores, b.view(bias, {1, B * nh, 1, N}));
  const TensorId probs = b.softmax_last(scores);
  const TensorId ctx = b.matmul(probs, v, {1, B * nh, 1, hd});
  const TensorId flat = b.contiguous_copy(ctx, {B, H});  // transpose(0, 1).contiguous().view(B, H)
  const TensorId att = b.linear(flat, m.out_w, m.out_b);
  // The weights average (view, mean over heads): a small tensor the tuple drops at once.
  b.generic_one("mean", {probs}, {B, 1, N}, b.dtype(probs));
  b.drop(kvp);
  b.drop(probe);
  if (bias != kNoTensor) b.drop(bias);
  const TensorId hs = b.view(att, {B, 1, H});
  b.hold(hs);  // residual until the head returns
  const TensorId n = b.layer_norm(hs, m.ln_w, m.ln_b);
  b.hold(n);
  const TensorId f1 = apply(b, m.fc1, n);
  b.hold(f1);
  const TensorId a = activation(b, t.act, f1);
  b.drop(f1);
  b.hold(a);
  const TensorId y = apply(b, m.fc2, a);
  b.drop(a);
  b.drop(n);
  const TensorId out = b.add(hs, y);
  b.drop(hs);
  return b.view_copying_grad(out, {B, H});  // hidden_state[:, 0]
}

void build_contrastive(GraphBuilder& b, const TransformerSpec& s, bool naflex) {
  const std::string type = naflex ? "siglip2" : "siglip";
  clip::check_run(b, s, type);
  const auto& cfg = b.config();
  const Tower tt = text_tower(s), vt = vision_tower(s);
  const int64_t B = cfg.batch_size, L = cfg.seq_len, C = s.vision_num_channels, p = s.vision_patch_size,
                Hv = vt.hidden, Ht = tt.hidden, D = s.projection_dim;
  int64_t N = 0, side = 0, gh = 0, gw = 0;
  if (naflex && cfg.image_grid.empty()) {
    // No image_grid: one image filling the position table's own side x side grid, unpadded (what a square image
    // of num_patches patches gives; parameter counting and estimates without the case key).
    gh = gw = static_cast<int64_t>(std::sqrt(static_cast<double>(s.vision_num_patches)));
    N = cfg.max_num_patches > 0 ? cfg.max_num_patches : gh * gw;
  } else if (naflex) {
    if (cfg.image_grid.size() != 3 || cfg.image_grid[0] != 1)
      throw InputError("image_grid", cfg.image_grid.empty() ? "absent" : "[" + std::to_string(cfg.image_grid[0]) + ", ...]",
                       "a siglip2 case needs image_grid [1, h, w]: each image's patches in height and width");
    gh = cfg.image_grid[1];
    gw = cfg.image_grid[2];
    N = cfg.max_num_patches > 0 ? cfg.max_num_patches : gh * gw;
  }
  if (naflex) {
    if (gh * gw > N)
      throw InputError("image_grid", std::to_string(gh) + " x " + std::to_string(gw),
                       "exceeds max_num_patches (" + std::to_string(N) + "): the processor never makes such a batch");
  } else {
    if (!cfg.image_grid.empty() || cfg.max_num_patches != 0)
      throw InputError(cfg.max_num_patches != 0 ? "max_num_patches" : "image_grid", "set",
                       "is a siglip2 (NaFlex) input; a siglip image is the vision config's image_size square");
    side = s.vision_image_size / p;
    N = side * side;
  }
  const bool padded = naflex && gh * gw < N;
  const bool on_device = cfg.weights_load == WeightsLoad::on_device;

  hf_construction_scalar(b);
  // Parameters in Module._apply order: text_model (embeddings, encoder, final_layer_norm, head), vision_model
  // (embeddings, encoder, post_layernorm, head), logit_scale, logit_bias.
  const TensorId tok_w = b.param("text_model.embeddings.token_embedding.weight", {s.vocab_size, Ht});
  const TensorId tpos_w = b.param("text_model.embeddings.position_embedding.weight", {s.max_position_embeddings, Ht});
  const TensorId tpos_ids =
      b.buffer("text_model.embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
  std::vector<LayerParams> tl, vl;
  for (int64_t i = 0; i < tt.layers; ++i)
    tl.push_back(layer_params(b, tt, "text_model.encoder.layers." + std::to_string(i) + ".", true));
  const TensorId tln_w = b.param("text_model.final_layer_norm.weight", {Ht});
  const TensorId tln_b = b.param("text_model.final_layer_norm.bias", {Ht});
  const Lin thead = linear_params(b, "text_model.head", D, Ht, true);
  TensorId patch_w, patch_b, vpos_w, vpos_ids = kNoTensor;
  if (naflex) {
    patch_w = b.param("vision_model.embeddings.patch_embedding.weight", {Hv, C * p * p});
    patch_b = b.param("vision_model.embeddings.patch_embedding.bias", {Hv});
    vpos_w = b.param("vision_model.embeddings.position_embedding.weight", {s.vision_num_patches, Hv});
  } else {
    patch_w = b.param("vision_model.embeddings.patch_embedding.weight", {Hv, C, p, p});
    patch_b = b.param("vision_model.embeddings.patch_embedding.bias", {Hv});
    vpos_w = b.param("vision_model.embeddings.position_embedding.weight", {N, Hv});
    vpos_ids = b.buffer("vision_model.embeddings.position_ids", {1, N}, DType::i64);
  }
  for (int64_t i = 0; i < vt.layers; ++i)
    vl.push_back(layer_params(b, vt, "vision_model.encoder.layers." + std::to_string(i) + ".", true));
  const TensorId post_w = b.param("vision_model.post_layernorm.weight", {Hv});
  const TensorId post_b = b.param("vision_model.post_layernorm.bias", {Hv});
  MapHead head;
  if (s.vision_use_head) head = map_head_params(b, vt, on_device);
  const TensorId logit_scale = b.param("logit_scale", {1});
  const TensorId logit_bias = b.param("logit_bias", {1});

  // The batch.
  const TensorId pixels = naflex ? b.input({B, N, C * p * p}, b.param_dtype()) : b.input({B, C, s.vision_image_size, s.vision_image_size}, b.param_dtype());
  const TensorId pix_mask = naflex ? b.input({B, N}, DType::i32) : kNoTensor;
  if (naflex) b.input({B, 2}, DType::i64);  // spatial_shapes
  const TensorId ids = b.input({B, L}, DType::i64);

  // ---- vision tower
  TensorId e;
  if (naflex) {
    const TensorId patches = b.linear(pixels, patch_w, patch_b);
    // resize_positional_embeddings: torch.empty [B, P, H] in the table's dtype, filled per image by
    // F.interpolate(bilinear, antialias) of the [1, H, side, side] table view ([1, H, h, w], freed after its two
    // copies); autograd's CopySlices nodes hand the gradient back image by image (a [B, P, H] clone each).
    const int64_t pe_bytes = B * N * Hv * static_cast<int64_t>(dtype_bytes(b.param_dtype()));
    TensorId pos = b.generic({"resize_positional_embeddings", {vpos_w}, {{{B, N, Hv}, b.param_dtype()}}, {}, {},
                              {Hv * gh * gw * static_cast<int64_t>(dtype_bytes(b.param_dtype()))}, {pe_bytes}})[0];
    e = b.add(patches, pos);
  } else {
    const TensorId patches =
        b.view_copying_grad(b.conv2d(pixels, patch_w, patch_b, p, 0, {B, Hv, side, side}), {B, N, Hv});
    e = b.add(patches, b.embedding(b.view(vpos_ids, {1, N}), vpos_w));
  }
  // siglip2 with padding: the bidirectional mask, bool [B, 1, 1, P] expanded to [B, 1, P, P] (a view), bound until
  // the vision model returns; SDPA makes its float bias per layer. Without padding create_bidirectional_mask
  // returns None (padding_mask.all()).
  TensorId vmask = kNoTensor;
  if (padded) {
    const TensorId mb = b.generic_one("to_bool", {pix_mask}, {B, N}, DType::boolean);
    vmask = b.generic_one("and", {mb}, {B, 1, 1, N}, DType::boolean);
    if (cfg.attn == AttnImpl::eager) vmask = b.generic_one("where", {vmask}, {B, 1, N, N}, b.dtype(e));
    else vmask = b.view(vmask, {B, 1, N, N});
    b.hold(vmask);
  }
  b.hold(e);  // the vision model's hidden_states (the embeddings) until it returns: the encoder never rebinds it
  TensorId h = e;
  for (int64_t i = 0; i < vt.layers; ++i)
    h = encoder_layer(b, vt, vl[static_cast<size_t>(i)], "vision_model.encoder.layers." + std::to_string(i),
                      layer_checkpointed(cfg, i), h, vmask, false, /*strided=*/!naflex);
  b.hold(h);  // encoder_outputs until the vision model returns
  const TensorId vlast = b.layer_norm(h, post_w, post_b, /*contiguous_copy=*/!naflex);
  b.hold(vlast);  // the output's last_hidden_state until the model returns
  TensorId image_feat = kNoTensor;
  if (s.vision_use_head) image_feat = map_head(b, vt, head, vlast, padded ? pix_mask : kNoTensor);
  if (vmask != kNoTensor) b.drop(vmask);
  b.drop(h);
  b.drop(e);
  if (image_feat == kNoTensor)
    throw InputError("config.vision_config.vision_use_head", "false",
                     "leaves pooler_output None, which " + type + "Model's forward cannot normalise");
  b.hold(image_feat);  // vision_outputs.pooler_output until the model returns

  // ---- text tower
  TensorId te = b.add(b.embedding(ids, tok_w), b.embedding(b.view(tpos_ids, {1, L}), tpos_w));
  b.hold(te);  // the text model's hidden_states until it returns
  h = te;
  for (int64_t i = 0; i < tt.layers; ++i)
    h = encoder_layer(b, tt, tl[static_cast<size_t>(i)], "text_model.encoder.layers." + std::to_string(i),
                      layer_checkpointed(cfg, vt.layers + i), h, kNoTensor, false);
  b.hold(h);  // encoder_outputs until the text model returns
  const TensorId tlast = b.layer_norm(h, tln_w, tln_b);
  b.hold(tlast);  // the output's last_hidden_state until the model returns
  const TensorId text_feat = apply(b, thead, b.view_copying_grad(tlast, {B, Ht}));  // last_hidden_state[:, -1, :]
  b.drop(h);
  b.drop(te);
  b.hold(text_feat);

  // ---- heads
  const TensorId image_embeds = normalise(b, image_feat, false);
  b.hold(image_embeds);
  const TensorId text_embeds = normalise(b, text_feat, false);
  b.hold(text_embeds);
  TensorId logits = b.matmul(b.view(text_embeds, {1, 1, B, D}), b.view(image_embeds, {1, 1, D, B}), {1, 1, B, B});
  logits = b.mul(b.view(logits, {B, B}), b.unary("exp", logit_scale, false, true));
  logits = b.add(logits, logit_bias);
  b.hold(logits);  // logits_per_text / logits_per_image (a view) until the model returns
  if (!b.training()) {
    forward_output(b, {});
    return;
  }
  b.mark_model_end();
  // eye, m1_diag1 = -ones_like(logits) + 2 * eye, logsigmoid(m1_diag1 * logits), -sum(-1), mean.
  const DType ldt = b.dtype(logits);
  const TensorId eye = b.generic_one("eye", {}, {B, B}, DType::f32);
  b.hold(eye);
  const TensorId neg = b.generic_one("neg", {b.generic_one("ones_like", {}, {B, B}, ldt)}, {B, B}, ldt);
  const TensorId m1 = b.generic_one("add", {neg, b.generic_one("mul_scalar", {eye}, {B, B}, DType::f32)}, {B, B},
                                    DType::f32);
  const TensorId ll = b.unary("log_sigmoid", b.mul(m1, logits), true, false);
  const TensorId nll = b.unary("neg", b.reduce_last("sum", ll, false), false, false);
  const TensorId loss = b.generic_one("mean", {nll}, {}, b.dtype(nll));
  b.drop(eye);
  for (TensorId t : {logits, text_embeds, image_embeds, text_feat, tlast, image_feat, vlast}) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace

void build_siglip(GraphBuilder& b, const TransformerSpec& s) { build_contrastive(b, s, false); }
void build_siglip2(GraphBuilder& b, const TransformerSpec& s) { build_contrastive(b, s, true); }

}  // namespace memplan
