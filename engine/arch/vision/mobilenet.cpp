// torchvision MobileNet V2 / V3 (torchvision/models/mobilenetv2.py, mobilenetv3.py), training forward + cross
// entropy.
//   V2: features.0 Conv2dNormActivation(3, 32, stride 2, ReLU6); InvertedResidual: [1x1 expand CNA ReLU6],
//     depthwise 3x3 CNA ReLU6, 1x1 conv, BatchNorm; `x + self.conv(x)` (out of place) when stride 1 and
//     in == out; 1x1 CNA to 1280 ReLU6; adaptive_avg_pool2d(1) (a mean); Dropout(0.2) (fused); Linear.
//   V3: features.0 CNA(3, 16, stride 2, Hardswish); InvertedResidual: [1x1 expand CNA], depthwise kxk CNA
//     (ReLU or Hardswish), [SqueezeExcitation: ReLU (not in place), Hardsigmoid], 1x1 CNA; `result += input`;
//     1x1 CNA to 6x Hardswish; avgpool (a mean); classifier Linear, Hardswish(inplace), Dropout(inplace=True),
//     Linear. BatchNorm eps / momentum differ from V2, which changes no memory.
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

void build_mobilenet_v2(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  const double width = s.width_mult;
  static const int64_t kSetting[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                         {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t in = make_divisible(32 * width, 8);
  const int64_t last = make_divisible(1280 * std::max(1.0, width), 8);
  ConvBnAct stem = make_cna(b, "features.0", 3, in, 3, 2, 1, Act::relu6_);
  struct Block {
    bool expand, res;
    ConvBnAct e, dw;
    Conv proj;
    Bn bn;
  };
  std::vector<Block> blocks;
  int64_t idx = 1;
  for (const auto& row : kSetting) {
    const int64_t t = row[0], c = make_divisible(row[1] * width, 8), n = row[2], st = row[3];
    for (int64_t i = 0; i < n; ++i, ++idx) {
      const int64_t stride = i == 0 ? st : 1;
      const int64_t hidden = static_cast<int64_t>(std::nearbyint(static_cast<double>(in) * static_cast<double>(t)));
      const std::string p = "features." + std::to_string(idx) + ".conv.";
      Block blk;
      blk.expand = t != 1;
      blk.res = stride == 1 && in == c;
      int j = 0;
      if (blk.expand) blk.e = make_cna(b, p + std::to_string(j++), in, hidden, 1, 1, 1, Act::relu6_);
      blk.dw = make_cna(b, p + std::to_string(j++), hidden, hidden, 3, stride, hidden, Act::relu6_);
      blk.proj = make_conv(b, p + std::to_string(j++), hidden, c, 1, 1, 0);
      blk.bn = make_bn(b, p + std::to_string(j++), c);
      blocks.push_back(blk);
      in = c;
    }
  }
  ConvBnAct head = make_cna(b, "features." + std::to_string(idx), in, last, 1, 1, 1, Act::relu6_);
  TensorId fcw = b.param("classifier.1.weight", {s.num_classes, last});
  TensorId fcb = b.param("classifier.1.bias", {s.num_classes});

  TensorId h = cna(b, stem, x);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& blk = blocks[i];
    b.begin_layer("features." + std::to_string(i + 1), false);
    ModuleCall block_call(b, h);  // InvertedResidual's input, until it returns
    TensorId o = blk.expand ? cna(b, blk.e, h) : h;
    o = cna(b, blk.dw, o);
    o = b.batch_norm(conv(b, blk.proj, o), blk.bn.w, blk.bn.b);
    h = blk.res ? b.add(h, o) : o;
    block_call.end();
    b.end_layer();
  }
  h = cna(b, head, h);
  h = b.view(b.mean_hw(h), {B, last});
  ModuleCall head_call(b, h);  // the classifier (Dropout, Linear)
  h = b.dropout(h, s.dropout);
  const TensorId logits = b.linear(h, fcw, fcb);
  head_call.end();
  classification_loss(b, logits, y);
}

void build_mobilenet_v3(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  // _mobilenet_v3_conf: input, kernel, expanded, out, use_se, use_hs, stride (dilation 1, no reduced tail).
  struct Cfg {
    int64_t in, k, exp, out;
    bool se, hs;
    int64_t stride;
  };
  static const std::vector<Cfg> kLarge = {
      {16, 3, 16, 16, false, false, 1},   {16, 3, 64, 24, false, false, 2},   {24, 3, 72, 24, false, false, 1},
      {24, 5, 72, 40, true, false, 2},    {40, 5, 120, 40, true, false, 1},   {40, 5, 120, 40, true, false, 1},
      {40, 3, 240, 80, false, true, 2},   {80, 3, 200, 80, false, true, 1},   {80, 3, 184, 80, false, true, 1},
      {80, 3, 184, 80, false, true, 1},   {80, 3, 480, 112, true, true, 1},   {112, 3, 672, 112, true, true, 1},
      {112, 5, 672, 160, true, true, 2},  {160, 5, 960, 160, true, true, 1},  {160, 5, 960, 160, true, true, 1}};
  static const std::vector<Cfg> kSmall = {
      {16, 3, 16, 16, true, false, 2},  {16, 3, 72, 24, false, false, 2}, {24, 3, 88, 24, false, false, 1},
      {24, 5, 96, 40, true, true, 2},   {40, 5, 240, 40, true, true, 1},  {40, 5, 240, 40, true, true, 1},
      {40, 5, 120, 48, true, true, 1},  {48, 5, 144, 48, true, true, 1},  {48, 5, 288, 96, true, true, 2},
      {96, 5, 576, 96, true, true, 1},  {96, 5, 576, 96, true, true, 1}};
  const bool large = s.name == "mobilenet_v3_large";
  const auto& setting = large ? kLarge : kSmall;
  const int64_t last_channel = make_divisible((large ? 1280 : 1024) * s.width_mult, 8);
  const auto adj = [&](int64_t c) { return make_divisible(static_cast<double>(c) * s.width_mult, 8); };
  ConvBnAct stem = make_cna(b, "features.0", 3, adj(setting[0].in), 3, 2, 1, Act::hardswish_);
  struct Block {
    bool expand, has_se, res;
    ConvBnAct e, dw, proj;
    SqueezeExcite sq;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < setting.size(); ++i) {
    const Cfg& c = setting[i];
    const int64_t in = adj(c.in), exp = adj(c.exp), out = adj(c.out);
    const Act act = c.hs ? Act::hardswish_ : Act::relu_;
    const std::string p = "features." + std::to_string(i + 1) + ".block.";
    Block blk;
    blk.expand = exp != in;
    blk.has_se = c.se;
    blk.res = c.stride == 1 && in == out;
    int j = 0;
    if (blk.expand) blk.e = make_cna(b, p + std::to_string(j++), in, exp, 1, 1, 1, act);
    blk.dw = make_cna(b, p + std::to_string(j++), exp, exp, c.k, c.stride, exp, act);
    if (c.se) blk.sq = make_se(b, p + std::to_string(j++), exp, make_divisible(exp / 4, 8), Act::relu, Act::hardsigmoid);
    blk.proj = make_cna(b, p + std::to_string(j++), exp, out, 1, 1, 1, Act::none);
    blocks.push_back(blk);
  }
  const int64_t last_in = adj(setting.back().out), last_out = 6 * last_in;
  ConvBnAct head = make_cna(b, "features." + std::to_string(setting.size() + 1), last_in, last_out, 1, 1, 1,
                            Act::hardswish_);
  TensorId fc1w = b.param("classifier.0.weight", {last_channel, last_out});
  TensorId fc1b = b.param("classifier.0.bias", {last_channel});
  TensorId fc2w = b.param("classifier.3.weight", {s.num_classes, last_channel});
  TensorId fc2b = b.param("classifier.3.bias", {s.num_classes});

  TensorId h = cna(b, stem, x);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& blk = blocks[i];
    b.begin_layer("features." + std::to_string(i + 1), false);
    ModuleCall block_call(b, h);  // InvertedResidual's input, until it returns
    TensorId o = blk.expand ? cna(b, blk.e, h) : h;
    o = cna(b, blk.dw, o);
    if (blk.has_se) o = se(b, blk.sq, o);
    o = cna(b, blk.proj, o);
    h = blk.res ? b.inplace("add_", o, false, {h}) : o;
    block_call.end();
    b.end_layer();
  }
  h = cna(b, head, h);
  h = b.view(b.mean_hw(h), {B, last_out});
  ModuleCall head_call(b, h);  // the classifier (Linear, Hardswish, Dropout, Linear)
  h = activation(b, b.linear(h, fc1w, fc1b), Act::hardswish_);
  h = dropout_inplace(b, h, s.dropout);
  const TensorId logits = b.linear(h, fc2w, fc2b);
  head_call.end();
  classification_loss(b, logits, y);
}

}  // namespace memplan
