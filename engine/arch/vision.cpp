// torchvision classification models, training forward + F.cross_entropy(model(x), y).
//   ResNet: conv1(7x7/2) bn relu_ maxpool(3x3/2) -> stages of Basic/Bottleneck blocks -> avgpool -> fc.
//     Block: conv bn relu_ ... bn; out += identity (in place); relu_. relu_ saves its (in-place) result,
//     batch_norm saves its input, so each conv-bn-relu keeps two tensors of its output size.
//   ViT: conv_proj (patchify) -> cat(class token) -> + pos_embedding -> N x EncoderBlock -> ln -> head.
//     EncoderBlock: x + drop(MHA(ln_1(x))), then + mlp(ln_2(.)); MHA = packed in_proj, a contiguous
//     [3, L, B, E] copy, SDPA, a contiguous copy of the output, out_proj.
#include "engine/arch/builders.h"

namespace memplan {

namespace {
int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t pad) { return (in + 2 * pad - k) / stride + 1; }

struct ConvBn {
  TensorId w, bn_w, bn_b;
};

ConvBn make_conv_bn(GraphBuilder& b, const std::string& name, const std::string& bn, int64_t out, int64_t in, int64_t k) {
  return {b.param(name + ".weight", {out, in, k, k}), b.param(bn + ".weight", {out}), b.param(bn + ".bias", {out})};
}

TensorId conv_bn(GraphBuilder& b, const ConvBn& c, TensorId x, int64_t out_ch, int64_t k, int64_t stride, int64_t pad) {
  const Shape& s = b.shape(x);
  Shape o{s[0], out_ch, conv_out(s[2], k, stride, pad), conv_out(s[3], k, stride, pad)};
  return b.batch_norm(b.conv2d(x, c.w, kNoTensor, stride, pad, o), c.bn_w, c.bn_b);
}

// F.cross_entropy(model(x), y): the logits argument lives until the call returns; autocast exits after it.
void classification_loss(GraphBuilder& b, TensorId logits, TensorId y) {
  b.mark_model_end();
  b.hold(logits);
  TensorId loss = b.cross_entropy(logits, y);
  b.drop(logits);
  b.exit_autocast();
  b.set_loss(loss);
}

void add_bn_buffers(GraphBuilder& b, const std::string& bn, int64_t ch) {
  b.buffer(bn + ".running_mean", {ch}, DType::f32);
  b.buffer(bn + ".running_var", {ch}, DType::f32);
  b.buffer(bn + ".num_batches_tracked", {}, DType::i64);
}
}  // namespace

void build_resnet(GraphBuilder& b, const VisionSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, R = cfg.image_size;
  TensorId x = b.input({B, 3, R, R}, b.param_dtype());  // images in the model's dtype
  TensorId y = b.input({B}, DType::i64);
  ConvBn stem = make_conv_bn(b, "conv1", "bn1", 64, 3, 7);
  add_bn_buffers(b, "bn1", 64);
  TensorId h = b.inplace("relu_", conv_bn(b, stem, x, 64, 7, 2, 3), true);
  {
    const Shape& hs = b.shape(h);
    h = b.max_pool2d(h, {B, 64, conv_out(hs[2], 3, 2, 1), conv_out(hs[3], 3, 2, 1)});
  }
  int64_t in_ch = 64;
  const int64_t expansion = s.bottleneck ? 4 : 1;
  for (size_t stage = 0; stage < s.blocks_per_stage.size(); ++stage) {
    const int64_t width = 64 << stage;
    for (int64_t blk = 0; blk < s.blocks_per_stage[stage]; ++blk) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(blk) + ".";
      const int64_t stride = (blk == 0 && stage > 0) ? 2 : 1;
      const int64_t out_ch = width * expansion;
      b.begin_layer(p.substr(0, p.size() - 1), false);
      TensorId identity = h;
      TensorId o;
      if (s.bottleneck) {
        ConvBn c1 = make_conv_bn(b, p + "conv1", p + "bn1", width, in_ch, 1);
        ConvBn c2 = make_conv_bn(b, p + "conv2", p + "bn2", width, width, 3);
        ConvBn c3 = make_conv_bn(b, p + "conv3", p + "bn3", out_ch, width, 1);
        for (const char* bn : {"bn1", "bn2", "bn3"}) add_bn_buffers(b, p + bn, bn[2] == '3' ? out_ch : width);
        o = b.inplace("relu_", conv_bn(b, c1, h, width, 1, 1, 0), true);
        o = b.inplace("relu_", conv_bn(b, c2, o, width, 3, stride, 1), true);
        o = conv_bn(b, c3, o, out_ch, 1, 1, 0);
      } else {
        ConvBn c1 = make_conv_bn(b, p + "conv1", p + "bn1", width, in_ch, 3);
        ConvBn c2 = make_conv_bn(b, p + "conv2", p + "bn2", width, width, 3);
        add_bn_buffers(b, p + "bn1", width);
        add_bn_buffers(b, p + "bn2", width);
        o = b.inplace("relu_", conv_bn(b, c1, h, width, 3, stride, 1), true);
        o = conv_bn(b, c2, o, width, 3, 1, 1);
      }
      if (blk == 0 && (stride != 1 || in_ch != out_ch)) {
        ConvBn ds = make_conv_bn(b, p + "downsample.0", p + "downsample.1", out_ch, in_ch, 1);
        add_bn_buffers(b, p + "downsample.1", out_ch);
        identity = conv_bn(b, ds, h, out_ch, 1, stride, 0);
      }
      o = b.inplace("add_", o, false, {identity});
      h = b.inplace("relu_", o, true);
      b.end_layer();
      in_ch = out_ch;
    }
  }
  TensorId pooled = b.adaptive_avg_pool(h, {B, in_ch, 1, 1});
  TensorId logits = b.linear(b.view(pooled, {B, in_ch}), b.param("fc.weight", {s.num_classes, in_ch}),
                             b.param("fc.bias", {s.num_classes}));
  classification_loss(b, logits, y);
}

