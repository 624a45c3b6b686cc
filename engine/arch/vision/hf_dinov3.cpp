// DINOv3ViTModel (transformers models/dinov3_vit/modeling_dinov3_vit.py), the inference forward of the bare backbone
// (AutoModel; transformers 5.17 has no image-classification class for it, so no loss and no training step).
// Written from the modeling file before any run of it was measured (family set 35, held out:
// data/validation/predictions/families35-holdout.json), then corrected against those rows (measured on an H100,
// data/validation/h100-families.jsonl; data/validation/notes-f35/dinov3.md): the embeddings' output and each layer's
// input held to the end, both rotations before both cats, eager probabilities bound as `_`. Stages, under
// model.eval() and inference_mode:
//   DINOv3ViTEmbeddings: patch Conv2d (kernel = stride = patch, bias) -> flatten(2).transpose(1, 2) (a view) ->
//     cat([cls_token.expand, register_tokens.expand, patches], dim=1): [B, 1 + R + N, H] (under autocast the bf16
//     patches promote to the fp32 tokens' dtype: the residual stream is fp32); the conv output dies at the return.
//   DINOv3ViTRopePositionEmbedding, with autocast off: the patch centres [N, 2] (lru-cached after the first call),
//     angles = 2 pi * coords[:, :, None] * inv_freq[None, None, :] ([N, 2, D / 4] fp32), flatten, tile(2) -> [N, D],
//     cos and sin, each .to(pixel_values.dtype) (a copy in a 16-bit model); the pair is bound until the model
//     returns.
//   DINOv3ViTModel.forward keeps the embeddings' output (hidden_states) bound until it returns.
//   DINOv3ViTLayer (its input bound by the encoder's loop variable until it returns): residual = h; norm1;
//     attention: q, k, v projections viewed [B, heads, S, D]; apply_rotary_pos_emb rotates the patch tokens only:
//     q.split((1 + R, N), dim=-2) (views), q_patches * cos + rotate_half(q_patches) * sin (under autocast bf16 q
//     times fp32 cos is fp32), the same for k, and only then cat((prefix, rotated), dim=-2) for q and for k (a new
//     [B, heads, S, D], fp32 under autocast); the rotated patch parts live until the function returns. SDPA (no
//     mask, not causal; autocast casts fp32 q / k back to 16 bits) or eager (softmax without a dtype; the
//     probabilities are returned and bound as the layer's `_` until it returns, through the MLP); reshape;
//     o_proj. layer_scale1 (h * lambda1: fp32 under autocast), drop_path (identity in eval) + residual; norm2;
//     MLP (up, act, down) or gated MLP (down(act(gate(x)) * up(x))); layer_scale2; + residual.
//   The final norm; pooler_output = sequence_output[:, 0, :] (a view); both returned.
// Parameters and buffers in model.to("cuda") order (Module._apply: children first): embeddings.patch_embeddings
// (weight, bias), then the embeddings' own cls_token, mask_token (unused without bool_masked_pos) and
// register_tokens; rope_embeddings.inv_freq (fp32 [D / 4]); per layer norm1, attention k_proj, v_proj, q_proj,
// o_proj (the order __init__ creates them), layer_scale1, norm2, mlp, layer_scale2; norm. Built on the device the
// tokens come before the patch conv (construction order).
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/vision/hf_vit_parts.h"
#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using hfvit::VitLinear;
using hfvit::vit_linear;

TensorId apply(GraphBuilder& b, const VitLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

struct Dinov3Layer {
  TensorId n1_w, n1_b, n2_w, n2_b, ls1, ls2;
  VitLinear q, k, v, o, gate, up, down;
};

// apply_rotary_pos_emb over q and k [B, heads, S, D]: both patch parts are rotated first, then both cats run
// (q_patches and k_patches are rebound before `q = torch.cat(...)`), so the q cat never coexists with k's rotation
// temporaries. Returns the cats; the rotated parts die when the function returns.
std::pair<TensorId, TensorId> rotate_patches(GraphBuilder& b, TensorId q, TensorId k, TensorId cos, TensorId sin,
                                             int64_t prefix) {
  const Shape xs = b.shape(q);
  const Shape pre{xs[0], xs[1], prefix, xs[3]}, pat{xs[0], xs[1], xs[2] - prefix, xs[3]};
  const TensorId qr = rope(b, b.view(q, pat), cos, sin);
  b.hold(qr);
  const TensorId kr = rope(b, b.view(k, pat), cos, sin);
  b.hold(kr);
  const TensorId qe = b.cat("cat", {b.view(q, pre), qr}, -2);
  const TensorId ke = b.cat("cat", {b.view(k, pre), kr}, -2);
  b.drop(qr);
  b.drop(kr);
  return {qe, ke};
}

}  // namespace

