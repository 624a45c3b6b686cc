// build_vision: the torchvision builder of a VisionSpec's family (one file per torchvision model file).
#include "engine/arch/builders.h"
#include "engine/arch/vision/vision_parts.h"

namespace memplan {

void build_vision(GraphBuilder& b, const VisionSpec& s) {
  using F = VisionSpec::Family;
  switch (s.family) {
    case F::resnet: return build_resnet(b, s);
    case F::vit: return build_vit(b, s);
    case F::convnext: return build_convnext(b, s);
    case F::efficientnet: return build_efficientnet(b, s);
    case F::mobilenet_v2: return build_mobilenet_v2(b, s);
    case F::mobilenet_v3: return build_mobilenet_v3(b, s);
    case F::swin: return build_swin(b, s);
    case F::densenet: return build_densenet(b, s);
    case F::vgg: return build_vgg(b, s);
    case F::regnet: return build_regnet(b, s);
  }
}

const char* vision_family_name(VisionSpec::Family f) {
  using F = VisionSpec::Family;
  switch (f) {
    case F::resnet: return "resnet";
    case F::vit: return "vit";
    case F::convnext: return "convnext";
    case F::efficientnet: return "efficientnet";
    case F::mobilenet_v2: return "mobilenet_v2";
    case F::mobilenet_v3: return "mobilenet_v3";
    case F::swin: return "swin";
    case F::densenet: return "densenet";
    case F::vgg: return "vgg";
    case F::regnet: return "regnet";
  }
  return "vision";
}

}  // namespace memplan
