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

const std::vector<VisionSpec>& table() {
  static const std::vector<VisionSpec> kTable = {
      resnet("resnet18", {2, 2, 2, 2}, false),   resnet("resnet34", {3, 4, 6, 3}, false),
      resnet("resnet50", {3, 4, 6, 3}, true),    resnet("resnet101", {3, 4, 23, 3}, true),
      resnet("resnet152", {3, 8, 36, 3}, true),  vit("vit_b_16", 16, 12, 12, 768, 3072),
      vit("vit_b_32", 32, 12, 12, 768, 3072),    vit("vit_l_16", 16, 24, 16, 1024, 4096),
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