void build_hf_dinov3(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  if (b.training())
    throw InputError("mode", "training",
                     "dinov3_vit is modelled as DINOv3ViTModel's inference forward (transformers 5.17 has no head "
                     "for it, so no loss to train)");
  if (cfg.task != Task::feature)
    throw InputError("task", std::string(task_name(cfg.task)),
                     "dinov3_vit is the bare backbone (AutoModel): use task feature");
  const int64_t B = cfg.batch_size, R = s.image_size, P = s.patch_size, C = s.num_channels, H = s.hidden_size;
  const int64_t I = s.intermediate_size, nh = s.num_heads, hd = s.head_dim, reg = s.image_extra_tokens;
  const int64_t N = (R / P) * (R / P), S = 1 + reg + N;

  hf_construction_scalar(b);
  const bool on_device = cfg.weights_load == WeightsLoad::on_device;
  TensorId cls = kNoTensor, mask_tok = kNoTensor, regs = kNoTensor;
  auto tokens = [&] {
    cls = b.param("embeddings.cls_token", {1, 1, H}, false);
    mask_tok = b.param("embeddings.mask_token", {1, 1, H}, false);
    regs = b.param("embeddings.register_tokens", {1, reg, H}, false);
  };
  if (on_device) tokens();
  const vision::Conv patch = vision::make_conv(b, "embeddings.patch_embeddings", C, H, P, P, 0, 1, true);
  if (!on_device) tokens();
  b.buffer("rope_embeddings.inv_freq", {hd / 4}, DType::f32);
  std::vector<Dinov3Layer> layers(static_cast<size_t>(s.num_layers));
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "layer." + std::to_string(i) + ".";
    Dinov3Layer& w = layers[static_cast<size_t>(i)];
    w.n1_w = b.param(p + "norm1.weight", {H}, false);
    w.n1_b = b.param(p + "norm1.bias", {H}, false);
    w.k = vit_linear(b, p + "attention.k_proj", H, H, s.dinov3_key_bias, false);
    w.v = vit_linear(b, p + "attention.v_proj", H, H, s.dinov3_value_bias, false);
    w.q = vit_linear(b, p + "attention.q_proj", H, H, s.dinov3_query_bias, false);
    w.o = vit_linear(b, p + "attention.o_proj", H, H, s.dinov3_proj_bias, false);
    w.ls1 = b.param(p + "layer_scale1.lambda1", {H}, false);
    w.n2_w = b.param(p + "norm2.weight", {H}, false);
    w.n2_b = b.param(p + "norm2.bias", {H}, false);
    if (s.dinov3_gated_mlp) w.gate = vit_linear(b, p + "mlp.gate_proj", I, H, s.mlp_bias, false);
    w.up = vit_linear(b, p + "mlp.up_proj", I, H, s.mlp_bias, false);
    w.down = vit_linear(b, p + "mlp.down_proj", H, I, s.mlp_bias, false);
    w.ls2 = b.param(p + "layer_scale2.lambda1", {H}, false);
  }
  const TensorId nf_w = b.param("norm.weight", {H}, false);
  const TensorId nf_b = b.param("norm.bias", {H}, false);
  (void)mask_tok;  // registered, read only with bool_masked_pos

  const TensorId x = b.input({B, C, R, R}, b.param_dtype());  // pixel_values in the model's dtype (fp32 under amp)

  // ---- embeddings
  TensorId h;
  {
    const TensorId patches = vision::conv(b, patch, x);
    const TensorId seq = b.view(patches, {B, N, H});  // flatten(2).transpose(1, 2)
    h = b.cat("cat", {b.expand(cls, {B, 1, H}), b.expand(regs, {B, reg, H}), seq}, 1);
  }
  const TensorId embedding_output = h;
  b.hold(embedding_output);  // DINOv3ViTModel.forward's hidden_states until it returns
  // ---- rotary tables (autocast off): fp32 temporaries, cast to the pixel dtype
  TensorId cos, sin;
  {
    const TensorId coords = b.buffer("rope_embeddings.patch_coords_cache", {N, 2}, DType::f32);  // lru-cached
    const TensorId scaled = b.generic_one("mul_scalar", {coords}, {N, 2, 1}, DType::f32);
    const TensorId angles = b.generic_one("mul", {scaled}, {N, 2, hd / 4}, DType::f32);
    const TensorId tiled = b.generic_one("tile", {b.view(angles, {N, hd / 2})}, {N, hd}, DType::f32);
    const TensorId cos32 = b.generic_one("cos", {tiled}, {N, hd}, DType::f32);
    b.hold(cos32);
    const TensorId sin32 = b.generic_one("sin", {tiled}, {N, hd}, DType::f32);
    b.hold(sin32);
    cos = b.to(cos32, b.param_dtype());
    b.hold(cos);
    sin = b.to(sin32, b.param_dtype());
    b.hold(sin);
    if (cos != cos32) b.drop(cos32);
    if (sin != sin32) b.drop(sin32);
  }
  // ---- layers
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const Dinov3Layer& w = layers[static_cast<size_t>(i)];
    b.begin_layer("layer." + std::to_string(i), false);
    const TensorId residual = h;
    b.hold(residual);  // the encoder's loop variable (and `residual` until its rebinding) until the layer returns
    TensorId weights = kNoTensor;  // eager's probabilities
    TensorId a = b.layer_norm(h, w.n1_w, w.n1_b);
    {
      vision::ModuleCall attn_call(b, a);  // hidden_states, the attention's argument
      const TensorId q = b.view(apply(b, w.q, a), {B, nh, S, hd});
      b.hold(q);
      const TensorId k = b.view(apply(b, w.k, a), {B, nh, S, hd});
      b.hold(k);
      const TensorId v = b.view(apply(b, w.v, a), {B, nh, S, hd});
      b.hold(v);
      const std::pair<TensorId, TensorId> qk = rotate_patches(b, q, k, cos, sin, 1 + reg);
      const TensorId qe = qk.first, ke = qk.second;
      b.hold(qe);
      b.hold(ke);
      b.drop(q);  // the projections are rebound
      b.drop(k);
      TensorId ctx;
      if (cfg.attn == AttnImpl::sdpa) {
        ctx = b.sdpa(qe, ke, v, s.attn_dropout, false);
      } else {  // eager_attention_forward: softmax without a dtype (BERT's), dropout an identity in eval
        const TensorId scores = b.scalar_op("mul_scalar", b.matmul(qe, ke, {B, nh, S, S}, true, true), false);
        weights = b.softmax_last(scores);
        b.hold(weights);  // attn_weights: returned, then bound as the layer's `_` until the layer returns
        ctx = b.contiguous_copy(b.matmul(weights, v, {B, nh, S, hd}, false, true), {B, S, nh, hd}, true);
      }
      const TensorId o = apply(b, w.o, b.view(ctx, {B, S, H}));
      for (TensorId t : {qe, ke, v}) b.drop(t);
      a = o;
    }
    a = b.mul(a, w.ls1);  // layer_scale1
    h = b.add(a, residual);
    const TensorId residual2 = h;
    b.hold(residual2);
    TensorId m = b.layer_norm(h, w.n2_w, w.n2_b);
    {
      vision::ModuleCall mlp_call(b, m);
      TensorId inner;
      if (s.dinov3_gated_mlp) {
        const TensorId g = b.unary(s.hidden_act, apply(b, w.gate, m), false, false);
        inner = b.mul(g, apply(b, w.up, m));
      } else {
        inner = b.unary(s.hidden_act, apply(b, w.up, m), false, false);
      }
      m = apply(b, w.down, inner);
    }
    m = b.mul(m, w.ls2);  // layer_scale2
    h = b.add(m, residual2);
    b.drop(residual2);
    b.drop(residual);
    if (weights != kNoTensor) b.drop(weights);
    b.end_layer();
  }
  const TensorId seq = b.layer_norm(h, nf_w, nf_b);
  const TensorId pooled = b.view(seq, {B, H});  // sequence_output[:, 0, :]
  b.drop(cos);
  b.drop(sin);
  b.drop(embedding_output);
  forward_output(b, {seq, pooled});
}

}  // namespace memplan
