// torchvision ConvNeXt (torchvision/models/convnext.py), training forward + cross entropy.
//   features.0: Conv2dNormActivation(3, c0, 4x4/4, bias, LayerNorm2d, no activation); stages of CNBlock with
//   downsamplers (LayerNorm2d, Conv2d 2x2/2) between them; avgpool (a mean); classifier LayerNorm2d, Flatten,
//   Linear. CNBlock: depthwise 7x7 conv (bias), Permute(0, 2, 3, 1), LayerNorm, Linear 4x, GELU, Linear,
//   Permute(0, 3, 1, 2); layer_scale [C, 1, 1] * block (an fp32 parameter: under autocast the product is fp32,
//   so the residual stream is fp32); StochasticDepth(p, "row") with p = prob * i / (n - 1); `result += input`.
//   LayerNorm2d: permute, F.layer_norm, permute back.
// Memory layout, which decides the copies: the stem conv's output is contiguous NCHW, so the stem LayerNorm2d's
// permuted input is not contiguous and layer_norm works on a contiguous copy; its output permuted back has
// channels-last strides, and so has everything after it (elementwise results follow their input's strides,
// the `.to()` casts of autocast preserve them, cuDNN keeps them): every later conv is a channels-last cuDNN conv
// (depthwise included, ConvParams::use_cudnn_depthwise), every later Permute(0, 2, 3, 1) is contiguous, and no
// later LayerNorm copies.
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

namespace {
struct Ln {
  TensorId w, b;
};
Ln make_ln(GraphBuilder& b, const std::string& name, int64_t c) {
  return {b.param(name + ".weight", {c}), b.param(name + ".bias", {c})};
}
// LayerNorm2d on [N, C, H, W]; `contiguous_input`: x has channels-last strides, so the permute is contiguous.
TensorId layer_norm_2d(GraphBuilder& b, const Ln& ln, TensorId x, bool contiguous_input) {
  const Shape s = b.shape(x);
  vision::ModuleCall call(b, x);  // the module's argument, past autocast's fp32 cast of it (inference)
  TensorId v = b.view(x, {s[0], s[2], s[3], s[1]});
  TensorId y = b.layer_norm(v, ln.w, ln.b, /*contiguous_copy=*/!contiguous_input && s[2] * s[3] > 1);
  return b.view(y, s);
}
}  // namespace

void build_convnext(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  const auto& ch = s.stage_channels;
  if (ch.size() != s.blocks_per_stage.size() || ch.empty())
    throw InputError("model.stage_channels", std::to_string(ch.size()), "needs one channel count per stage");
  Conv stem = make_conv(b, "features.0.0", 3, ch[0], 4, 4, 0, 1, true);
  Ln stem_ln = make_ln(b, "features.0.1", ch[0]);
  struct Block {
    Conv dw;
    Ln ln;
    TensorId w1, b1, w2, b2, scale;
    double sd;
  };
  struct Down {
    Ln ln;
    Conv c;
  };
  std::vector<std::vector<Block>> stages;
  std::vector<Down> downs;
  int64_t total = 0;
  for (int64_t n : s.blocks_per_stage) total += n;
  int64_t id = 0, idx = 1;
  for (size_t i = 0; i < ch.size(); ++i, ++idx) {
    const int64_t c = ch[i];
    std::vector<Block> stage;
    for (int64_t j = 0; j < s.blocks_per_stage[i]; ++j, ++id) {
      const std::string p = "features." + std::to_string(idx) + "." + std::to_string(j) + ".";
      Block blk;
      blk.dw = make_conv(b, p + "block.0", c, c, 7, 1, 3, c, true);
      blk.ln = make_ln(b, p + "block.2", c);
      blk.w1 = b.param(p + "block.3.weight", {4 * c, c});
      blk.b1 = b.param(p + "block.3.bias", {4 * c});
      blk.w2 = b.param(p + "block.5.weight", {c, 4 * c});
      blk.b2 = b.param(p + "block.5.bias", {c});
      blk.scale = b.param(p + "layer_scale", {c, 1, 1});
      blk.sd = total > 1 ? s.stochastic_depth_prob * static_cast<double>(id) / (static_cast<double>(total) - 1.0) : 0;
      stage.push_back(blk);
    }
    stages.push_back(stage);
    if (i + 1 < ch.size()) {
      ++idx;
      const std::string p = "features." + std::to_string(idx) + ".";
      Down d{make_ln(b, p + "0", c), make_conv(b, p + "1", c, ch[i + 1], 2, 2, 0, 1, true)};
      d.c.args.channels_last = true;
      downs.push_back(d);
    }
  }
  const int64_t last = ch.back();
  Ln head_ln = make_ln(b, "classifier.0", last);
  TensorId fcw = b.param("classifier.2.weight", {s.num_classes, last});
  TensorId fcb = b.param("classifier.2.bias", {s.num_classes});

  TensorId h = layer_norm_2d(b, stem_ln, conv(b, stem, x), /*contiguous_input=*/false);
  for (size_t i = 0; i < stages.size(); ++i) {
    ModuleCall stage_call(b, h);  // features.<2i+1> (an nn.Sequential): its input lives through the stage
    for (size_t j = 0; j < stages[i].size(); ++j) {
      const Block& blk = stages[i][j];
      b.begin_layer("features." + std::to_string(2 * i + 1) + "." + std::to_string(j), false);
      Conv dw = blk.dw;
      dw.args.channels_last = true;
      TensorId o = conv(b, dw, h);
      const Shape os = b.shape(o);
      {
        const TensorId permuted = b.view(o, {os[0], os[2], os[3], os[1]});
        ModuleCall ln_call(b, permuted);  // nn.LayerNorm's argument, past autocast's fp32 cast of it (inference)
        o = b.layer_norm(permuted, blk.ln.w, blk.ln.b);
      }
      o = b.linear(o, blk.w1, blk.b1);
      o = b.unary("gelu", o, true, false);
      o = b.linear(o, blk.w2, blk.b2);
      // layer_scale [C, 1, 1] times the permuted-back block output, whose strides are channels-last: C is the
      // fastest dimension, so the scale's gradient, a sum over (N, H, W), is a column reduction that stages its
      // partial sums (5.81 MiB for [10 * 14 * 14, 384] fp32 in the ConvNeXt-S stream).
      o = b.mul(blk.scale, b.view(o, os));
      b.broadcast_grad_staging(blk.scale, /*staged=*/true);
      o = stochastic_depth(b, o, blk.sd);
      h = b.inplace("add_", o, false, {h});
      b.end_layer();
    }
    stage_call.end();
    if (i < downs.size()) {
      ModuleCall down_call(b, h);  // the downsampler (LayerNorm2d, Conv2d): its input lives through the conv
      h = conv(b, downs[i].c, layer_norm_2d(b, downs[i].ln, h, /*contiguous_input=*/true));
    }
  }
  const TensorId pooled = b.mean_hw(h);
  ModuleCall head_call(b, pooled);  // the classifier (an nn.Sequential): its input lives through the Linear
  h = layer_norm_2d(b, head_ln, pooled, true);
  const TensorId logits = b.linear(b.view(h, {B, last}), fcw, fcb);
  head_call.end();
  classification_loss(b, logits, y);
}

}  // namespace memplan
