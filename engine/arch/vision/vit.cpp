// torchvision ViT (torchvision/models/vision_transformer.py), training forward + cross entropy:
//   conv_proj (patchify) -> cat(class token) -> + pos_embedding -> N x EncoderBlock -> ln -> head.
//   EncoderBlock: x + drop(MHA(ln_1(x))), then + mlp(ln_2(.)); MHA = packed in_proj, a contiguous
//   [3, L, B, E] copy, SDPA, a contiguous copy of the output, out_proj.
// Inference: under autocast nn.MultiheadAttention takes the same path (its fast path refuses autocast), with
// F.multi_head_attention_forward's locals q, k, v (views of the packed copy) alive until it returns, the block's
// input through the block and the encoder's input through the encoder. Without autocast and with an even head
// count, eval + no grad takes the fast path (torch._native_multi_head_attention), which is not modelled: refused.
#include "engine/arch/builders.h"
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

namespace {
using vision::classification_loss;
}  // namespace

void build_vit(GraphBuilder& b, const VisionSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, R = cfg.image_size, P = s.patch_size, E = s.hidden_dim, nh = s.num_heads;
  const int64_t n = (R / P) * (R / P), L = n + 1, hd = E / nh;
  if (!b.training() && !b.autocast() && nh % 2 == 0)
    throw InputError("precision", std::string(precision_name(cfg.precision)),
                     s.name + " inference without autocast runs nn.MultiheadAttention's fast path "
                     "(torch._native_multi_head_attention), which is not modelled; amp_bf16 / amp_fp16 inference is");
  TensorId x = b.input({B, 3, R, R}, b.param_dtype());  // images in the model's dtype
  TensorId y = b.training() ? b.input({B}, DType::i64) : kNoTensor;
  TensorId cls = b.param("class_token", {1, 1, E});
  TensorId conv_w = b.param("conv_proj.weight", {E, 3, P, P});
  TensorId conv_b = b.param("conv_proj.bias", {E});
  TensorId pos = b.param("encoder.pos_embedding", {1, L, E});
  TensorId patches = b.conv2d(x, conv_w, conv_b, P, 0, {B, E, R / P, R / P});
  TensorId tokens = b.view(patches, {B, n, E});
  TensorId cls_b = b.view(cls, {B, 1, E});
  TensorId h = b.cat("cat", {cls_b, tokens}, 1);
  vision::ModuleCall encoder_call(b, h);  // `x = self.encoder(x)`: the cat lives through the encoder
  h = b.add(h, pos);
  vision::ModuleCall layers_call(b, h);  // Encoder.forward's `input` (+ pos_embedding) through layers and ln
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "encoder.layers.encoder_layer_" + std::to_string(i) + ".";
    TensorId ln1w = b.param(p + "ln_1.weight", {E}), ln1b = b.param(p + "ln_1.bias", {E});
    TensorId inw = b.param(p + "self_attention.in_proj_weight", {3 * E, E});
    TensorId inb = b.param(p + "self_attention.in_proj_bias", {3 * E});
    TensorId ow = b.param(p + "self_attention.out_proj.weight", {E, E});
    TensorId ob = b.param(p + "self_attention.out_proj.bias", {E});
    TensorId ln2w = b.param(p + "ln_2.weight", {E}), ln2b = b.param(p + "ln_2.bias", {E});
    TensorId m1w = b.param(p + "mlp.0.weight", {s.mlp_dim, E}), m1b = b.param(p + "mlp.0.bias", {s.mlp_dim});
    TensorId m2w = b.param(p + "mlp.3.weight", {E, s.mlp_dim}), m2b = b.param(p + "mlp.3.bias", {E});
    b.begin_layer(p.substr(0, p.size() - 1), layer_checkpointed(cfg, i));
    vision::ModuleCall block_call(b, h);  // EncoderBlock's input, until it returns
    // After the first block the residual stream is the transposed [L, B, E] layout of out_proj's output (x + input
    // keeps its first operand's layout), so each LayerNorm makes a transient contiguous copy (ViT amp trace).
    TensorId a = b.layer_norm(h, ln1w, ln1b, /*contiguous_copy=*/i > 0);
    vision::ModuleCall attn_call(b, a);  // self_attention's argument (ln_1's output), until it returns
    TensorId proj = b.linear(a, inw, inb);
    TensorId packed = b.contiguous_copy(proj, {3, L, B, E});
    vision::ModuleCall packed_call(b, packed);  // q, k, v: views of it, alive until the attention returns
    TensorId q = b.view(packed, {B, nh, L, hd});
    TensorId k = b.view(packed, {B, nh, L, hd});
    TensorId v = b.view(packed, {B, nh, L, hd});
    // q, k, v are views of the [3, L, B, E] buffer. cuDNN (16-bit) lays its output out like q, [L, B, H, D], so
    // permute(2, 0, 1, 3).contiguous() is free (ViT amp trace: nothing allocated between SDPA and out_proj); the
    // memory-efficient kernel (fp32) writes [B, L, H, D] and the permute needs a copy.
    TensorId attn = b.sdpa(q, k, v, 0.0, false);
    TensorId ctx = b.dtype(attn) == DType::f32 ? b.contiguous_copy(attn, {L * B, E}) : b.view(attn, {L * B, E});
    TensorId att = b.view(b.linear(ctx, ow, ob), {B, L, E});
    packed_call.end();
    attn_call.end();
    TensorId x1 = b.add(att, h);
    TensorId m = b.layer_norm(x1, ln2w, ln2b, /*contiguous_copy=*/true);
    {
      vision::ModuleCall mlp_call(b, m);  // the MLPBlock's argument (ln_2's output), until it returns
      m = b.linear(b.unary("gelu", b.linear(m, m1w, m1b), true, false), m2w, m2b);
    }
    h = b.add(x1, m);
    block_call.end();
    b.end_layer();
  }
  TensorId hn = b.layer_norm(h, b.param("encoder.ln.weight", {E}), b.param("encoder.ln.bias", {E}), s.num_layers > 0);
  layers_call.end();
  encoder_call.end();
  TensorId first = b.contiguous_copy(hn, {B, E});  // x[:, 0]
  TensorId logits = b.linear(first, b.param("heads.head.weight", {s.num_classes, E}),
                             b.param("heads.head.bias", {s.num_classes}));
  classification_loss(b, logits, y);
}

}  // namespace memplan