void build_vit(GraphBuilder& b, const VisionSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, R = cfg.image_size, P = s.patch_size, E = s.hidden_dim, nh = s.num_heads;
  const int64_t n = (R / P) * (R / P), L = n + 1, hd = E / nh;
  TensorId x = b.input({B, 3, R, R}, b.param_dtype());  // images in the model's dtype
  TensorId y = b.input({B}, DType::i64);
  TensorId cls = b.param("class_token", {1, 1, E});
  TensorId conv_w = b.param("conv_proj.weight", {E, 3, P, P});
  TensorId conv_b = b.param("conv_proj.bias", {E});
  TensorId pos = b.param("encoder.pos_embedding", {1, L, E});
  TensorId patches = b.conv2d(x, conv_w, conv_b, P, 0, {B, E, R / P, R / P});
  TensorId tokens = b.view(patches, {B, n, E});
  TensorId cls_b = b.view(cls, {B, 1, E});
  TensorId h = b.cat("cat", {cls_b, tokens}, 1);
  h = b.add(h, pos);
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
    // After the first block the residual stream is the transposed [L, B, E] layout of out_proj's output (x + input
    // keeps its first operand's layout), so each LayerNorm makes a transient contiguous copy (ViT amp trace).
    TensorId a = b.layer_norm(h, ln1w, ln1b, /*contiguous_copy=*/i > 0);
    TensorId proj = b.linear(a, inw, inb);
    TensorId packed = b.contiguous_copy(proj, {3, L, B, E});
    TensorId q = b.view(packed, {B, nh, L, hd});
    TensorId k = b.view(packed, {B, nh, L, hd});
    TensorId v = b.view(packed, {B, nh, L, hd});
    // q, k, v are views of the [3, L, B, E] buffer. cuDNN (16-bit) lays its output out like q, [L, B, H, D], so
    // permute(2, 0, 1, 3).contiguous() is free (ViT amp trace: nothing allocated between SDPA and out_proj); the
    // memory-efficient kernel (fp32) writes [B, L, H, D] and the permute needs a copy.
    TensorId attn = b.sdpa(q, k, v, 0.0, false);
    TensorId ctx = b.dtype(attn) == DType::f32 ? b.contiguous_copy(attn, {L * B, E}) : b.view(attn, {L * B, E});
    TensorId att = b.view(b.linear(ctx, ow, ob), {B, L, E});
    TensorId x1 = b.add(att, h);
    TensorId m = b.layer_norm(x1, ln2w, ln2b, /*contiguous_copy=*/true);
    m = b.linear(b.unary("gelu", b.linear(m, m1w, m1b), true, false), m2w, m2b);
    h = b.add(x1, m);
    b.end_layer();
  }
  TensorId hn = b.layer_norm(h, b.param("encoder.ln.weight", {E}), b.param("encoder.ln.bias", {E}), s.num_layers > 0);
  TensorId first = b.contiguous_copy(hn, {B, E});  // x[:, 0]
  TensorId logits = b.linear(first, b.param("heads.head.weight", {s.num_classes, E}),
                             b.param("heads.head.bias", {s.num_classes}));
  classification_loss(b, logits, y);
}

}  // namespace memplan
