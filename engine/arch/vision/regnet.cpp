// torchvision RegNet X / Y (torchvision/models/regnet.py), training forward + cross entropy.
//   stem SimpleStemIN: CNA(3, 32, 3x3/2, ReLU); trunk_output.block<i>: AnyStage of ResBottleneckBlock:
//     proj (1x1 CNA, stride, no activation) when width or stride changes - registered and run before f;
//     f = a (1x1 CNA ReLU), b (3x3 CNA ReLU, groups = w_b // group_width), [se: SqueezeExcitation(w_b,
//     round(se_ratio * width_in), ReLU not in place, Sigmoid)], c (1x1 CNA); `proj(x) + f(x)` or `x + f(x)`
//     (out of place), then ReLU(inplace=True). avgpool (a mean), flatten, fc.
//   Widths: BlockParams.from_init_params, computed in float32 as torch does (arange * w_a + w_0, log, round half
//   to even, quantised to 8), then _adjust_widths_groups_compatibilty.
#include <cmath>
#include <set>

#include "engine/arch/vision/vision_parts.h"
#include "engine/errors.h"

namespace memplan {

using namespace vision;

namespace {
struct StageParams {
  int64_t width, depth, group_width;
};

std::vector<StageParams> block_params(const VisionSpec& s) {
  const float w0 = static_cast<float>(s.regnet_w0), wa = static_cast<float>(s.regnet_wa);
  if (s.regnet_wa < 0 || s.regnet_w0 <= 0 || s.regnet_wm <= 1 || s.regnet_w0 % 8 != 0 || s.regnet_depth < 1)
    throw InputError("model.regnet", s.name, "invalid RegNet settings (w_a >= 0, w_0 > 0 a multiple of 8, w_m > 1)");
  const float log_wm = static_cast<float>(std::log(s.regnet_wm));
  std::vector<int64_t> widths;
  for (int64_t i = 0; i < s.regnet_depth; ++i) {
    const float cont = static_cast<float>(i) * wa + w0;
    const float cap = std::nearbyint(std::log(cont / w0) / log_wm);
    const float w = std::pow(static_cast<float>(s.regnet_wm), cap) * w0;
    widths.push_back(static_cast<int64_t>(std::nearbyint(w / 8.0f)) * 8);
  }
  std::vector<StageParams> out;
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i == 0 || widths[i] != widths[i - 1]) out.push_back({widths[i], 0, s.regnet_group_width});
    ++out.back().depth;
  }
  for (StageParams& st : out) {  // _adjust_widths_groups_compatibilty with bottleneck multiplier 1
    st.group_width = std::min(st.group_width, st.width);
    st.width = make_divisible(static_cast<double>(st.width), st.group_width);
  }
  return out;
}
}  // namespace

void build_regnet(GraphBuilder& b, const VisionSpec& s) {
  const int64_t B = b.config().batch_size;
  auto [x, y] = image_inputs(b);
  ConvBnAct stem = make_cna(b, "stem", 3, 32, 3, 2, 1, Act::relu_);
  struct Block {
    bool has_proj, has_se;
    ConvBnAct proj, a, bb, c;
    SqueezeExcite sq;
  };
  std::vector<std::vector<Block>> stages;
  int64_t cur = 32;
  const std::vector<StageParams> params = block_params(s);
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<Block> stage;
    for (int64_t j = 0; j < params[i].depth; ++j) {
      const std::string p = "trunk_output.block" + std::to_string(i + 1) + ".block" + std::to_string(i + 1) + "-" +
                            std::to_string(j) + ".";
      const int64_t w_in = j == 0 ? cur : params[i].width, w_out = params[i].width, stride = j == 0 ? 2 : 1;
      const int64_t w_b = w_out, g = w_b / params[i].group_width;
      Block blk;
      blk.has_proj = w_in != w_out || stride != 1;
      if (blk.has_proj) blk.proj = make_cna(b, p + "proj", w_in, w_out, 1, stride, 1, Act::none);
      blk.a = make_cna(b, p + "f.a", w_in, w_b, 1, 1, 1, Act::relu_);
      blk.bb = make_cna(b, p + "f.b", w_b, w_b, 3, stride, g, Act::relu_);
      blk.has_se = s.regnet_se_ratio > 0;
      if (blk.has_se)
        blk.sq = make_se(b, p + "f.se", w_b, static_cast<int64_t>(std::nearbyint(s.regnet_se_ratio * static_cast<double>(w_in))),
                         Act::relu, Act::sigmoid);
      blk.c = make_cna(b, p + "f.c", w_b, w_out, 1, 1, 1, Act::none);
      stage.push_back(blk);
    }
    stages.push_back(stage);
    cur = params[i].width;
  }
  TensorId fcw = b.param("fc.weight", {s.num_classes, cur}), fcb = b.param("fc.bias", {s.num_classes});

  TensorId h = cna(b, stem, x);
  ModuleCall trunk_call(b, h);  // trunk_output (an nn.Sequential of stages): its input lives through it
  for (size_t i = 0; i < stages.size(); ++i) {
    ModuleCall stage_call(b, h);  // block<i> (an AnyStage): its input lives through the stage
    for (size_t j = 0; j < stages[i].size(); ++j) {
      const Block& blk = stages[i][j];
      b.begin_layer("trunk_output.block" + std::to_string(i + 1) + "." + std::to_string(j), false);
      ModuleCall block_call(b, h);  // ResBottleneckBlock's input, until it returns
      TensorId id = blk.has_proj ? cna(b, blk.proj, h) : h;
      TensorId f = cna(b, blk.a, h);
      f = cna(b, blk.bb, f);
      if (blk.has_se) f = se(b, blk.sq, f);
      f = cna(b, blk.c, f);
      h = b.inplace("relu_", b.add(id, f), true);
      block_call.end();
      b.end_layer();
    }
  }
  trunk_call.end();
  h = b.view(b.mean_hw(h), {B, cur});
  classification_loss(b, b.linear(h, fcw, fcb), y);
}

}  // namespace memplan
