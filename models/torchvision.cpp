// torchvision model table. Values as in torchvision 0.2x:
//   resnet18/34: BasicBlock, [2,2,2,2] / [3,4,6,3]; resnet50/101/152: Bottleneck, [3,4,6,3] / [3,4,23,3] /
//   [3,8,36,3]; vit_b_16/b_32: 12 layers, 12 heads, hidden 768, mlp 3072, patch 16/32; vit_l_16: 24 layers,
//   16 heads, hidden 1024, mlp 4096. All default to 224x224 images.
#include "models/torchvision.h"

#include "engine/errors.h"

namespace memplan {
namespace {

VisionSpec resnet(const char* name, std::vector<int64_t> blocks, bool bottleneck) {
  VisionSpec s;
  s.family = VisionSpec::Family::resnet;
  s.name = name;
  s.blocks_per_stage = std::move(blocks);
  s.bottleneck = bottleneck;
  return s;
}

VisionSpec vit(const char* name, int64_t patch, int64_t layers, int64_t heads, int64_t hidden, int64_t mlp) {
  VisionSpec s;
  s.family = VisionSpec::Family::vit;
  s.name = name;
  s.bottleneck = false;
  s.patch_size = patch;
  s.num_layers = layers;
  s.num_heads = heads;
  s.hidden_dim = hidden;
  s.mlp_dim = mlp;
  return s;
}

VisionSpec base(const char* name, VisionSpec::Family f) {
  VisionSpec s;
  s.family = f;
  s.name = name;
  s.bottleneck = false;
  return s;
}

// resnext / wide_resnet: ResNet's Bottleneck with groups and width_per_group (resnet.py _resnet kwargs).
VisionSpec resnext(const char* name, std::vector<int64_t> blocks, int64_t groups, int64_t width_per_group) {
  VisionSpec s = resnet(name, std::move(blocks), true);
  s.groups = groups;
  s.width_per_group = width_per_group;
  return s;
}

// convnext.py: CNBlockConfig channels / depths and the model function's stochastic_depth_prob default.
VisionSpec convnext(const char* name, std::vector<int64_t> depths, std::vector<int64_t> channels, double sd) {
  VisionSpec s = base(name, VisionSpec::Family::convnext);
  s.blocks_per_stage = std::move(depths);
  s.stage_channels = std::move(channels);
  s.stochastic_depth_prob = sd;
  return s;
}

// efficientnet.py: width / depth multipliers and dropout of efficientnet_b*; v2 variants use their fixed table.
VisionSpec effnet(const char* name, double width, double depth, double dropout, bool v2 = false) {
  VisionSpec s = base(name, VisionSpec::Family::efficientnet);
  s.width_mult = width;
  s.depth_mult = depth;
  s.dropout = dropout;
  s.stochastic_depth_prob = 0.2;
  s.v2 = v2;
  return s;
}

VisionSpec mobilenet(const char* name, VisionSpec::Family f) {
  VisionSpec s = base(name, f);
  s.dropout = 0.2;
  return s;
}

// swin_transformer.py model functions: embed_dim, depths, num_heads, window_size, stochastic_depth_prob.
VisionSpec swin(const char* name, bool v2, int64_t embed, std::vector<int64_t> depths, std::vector<int64_t> heads,
                double sd) {
  VisionSpec s = base(name, VisionSpec::Family::swin);
  s.v2 = v2;
  s.stage_channels = {embed};
  s.blocks_per_stage = std::move(depths);
  s.stage_heads = std::move(heads);
  s.window_size = v2 ? 8 : 7;
  s.stochastic_depth_prob = sd;
  return s;
}

// densenet.py _densenet(growth_rate, block_config, num_init_features); bn_size 4, drop_rate 0.
VisionSpec densenet(const char* name, int64_t growth, std::vector<int64_t> blocks, int64_t init) {
  VisionSpec s = base(name, VisionSpec::Family::densenet);
  s.growth_rate = growth;
  s.blocks_per_stage = std::move(blocks);
  s.num_init_features = init;
  return s;
}

// vgg.py cfgs ("M" written as 0), batch_norm, dropout 0.5.
VisionSpec vgg(const char* name, char cfg, bool bn) {
  static const std::vector<int64_t> kA = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
  static const std::vector<int64_t> kB = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
  static const std::vector<int64_t> kD = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
  static const std::vector<int64_t> kE = {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                                          512, 512, 512, 512, 0,   512, 512, 512, 512, 0};
  VisionSpec s = base(name, VisionSpec::Family::vgg);
  s.vgg_cfg = cfg == 'A' ? kA : cfg == 'B' ? kB : cfg == 'D' ? kD : kE;
  s.batch_norm = bn;
  s.dropout = 0.5;
  return s;
}

// regnet.py model functions: BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width[, se_ratio 0.25]).
VisionSpec regnet(const char* name, int64_t depth, int64_t w0, double wa, double wm, int64_t gw, double se) {
  VisionSpec s = base(name, VisionSpec::Family::regnet);
  s.regnet_depth = depth;
  s.regnet_w0 = w0;
  s.regnet_wa = wa;
  s.regnet_wm = wm;
  s.regnet_group_width = gw;
  s.regnet_se_ratio = se;
  return s;
}

const std::vector<VisionSpec>& table() {
  using F = VisionSpec::Family;
  static const std::vector<VisionSpec> kTable = {
      resnet("resnet18", {2, 2, 2, 2}, false),   resnet("resnet34", {3, 4, 6, 3}, false),
      resnet("resnet50", {3, 4, 6, 3}, true),    resnet("resnet101", {3, 4, 23, 3}, true),
      resnet("resnet152", {3, 8, 36, 3}, true),  vit("vit_b_16", 16, 12, 12, 768, 3072),
      vit("vit_b_32", 32, 12, 12, 768, 3072),    vit("vit_l_16", 16, 24, 16, 1024, 4096),
      resnext("resnext50_32x4d", {3, 4, 6, 3}, 32, 4),
      resnext("resnext101_32x8d", {3, 4, 23, 3}, 32, 8),
      resnext("resnext101_64x4d", {3, 4, 23, 3}, 64, 4),
      resnext("wide_resnet50_2", {3, 4, 6, 3}, 1, 128),
      resnext("wide_resnet101_2", {3, 4, 23, 3}, 1, 128),
      convnext("convnext_tiny", {3, 3, 9, 3}, {96, 192, 384, 768}, 0.1),
      convnext("convnext_small", {3, 3, 27, 3}, {96, 192, 384, 768}, 0.4),
      convnext("convnext_base", {3, 3, 27, 3}, {128, 256, 512, 1024}, 0.5),
      convnext("convnext_large", {3, 3, 27, 3}, {192, 384, 768, 1536}, 0.5),
      effnet("efficientnet_b0", 1.0, 1.0, 0.2), effnet("efficientnet_b1", 1.0, 1.1, 0.2),
      effnet("efficientnet_b2", 1.1, 1.2, 0.3), effnet("efficientnet_b3", 1.2, 1.4, 0.3),
      effnet("efficientnet_b4", 1.4, 1.8, 0.4), effnet("efficientnet_b5", 1.6, 2.2, 0.4),
      effnet("efficientnet_b6", 1.8, 2.6, 0.5), effnet("efficientnet_b7", 2.0, 3.1, 0.5),
      effnet("efficientnet_v2_s", 1.0, 1.0, 0.2, true), effnet("efficientnet_v2_m", 1.0, 1.0, 0.3, true),
      effnet("efficientnet_v2_l", 1.0, 1.0, 0.4, true),
      mobilenet("mobilenet_v2", F::mobilenet_v2), mobilenet("mobilenet_v3_small", F::mobilenet_v3),
      mobilenet("mobilenet_v3_large", F::mobilenet_v3),
      swin("swin_t", false, 96, {2, 2, 6, 2}, {3, 6, 12, 24}, 0.2),
      swin("swin_s", false, 96, {2, 2, 18, 2}, {3, 6, 12, 24}, 0.3),
      swin("swin_b", false, 128, {2, 2, 18, 2}, {4, 8, 16, 32}, 0.5),
      swin("swin_v2_t", true, 96, {2, 2, 6, 2}, {3, 6, 12, 24}, 0.2),
      swin("swin_v2_s", true, 96, {2, 2, 18, 2}, {3, 6, 12, 24}, 0.3),
      swin("swin_v2_b", true, 128, {2, 2, 18, 2}, {4, 8, 16, 32}, 0.5),
      densenet("densenet121", 32, {6, 12, 24, 16}, 64), densenet("densenet161", 48, {6, 12, 36, 24}, 96),
      densenet("densenet169", 32, {6, 12, 32, 32}, 64), densenet("densenet201", 32, {6, 12, 48, 32}, 64),
      vgg("vgg11", 'A', false), vgg("vgg11_bn", 'A', true), vgg("vgg13", 'B', false), vgg("vgg13_bn", 'B', true),
      vgg("vgg16", 'D', false), vgg("vgg16_bn", 'D', true), vgg("vgg19", 'E', false), vgg("vgg19_bn", 'E', true),
      regnet("regnet_y_400mf", 16, 48, 27.89, 2.09, 8, 0.25),
      regnet("regnet_y_800mf", 14, 56, 38.84, 2.4, 16, 0.25),
      regnet("regnet_y_1_6gf", 27, 48, 20.71, 2.65, 24, 0.25),
      regnet("regnet_y_3_2gf", 21, 80, 42.63, 2.66, 24, 0.25),
      regnet("regnet_y_8gf", 17, 192, 76.82, 2.19, 56, 0.25),
      regnet("regnet_y_16gf", 18, 200, 106.23, 2.48, 112, 0.25),
      regnet("regnet_y_32gf", 20, 232, 115.89, 2.53, 232, 0.25),
      regnet("regnet_y_128gf", 27, 456, 160.83, 2.52, 264, 0.25),
      regnet("regnet_x_400mf", 22, 24, 24.48, 2.54, 16, 0),
      regnet("regnet_x_800mf", 16, 56, 35.73, 2.28, 16, 0),
      regnet("regnet_x_1_6gf", 18, 80, 34.01, 2.25, 24, 0),
      regnet("regnet_x_3_2gf", 25, 88, 26.31, 2.25, 48, 0),
      regnet("regnet_x_8gf", 23, 80, 49.56, 2.88, 120, 0),
      regnet("regnet_x_16gf", 22, 216, 55.59, 2.1, 128, 0),
      regnet("regnet_x_32gf", 23, 320, 69.86, 2.0, 168, 0),
  };
  return kTable;
}

}  // namespace

const std::vector<std::string>& torchvision_model_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (const auto& s : table()) v.push_back(s.name);
    return v;
  }();
  return kNames;
}

VisionSpec vision_spec_for(const std::string& name, int64_t num_classes) {
  if (num_classes < 1)
    throw InputError("num_classes", std::to_string(num_classes), "must be a positive integer");
  for (const auto& s : table()) {
    if (s.name != name) continue;
    VisionSpec out = s;
    out.num_classes = num_classes;
    return out;
  }
  std::string known;
  for (const auto& n : torchvision_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("model", name, "unknown torchvision model; known: " + known);
}

}  // namespace memplan
