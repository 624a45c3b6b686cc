// torchvision ResNet (torchvision/models/resnet.py), training forward + F.cross_entropy(model(x), y):
//   conv1(7x7/2) bn relu_ maxpool(3x3/2) -> stages of Basic/Bottleneck blocks -> avgpool -> fc.
//   Block: conv bn relu_ ... bn; out += identity (in place); relu_. relu_ saves its (in-place) result,
//   batch_norm saves its input, so each conv-bn-relu keeps two tensors of its output size.
//   ResNeXt / Wide ResNet: Bottleneck.__init__'s width = int(planes * (width_per_group / 64)) * groups, conv2 a
//   3x3 with `groups` (resnext50_32x4d: 32 x 4, wide_resnet50_2: 1 x 128).
#include "engine/arch/builders.h"
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

namespace {
using vision::add_bn_buffers;
using vision::classification_loss;
using vision::conv_out;

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

// A grouped 3x3 (ResNeXt's conv2): weight [out, in / groups, 3, 3] through the general conv.
TensorId grouped_conv_bn(GraphBuilder& b, const ConvBn& c, TensorId x, int64_t stride, int64_t groups) {
  GraphBuilder::Conv2dArgs a;
  a.stride = stride;
  a.pad = 1;
  a.groups = groups;
  return b.batch_norm(b.conv2d_ex(x, c.w, kNoTensor, a), c.bn_w, c.bn_b);
}
}  // namespace

void build_resnet(GraphBuilder& b, const VisionSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, R = cfg.image_size;
  TensorId x = b.input({B, 3, R, R}, b.param_dtype());  // images in the model's dtype
  TensorId y = b.training() ? b.input({B}, DType::i64) : kNoTensor;
  ConvBn stem = make_conv_bn(b, "conv1", "bn1", 64, 3, 7);
  add_bn_buffers(b, "bn1", 64);
  TensorId h = b.inplace("relu_", conv_bn(b, stem, x, 64, 7, 2, 3), true);
  {
    const Shape& hs = b.shape(h);
    h = b.max_pool2d(h, {B, 64, conv_out(hs[2], 3, 2, 1), conv_out(hs[3], 3, 2, 1)});
  }
  int64_t in_ch = 64;
  const int64_t expansion = s.bottleneck ? 4 : 1;
  // Parameters in the order the modules construct them on the device: ResNet._make_layer builds a stage's
  // downsample before its first block, each BatchNorm2d its buffers right after its weight and bias
  // (wide_resnet50_2 recording: the 2 MiB downsample weight before the block's convs). The plain ResNets keep the
  // order their measured cases were matched with (validate output unchanged); ResNeXt / Wide ResNet use this one.
  const bool construction_order = s.groups != 1 || s.width_per_group != 64;
  for (size_t stage = 0; stage < s.blocks_per_stage.size(); ++stage) {
    vision::ModuleCall layer_call(b, h);  // `x = self.layer<i>(x)`: the stage's input lives through the stage
    const int64_t planes = 64 << stage;
    const int64_t width = static_cast<int64_t>(static_cast<double>(planes) * (static_cast<double>(s.width_per_group) / 64.0)) * s.groups;
    for (int64_t blk = 0; blk < s.blocks_per_stage[stage]; ++blk) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(blk) + ".";
      const int64_t stride = (blk == 0 && stage > 0) ? 2 : 1;
      const int64_t out_ch = planes * expansion;
      b.begin_layer(p.substr(0, p.size() - 1), false);
      vision::ModuleCall block_call(b, h);  // the block's input lives until it returns (past the downsample)
      TensorId identity = h;
      TensorId o;
      const bool has_ds = blk == 0 && (stride != 1 || in_ch != out_ch);
      ConvBn ds{};
      if (construction_order && has_ds) {
        ds = make_conv_bn(b, p + "downsample.0", p + "downsample.1", out_ch, in_ch, 1);
        add_bn_buffers(b, p + "downsample.1", out_ch);
      }
      if (s.bottleneck) {
        ConvBn c1{}, c2{}, c3{};
        if (construction_order) {
          c1 = make_conv_bn(b, p + "conv1", p + "bn1", width, in_ch, 1);
          add_bn_buffers(b, p + "bn1", width);
          c2 = make_conv_bn(b, p + "conv2", p + "bn2", width, width / s.groups, 3);
          add_bn_buffers(b, p + "bn2", width);
          c3 = make_conv_bn(b, p + "conv3", p + "bn3", out_ch, width, 1);
          add_bn_buffers(b, p + "bn3", out_ch);
        } else {
          c1 = make_conv_bn(b, p + "conv1", p + "bn1", width, in_ch, 1);
          c2 = make_conv_bn(b, p + "conv2", p + "bn2", width, width / s.groups, 3);
          c3 = make_conv_bn(b, p + "conv3", p + "bn3", out_ch, width, 1);
          for (const char* bn : {"bn1", "bn2", "bn3"}) add_bn_buffers(b, p + bn, bn[2] == '3' ? out_ch : width);
        }
        o = b.inplace("relu_", conv_bn(b, c1, h, width, 1, 1, 0), true);
        o = b.inplace("relu_", s.groups == 1 ? conv_bn(b, c2, o, width, 3, stride, 1)
                                             : grouped_conv_bn(b, c2, o, stride, s.groups), true);
        o = conv_bn(b, c3, o, out_ch, 1, 1, 0);
      } else {
        ConvBn c1 = make_conv_bn(b, p + "conv1", p + "bn1", width, in_ch, 3);
        ConvBn c2 = make_conv_bn(b, p + "conv2", p + "bn2", width, width, 3);
        add_bn_buffers(b, p + "bn1", width);
        add_bn_buffers(b, p + "bn2", width);
        o = b.inplace("relu_", conv_bn(b, c1, h, width, 3, stride, 1), true);
        o = conv_bn(b, c2, o, width, 3, 1, 1);
      }
      if (has_ds) {
        if (!construction_order) {
          ds = make_conv_bn(b, p + "downsample.0", p + "downsample.1", out_ch, in_ch, 1);
          add_bn_buffers(b, p + "downsample.1", out_ch);
        }
        identity = conv_bn(b, ds, h, out_ch, 1, stride, 0);
      }
      o = b.inplace("add_", o, false, {identity});
      h = b.inplace("relu_", o, true);
      block_call.end();
      b.end_layer();
      in_ch = out_ch;
    }
  }
  TensorId pooled = b.adaptive_avg_pool(h, {B, in_ch, 1, 1});
  TensorId logits = b.linear(b.view(pooled, {B, in_ch}), b.param("fc.weight", {s.num_classes, in_ch}),
                             b.param("fc.bias", {s.num_classes}));
  classification_loss(b, logits, y);
}

}  // namespace memplan
