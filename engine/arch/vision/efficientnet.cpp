// torchvision EfficientNet B0-B7 and V2 S/M/L (torchvision/models/efficientnet.py), training forward + cross
// entropy.
//   features.0 Conv2dNormActivation(3, c0, 3x3/2, SiLU); stages of MBConv / FusedMBConv; 1x1 CNA to
//   last_channel (V2: 1280, V1: 4x) with SiLU; avgpool (a mean); classifier Dropout(p, inplace=True), Linear.
//   MBConv: [1x1 expand CNA SiLU], depthwise kxk CNA SiLU, SqueezeExcitation(exp, max(1, in // 4), SiLU in place,
//     Sigmoid) (scale * input), 1x1 project CNA; with a residual: StochasticDepth(p, "row"), `result += input`.
//   FusedMBConv: [kxk expand CNA SiLU, 1x1 project CNA] or a single kxk CNA SiLU; residual as MBConv.
//   Block i of n gets stochastic depth p = stochastic_depth_prob * i / n (block 0 none). Every SiLU of a
//   Conv2dNormActivation is in place (silu_, a saved clone of its input).
#include <cmath>

#include "engine/arch/vision/vision_parts.h"

namespace memplan {

using namespace vision;

namespace {
struct StageCfg {
  bool fused;
  double expand;
  int64_t kernel, stride, in, out, layers;
};
}  // namespace

void build_efficientnet(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  std::vector<StageCfg> setting;
  int64_t last_channel = 0;
  const auto adj = [&](double c) { return make_divisible(c * s.width_mult, 8); };
  const auto depth = [&](int64_t n) { return static_cast<int64_t>(std::ceil(static_cast<double>(n) * s.depth_mult)); };
  if (!s.v2) {
    const int64_t rows[7][6] = {{1, 3, 1, 32, 16, 1},  {6, 3, 2, 16, 24, 2},   {6, 5, 2, 24, 40, 2},
                                {6, 3, 2, 40, 80, 3},  {6, 5, 1, 80, 112, 3},  {6, 5, 2, 112, 192, 4},
                                {6, 3, 1, 192, 320, 1}};
    for (const auto& r : rows)
      setting.push_back({false, static_cast<double>(r[0]), r[1], r[2], adj(static_cast<double>(r[3])),
                         adj(static_cast<double>(r[4])), depth(r[5])});
  } else if (s.name == "efficientnet_v2_s") {
    setting = {{true, 1, 3, 1, 24, 24, 2},   {true, 4, 3, 2, 24, 48, 4},    {true, 4, 3, 2, 48, 64, 4},
               {false, 4, 3, 2, 64, 128, 6}, {false, 6, 3, 1, 128, 160, 9}, {false, 6, 3, 2, 160, 256, 15}};
    last_channel = 1280;
  } else if (s.name == "efficientnet_v2_m") {
    setting = {{true, 1, 3, 1, 24, 24, 3},     {true, 4, 3, 2, 24, 48, 5},      {true, 4, 3, 2, 48, 80, 5},
               {false, 4, 3, 2, 80, 160, 7},   {false, 6, 3, 1, 160, 176, 14},  {false, 6, 3, 2, 176, 304, 18},
               {false, 6, 3, 1, 304, 512, 5}};
    last_channel = 1280;
  } else {
    setting = {{true, 1, 3, 1, 32, 32, 4},     {true, 4, 3, 2, 32, 64, 7},      {true, 4, 3, 2, 64, 96, 7},
               {false, 4, 3, 2, 96, 192, 10},  {false, 6, 3, 1, 192, 224, 19},  {false, 6, 3, 2, 224, 384, 25},
               {false, 6, 3, 1, 384, 640, 7}};
    last_channel = 1280;
  }
  const int64_t c0 = setting.front().in;
  ConvBnAct stem = make_cna(b, "features.0", 3, c0, 3, 2, 1, Act::silu_);
  struct Block {
    bool fused, expand, res;
    double sd;
    ConvBnAct e, dw, proj;
    SqueezeExcite sq;
  };
  std::vector<std::vector<Block>> stages;
  int64_t total = 0;
  for (const auto& c : setting) total += c.layers;
  int64_t id = 0;
  for (size_t si = 0; si < setting.size(); ++si) {
    std::vector<Block> stage;
    for (int64_t i = 0; i < setting[si].layers; ++i, ++id) {
      StageCfg c = setting[si];
      if (i > 0) c.in = c.out, c.stride = 1;
      const std::string p = "features." + std::to_string(si + 1) + "." + std::to_string(i) + ".block.";
      const int64_t exp = make_divisible(static_cast<double>(c.in) * c.expand, 8);
      Block blk;
      blk.fused = c.fused;
      blk.expand = exp != c.in;
      blk.res = c.stride == 1 && c.in == c.out;
      blk.sd = s.stochastic_depth_prob * static_cast<double>(id) / static_cast<double>(total);
      if (c.fused) {
        if (blk.expand) {
          blk.e = make_cna(b, p + "0", c.in, exp, c.kernel, c.stride, 1, Act::silu_);
          blk.proj = make_cna(b, p + "1", exp, c.out, 1, 1, 1, Act::none);
        } else {
          blk.e = make_cna(b, p + "0", c.in, c.out, c.kernel, c.stride, 1, Act::silu_);
        }
      } else {
        int j = 0;
        if (blk.expand) blk.e = make_cna(b, p + std::to_string(j++), c.in, exp, 1, 1, 1, Act::silu_);
        blk.dw = make_cna(b, p + std::to_string(j++), exp, exp, c.kernel, c.stride, exp, Act::silu_);
        blk.sq = make_se(b, p + std::to_string(j++), exp, std::max<int64_t>(1, c.in / 4), Act::silu_, Act::sigmoid);
        blk.proj = make_cna(b, p + std::to_string(j++), exp, c.out, 1, 1, 1, Act::none);
      }
      stage.push_back(blk);
    }
    stages.push_back(stage);
  }
  const int64_t last_in = setting.back().out;
  const int64_t last_out = last_channel > 0 ? last_channel : 4 * last_in;
  ConvBnAct head = make_cna(b, "features." + std::to_string(setting.size() + 1), last_in, last_out, 1, 1, 1,
                            Act::silu_);
  TensorId fcw = b.param("classifier.1.weight", {s.num_classes, last_out});
  TensorId fcb = b.param("classifier.1.bias", {s.num_classes});

  TensorId h = cna(b, stem, x);
  for (size_t si = 0; si < stages.size(); ++si) {
    ModuleCall stage_call(b, h);  // features.<i> (an nn.Sequential): its input lives through the stage
    for (size_t i = 0; i < stages[si].size(); ++i) {
      const Block& blk = stages[si][i];
      b.begin_layer("features." + std::to_string(si + 1) + "." + std::to_string(i), false);
      ModuleCall block_call(b, h);  // MBConv.forward's input, until the block returns (residual or not)
      TensorId o;
      if (blk.fused) {
        o = cna(b, blk.e, h);
        if (blk.expand) o = cna(b, blk.proj, o);
      } else {
        o = blk.expand ? cna(b, blk.e, h) : h;
        o = cna(b, blk.dw, o);
        o = se(b, blk.sq, o);
        o = cna(b, blk.proj, o);
      }
      if (blk.res) {
        o = stochastic_depth(b, o, blk.sd);
        o = b.inplace("add_", o, false, {h});
      }
      h = o;
      block_call.end();
      b.end_layer();
    }
  }
  h = cna(b, head, h);
  h = b.view(b.mean_hw(h), {B, last_out});
  ModuleCall head_call(b, h);  // the classifier (Dropout, Linear): its input lives through the Linear
  h = dropout_inplace(b, h, s.dropout);
  const TensorId logits = b.linear(h, fcw, fcb);
  head_call.end();
  classification_loss(b, logits, y);
}

}  // namespace memplan
